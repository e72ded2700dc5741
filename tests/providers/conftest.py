"""Fixtures: one loopback provider server per session, reset before every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providerserver import ProviderServer
from tests.providerserver.recordings import available


@pytest.fixture(scope="session")
def _session_server() -> Iterator[ProviderServer]:
    server = ProviderServer().start_in_thread()
    yield server
    server.stop()


@pytest.fixture
def server(_session_server: ProviderServer) -> Iterator[ProviderServer]:
    _session_server.reset()
    yield _session_server
    _session_server.reset()


@pytest.fixture
def recordings() -> None:
    if not available():
        pytest.skip("shared/recordings is not beside the checkout")
