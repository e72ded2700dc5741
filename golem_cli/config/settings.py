"""The user's settings: ``config.toml`` in the config directory, then the environment.

The file is optional. Its shape::

    model = "openai:gpt-4o-mini"   # "provider:model"
    max_messages = 20              # how many messages a run sends (trim_history)

    [providers.openai]             # handed to the provider layer as a plain dict
    base_url = "https://api.openai.com/v1"

``GOLEM_MODEL`` overrides ``model``. A command-line flag overrides both; that is the CLI's
business. Unknown top-level keys are kept in ``Settings.unknown_keys`` so the CLI can warn
about a typo instead of silently ignoring it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golem_cli.config import paths
from golem_cli.core.errors import GolemError

MODEL_ENV = "GOLEM_MODEL"
DEFAULT_MAX_MESSAGES = 20
KNOWN_KEYS = frozenset({"model", "max_messages", "providers"})


class ConfigError(GolemError):
    """The configuration file cannot be read or holds a value of the wrong type."""


@dataclass(frozen=True)
class Settings:
    """What the user configured. ``model`` is None when nothing chose one (the CLI then
    falls back to the offline echo model)."""

    model: str | None = None
    max_messages: int = DEFAULT_MAX_MESSAGES
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: Path | None = None
    unknown_keys: tuple[str, ...] = ()

    def provider(self, name: str) -> dict[str, Any]:
        """The ``[providers.<name>]`` table, empty when absent."""
        return dict(self.providers.get(name, {}))


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read ``path`` (default: the user's ``config.toml``) and apply the environment.

    A missing file is not an error. A file that is not valid TOML, or a value of the wrong
    type, raises ``ConfigError`` naming the file and the problem.
    """
    env = os.environ if env is None else env
    path = paths.config_file() if path is None else path
    raw = _read_toml(path)
    settings = _from_table(raw, path if raw is not None else None)
    model = env.get(MODEL_ENV, "").strip()
    if model:
        settings = Settings(
            model=model,
            max_messages=settings.max_messages,
            providers=settings.providers,
            source=settings.source,
            unknown_keys=settings.unknown_keys,
        )
    return settings


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    import tomllib  # only when there is a file to parse

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None


def _from_table(raw: dict[str, Any] | None, source: Path | None) -> Settings:
    if raw is None:
        return Settings()
    where = str(source)
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(f'{where}: "model" must be a non-empty string like "openai:gpt-4o-mini"')
    max_messages = raw.get("max_messages", DEFAULT_MAX_MESSAGES)
    if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1:
        raise ConfigError(f'{where}: "max_messages" must be a whole number of at least 1')
    providers = raw.get("providers", {})
    if not isinstance(providers, dict):
        raise ConfigError(f"{where}: [providers] must be a table of [providers.<name>] tables")
    for name, table in providers.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: providers.{name} must be a table")
    return Settings(
        model=model.strip() if isinstance(model, str) else None,
        max_messages=max_messages,
        providers={name: dict(table) for name, table in providers.items()},
        source=source,
        unknown_keys=tuple(sorted(k for k in raw if k not in KNOWN_KEYS)),
    )
