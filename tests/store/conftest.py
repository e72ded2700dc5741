from __future__ import annotations

from pathlib import Path

import pytest
from golem_cli.store import Store


@pytest.fixture
def store(home: Path) -> Store:
    """The store in the test's GOLEM_HOME (tests/conftest.py)."""
    return Store(home)
