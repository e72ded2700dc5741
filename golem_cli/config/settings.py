"""The user's settings: ``config.toml`` in the config directory, then the environment.

The file is optional. Its shape::

    model = "openai:gpt-4o-mini"   # "provider:model"
    max_messages = 20              # how many messages a run sends (trim_history)
    context_tokens = 8000          # or: bound what a run sends by tokens (budget_history)

    [providers.openai]             # handed to the provider layer as a plain dict
    base_url = "https://api.openai.com/v1"
    temperature = 0.7              # model options, for every model of the provider

    [models."openai:o3-mini"]      # model options for one model (win over the provider's)
    reasoning_effort = "high"

    tools = ["fs"]                 # tools every chat enables (names or groups)
    allow = ["read_file"]          # tools that run without asking
    tool_root = "."                # where file tools and commands work (default: the cwd)
    tool_output_limit = 30000      # characters of one tool result sent to the model
    command_timeout = 120          # seconds before run_command kills a command

    [mcp_servers.github]           # a tool server (Model Context Protocol), Codex CLI's shape
    command = "npx"                # stdio: command, args, env, env_vars, cwd
    args = ["-y", "@modelcontextprotocol/server-github"]
    allow = ["get_*", "search_*"]  # its tools that run without asking
    # url = "http://127.0.0.1:8000/mcp"   # or streamable HTTP: url, headers, bearer_token_env_var

``GOLEM_MODEL`` overrides ``model``. A command-line flag overrides both; that is the CLI's
business. Unknown top-level keys are kept in ``Settings.unknown_keys`` so the CLI can warn
about a typo instead of silently ignoring it.

The file is checked by the pydantic model in ``schema.py``, whose errors name the file and the
key. That check costs about 150 ms (mostly importing pydantic), more than ``golem chat`` may
take to show its prompt, so the user's own file is checked only when it changed: a file that
passed leaves its digest in the cache directory (``CHECKED_STAMP``), and the next start-up
with the same bytes (and the same schema) skips pydantic. See ADR 0008.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golem_cli.config import paths
from golem_cli.core.errors import GolemError

MODEL_ENV = "GOLEM_MODEL"
CHECKED_STAMP = "config-checked"  # in the cache directory: digest of the file that last passed
DEFAULT_MAX_MESSAGES = 20
KNOWN_KEYS = frozenset(
    {"model", "max_messages", "context_tokens", "providers", "models", "tools", "allow", "tool_root",
     "tool_output_limit", "command_timeout", "mcp_servers"}
)  # fmt: skip
DEFAULT_TOOL_OUTPUT_LIMIT = 30_000
DEFAULT_COMMAND_TIMEOUT = 120.0


class ConfigError(GolemError):
    """The configuration file cannot be read or holds a value of the wrong type (exit 1; the
    config branch of golem's one error tree, ``golem_cli.core.errors``)."""


@dataclass(frozen=True)
class Settings:
    """What the user configured. ``model`` is None when nothing chose one (the CLI then
    falls back to the offline echo model)."""

    model: str | None = None
    max_messages: int = DEFAULT_MAX_MESSAGES
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: Path | None = None
    unknown_keys: tuple[str, ...] = ()
    context_tokens: int | None = None  # a token budget for what a run sends, instead of max_messages
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # options per "provider:model"
    tools: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    tool_root: str | None = None
    tool_output_limit: int = DEFAULT_TOOL_OUTPUT_LIMIT
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    #: ``[mcp_servers.NAME]`` tables as plain dicts (the tools layer reads them).
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def provider(self, name: str) -> dict[str, Any]:
        """The ``[providers.<name>]`` table, empty when absent."""
        return dict(self.providers.get(name, {}))


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read ``path`` (default: the user's ``config.toml``) and apply the environment.

    A missing file is not an error. A file that is not valid TOML, or a value of the wrong
    type, raises ``ConfigError`` naming the file and the key. Only the user's own file is
    checked from the cache (an explicit ``path`` is always checked).
    """
    env = os.environ if env is None else env
    stamp = paths.cache_dir() / CHECKED_STAMP if path is None else None
    path = paths.config_file() if path is None else path
    data = _read(path)
    if data is None:
        settings = Settings()
    else:
        raw = _parse(data, path)
        check(raw, data, path, stamp)
        settings = _from_table(raw, path)
    model = env.get(MODEL_ENV, "").strip()
    if model:
        settings = dataclasses.replace(settings, model=model)
    return settings


def read_table(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """The file's bytes and its parsed table, unchecked (``None`` and ``{}`` when there is no
    file); ``ConfigError`` when it cannot be read or parsed."""
    data = _read(path)
    return data, (_parse(data, path) if data is not None else {})


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None


def _parse(data: bytes, path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a file to parse

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None


def check(table: dict[str, Any], data: bytes, path: Path, stamp: Path | None) -> None:
    """Check the parsed file with the schema, unless ``stamp`` records that these very bytes
    passed this very schema before; record it when they pass."""
    digest = _digest(data)
    if stamp is not None and _read_stamp(stamp) == digest:
        return
    from golem_cli.config import schema

    problem = schema.problem(table, path)
    if problem:
        raise ConfigError(problem)
    if stamp is not None:
        _write_stamp(stamp, digest)


def _digest(data: bytes) -> str:
    """The file's bytes and the schema's source: editing either invalidates a verdict."""
    import hashlib

    try:
        source = Path(__file__).with_name("schema.py").read_bytes()
    except OSError:
        from golem_cli import __version__

        source = __version__.encode()
    return hashlib.blake2b(source + b"\0" + data, digest_size=16).hexdigest()


def _read_stamp(stamp: Path) -> str:
    try:
        return stamp.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _write_stamp(stamp: Path, digest: str) -> None:
    """Best effort: a cache that cannot be written only costs the check next time."""
    try:
        stamp.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        temporary.write_text(digest + "\n", encoding="ascii")
        os.replace(temporary, stamp)
    except OSError:
        pass


def _from_table(raw: dict[str, Any], source: Path) -> Settings:
    """``Settings`` from a table that passed ``check``."""
    model = raw.get("model")
    providers = raw.get("providers", {})
    return Settings(
        model=model.strip() if isinstance(model, str) else None,
        max_messages=raw.get("max_messages", DEFAULT_MAX_MESSAGES),
        providers={name: dict(table) for name, table in providers.items()},
        source=source,
        unknown_keys=tuple(sorted(k for k in raw if k not in KNOWN_KEYS)),
        context_tokens=raw.get("context_tokens"),
        models={name: dict(table) for name, table in raw.get("models", {}).items()},
        tools=tuple(raw.get("tools", ())),
        allow=tuple(raw.get("allow", ())),
        tool_root=raw.get("tool_root"),
        tool_output_limit=raw.get("tool_output_limit", DEFAULT_TOOL_OUTPUT_LIMIT),
        command_timeout=float(raw.get("command_timeout", DEFAULT_COMMAND_TIMEOUT)),
        mcp_servers={name: dict(table) for name, table in raw.get("mcp_servers", {}).items()},
    )
