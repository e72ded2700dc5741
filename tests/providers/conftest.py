"""Fixtures for the adapter tests (the server fixtures live in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.providerserver.recordings import available


@pytest.fixture
def recordings() -> None:
    if not available():
        pytest.skip("shared/recordings is not beside the checkout")
