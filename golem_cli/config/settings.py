"""The user's settings: ``config.toml`` in the config directory, then the environment.

The file is optional; ``schema.py`` declares what it may hold (README's config section shows
an example). ``GOLEM_MODEL`` overrides ``model``; a command-line flag overrides both, which is
the CLI's business. A value of the wrong type is a ``ConfigError`` naming the file and the key
(``tables.py`` words it); an unknown top-level key is kept in ``Settings.unknown_keys`` so the
CLI can warn about a typo instead of ignoring it unseen.

The file is read as golem reads every file it did not write (ADR 0019): only a regular file
(a FIFO would block every command, a link to ``/dev/zero`` never ends), at most
``MAX_CONFIG_BYTES``, and TOML nested no deeper than the parser can follow; anything else is
one line naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import structs

from golem_cli.config import paths, tables
from golem_cli.config.schema import KNOWN_KEYS, ConfigFile
from golem_cli.core.errors import GolemError

MODEL_ENV = "GOLEM_MODEL"
#: Far above any configuration a person writes (a few KiB), far below what hurts to read.
MAX_CONFIG_BYTES = 1 << 20
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class ConfigError(GolemError):
    """The configuration file cannot be read or holds a value of the wrong type (exit 1; the
    config branch of golem's one error tree, ``golem_cli.core.errors``)."""


class Settings(ConfigFile, frozen=True, kw_only=True):
    """What the user configured (the file's keys, ``ConfigFile``), the file it came from
    (``source``, None without one) and the top-level keys golem does not know. ``model`` is
    None when nothing chose one (the CLI then falls back to a provider whose key is set)."""

    source: Path | None = None
    unknown_keys: tuple[str, ...] = ()


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Read ``path`` (default: the user's ``config.toml``) and apply the environment. A
    missing file is no error; any other problem with it is a ``ConfigError``."""
    env = os.environ if env is None else env
    path = paths.config_file() if path is None else path
    data = read_file(path)
    settings = Settings() if data is None else settings_from(parse(data, path), path)
    model = env.get(MODEL_ENV, "").strip()
    return structs.replace(settings, model=model) if model else settings


def settings_from(table: dict[str, Any], path: Path) -> Settings:
    """The settings a parsed file holds; ``ConfigError`` with its first problem (and how many
    more there are) when it does not fit ``schema.ConfigFile``."""
    try:
        config = tables.convert(ConfigFile, table)
    except tables.Problems as e:
        more = f" (and {len(e.problems) - 1} more)" if len(e.problems) > 1 else ""
        raise ConfigError(f"{path}: {e.problems[0]}{more}") from None
    values = structs.asdict(config) | {"model": config.model.strip() if config.model else None}
    return Settings(**values, source=path, unknown_keys=tuple(sorted(k for k in table if k not in KNOWN_KEYS)))


def read_file(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file. Opened without blocking, refused
    unless regular, read to at most ``MAX_CONFIG_BYTES`` whatever its size says."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(_unreadable(path, e)) from None
    try:
        return _read_regular(fd, path)
    except OSError as e:
        raise ConfigError(_unreadable(path, e)) from None
    finally:
        os.close(fd)


def _read_regular(fd: int, path: Path) -> bytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path} is {_kind(st.st_mode)}, not a configuration file")
    if st.st_size > MAX_CONFIG_BYTES:
        raise ConfigError(_too_large(path, f"{st.st_size / 2**20:,.0f} MiB"))
    data = b""
    while chunk := os.read(fd, MAX_CONFIG_BYTES + 1 - len(data)):
        data += chunk
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(_too_large(path, "it grew while golem read it"))
    return data


def parse(data: bytes, path: Path) -> dict[str, Any]:
    """The file's TOML; ``ConfigError`` naming the file for text that is not UTF-8, not TOML,
    or nested deeper than the parser follows (it recurses: ``[[[[...`` would crash it)."""
    import tomllib  # only when there is a file to parse

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or inline tables nested too deeply to read") from None


def _unreadable(path: Path, error: OSError) -> str:
    if error.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
        try:
            return f"{path} is {_kind(os.stat(path).st_mode)}, not a configuration file"
        except OSError:
            pass
    return f"cannot read {path}: {error.strerror or error}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _too_large(path: Path, size: str) -> str:
    return f"{path} is too large for a configuration file ({size}; the limit is {MAX_CONFIG_BYTES // 2**20} MiB)"
