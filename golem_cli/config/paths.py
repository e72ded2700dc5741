"""golem's directories: the platform's user data and config directories, or ``GOLEM_HOME``.

``GOLEM_HOME`` replaces all of them at once (tests, portable installs): data and config then
live side by side in that one directory. Nothing here creates a directory; the store creates
what it writes into, with mode 0700.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "golem"
HOME_ENV = "GOLEM_HOME"
CONFIG_FILE_NAME = "config.toml"


def golem_home() -> Path | None:
    """The ``GOLEM_HOME`` override as an absolute path, or None when it is not set."""
    value = os.environ.get(HOME_ENV, "")
    if not value:
        return None
    return Path(value).expanduser().absolute()


def data_dir() -> Path:
    """Where conversations and other user data live."""
    home = golem_home()
    if home is not None:
        return home
    import platformdirs  # imported only here: GOLEM_HOME users never pay for it

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """Where ``config.toml`` lives."""
    home = golem_home()
    if home is not None:
        return home
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Where golem keeps what it can recompute (deleting it is always safe)."""
    home = golem_home()
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def state_dir() -> Path:
    """What this machine's golem alone should know, apart from the conversations users sync
    between machines: the conversation it wrote last (which ``last`` names) and tool servers'
    OAuth tokens."""
    home = golem_home()
    if home is not None:
        return home / "state"
    import platformdirs

    return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def config_file() -> Path:
    """The user's configuration file (it need not exist)."""
    return config_dir() / CONFIG_FILE_NAME


def conversations_dir() -> Path:
    """One JSON file per conversation, plus its metadata sidecar."""
    return data_dir() / "conversations"


def input_history_file() -> Path:
    """The REPL's persistent input history (prompt-toolkit ``FileHistory``)."""
    return data_dir() / "input_history"
