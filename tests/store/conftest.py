from __future__ import annotations

import pytest
from golem_cli.store import Store


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path / "home"))
    return Store(tmp_path / "home")
