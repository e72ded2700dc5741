"""Where golem keeps things: GOLEM_HOME overrides every directory; otherwise platformdirs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from golem_cli.config import paths


def test_golem_home_overrides_every_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path / "home"))
    home = tmp_path / "home"
    assert paths.data_dir() == home
    assert paths.config_dir() == home
    assert paths.config_file() == home / "config.toml"
    assert paths.conversations_dir() == home / "conversations"
    assert paths.input_history_file() == home / "input_history"


def test_relative_and_tilde_golem_home_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOLEM_HOME", "rel")
    assert paths.data_dir() == tmp_path / "rel"
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("GOLEM_HOME", "~/g")
    assert paths.data_dir() == tmp_path / "user" / "g"


def test_platform_directories_without_golem_home(tmp_path, monkeypatch):
    monkeypatch.delenv("GOLEM_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    if sys.platform.startswith("linux"):
        assert paths.data_dir() == tmp_path / "data" / "golem"
        assert paths.config_file() == tmp_path / "config" / "golem" / "config.toml"
    else:  # pragma: no cover - other platforms: just a golem directory somewhere
        assert paths.data_dir().name == "golem"


def test_nothing_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path / "home"))
    paths.data_dir(), paths.config_file(), paths.conversations_dir()
    assert not (tmp_path / "home").exists()


def test_importing_config_is_cheap():
    """paths must not pull platformdirs or tomllib in at import time."""
    code = (
        "import sys, golem_cli.config.paths, golem_cli.config.settings;"
        "print('platformdirs' in sys.modules, 'tomllib' in sys.modules, 'typer' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]
    assert Path(paths.__file__).exists()
