"""``golem mcp import``: tool servers from another client's JSON into ``config.toml``.

Claude Desktop, Cursor, Claude Code and Windsurf keep their servers as
``{"mcpServers": {"NAME": {"command", "args", "env", "cwd"} | {"url", "headers"}}}`` (VS Code:
``"servers"``). Each becomes an ``[mcp_servers.NAME]`` table in golem's file.

The user's file is theirs: it is never rewritten. The new tables are appended to its text as
it is (comments, order and spelling kept), the result is parsed and checked by the schema
before anything is written (the CLI writes it atomically, to the file a symlink points at if
it is one). A name the file already has with other settings is a conflict: nothing is
written, and the conflict is named. Keys golem has no use for (``autoApprove``, ``timeout``)
are reported, not imported: golem asks before each call until the user allows a tool.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from golem_cli.config import settings, tables
from golem_cli.config.schema import RESERVED_SERVER_NAMES, SERVER_NAME, SERVER_NAME_MAX, McpServerTable
from golem_cli.config.settings import ConfigError

MAX_JSON_BYTES = 10 * 1024 * 1024
_KEYS = {"command", "args", "env", "cwd", "url", "serverUrl", "headers", "type", "disabled"}


class Imported(Struct, kw_only=True):
    """One server of the JSON file: its table for config.toml (as written, and typed), or why
    it was refused."""

    name: str  # the name in config.toml
    source_name: str  # the name in the JSON file
    table: dict[str, Any] = field(default_factory=dict)
    server: McpServerTable | None = None  # ``table`` as golem reads it (None when refused)
    refused: str = ""
    ignored: list[str] = field(default_factory=list)  # keys not imported


class Plan(Struct, kw_only=True):
    """What an import adds to config.toml, what it leaves as it is, and what stops it."""

    path: Path
    added: list[Imported] = field(default_factory=list)
    unchanged: list[Imported] = field(default_factory=list)
    conflicts: list[Imported] = field(default_factory=list)
    refused: list[Imported] = field(default_factory=list)
    text: str = ""  # the new text of config.toml


def servers_from_json(data: bytes, label: str) -> list[Imported]:
    """The servers of a client's JSON file; ``ConfigError`` when it holds none."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{label}: not a JSON file ({e})") from None
    servers = None
    if isinstance(document, dict):
        servers = document.get("mcpServers", document.get("servers"))
    if not isinstance(servers, dict):
        raise ConfigError(f'{label}: no "mcpServers" object (the shape Claude Desktop and Cursor use)')
    return [_convert(str(name), entry) for name, entry in servers.items()]


def _convert(source_name: str, entry: object) -> Imported:
    """One JSON entry as a server table, checked as config.toml's tables are."""
    name = golem_name(source_name)
    item = Imported(name=name or source_name, source_name=source_name)
    item.refused = _unusable(name, entry)
    if item.refused or not isinstance(entry, dict):
        return item
    item.ignored = sorted(k for k in entry if k not in _KEYS)
    table, item.refused = _table(entry)
    if not item.refused:
        try:
            item.table, item.server = table, tables.convert(McpServerTable, table)
        except tables.Problems as problems:
            item.refused = f"its table would not be one golem reads: {problems.problems[0]}"
    return item


def _unusable(name: str, entry: object) -> str:
    if not name:
        return "no usable name can be made of it (letters and digits, single - or _ between them)"
    if not isinstance(entry, dict):
        return "its entry is not an object"
    try:
        json.dumps(entry, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "it holds text that is not valid Unicode"
    return ""


def _table(entry: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The JSON entry's keys as config.toml spells them, or why they cannot be."""
    url = entry.get("url", entry.get("serverUrl"))
    table: dict[str, Any]
    keys: tuple[str, ...]
    if str(entry.get("type", "")).lower() == "sse":
        return {}, "it uses the SSE transport, which golem does not speak (stdio and streamable HTTP)"
    if isinstance(entry.get("command"), str) and entry["command"].strip():
        table, keys = {"command": entry["command"]}, ("args", "env", "cwd")
    elif isinstance(url, str) and re.match(r"^https?://\S+$", url):
        table, keys = {"url": url}, ("headers",)
    else:
        return {}, "it has neither a command nor an http(s) url"
    for key in keys:
        if key in entry:
            check, wrong = _CHECKS[key]
            if not check(entry[key]):
                return {}, wrong
            table[key] = entry[key]
    if entry.get("disabled") is True:
        table["enabled"] = False
    return table, ""


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_table(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _string(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


#: What each key of a JSON entry must be, and the refusal when it is not (in JSON's words).
_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "args": (_strings, "its args is not a list of strings"),
    "env": (_string_table, "its env is not an object of strings"),
    "cwd": (_string, "its cwd is not a string"),
    "headers": (_string_table, "its headers are not an object of strings"),
}


def golem_name(name: str) -> str:
    """``name`` as a server name golem accepts ("" when nothing usable is left): refused
    characters become ``-``, runs of separators one, cut to the longest name allowed; a name
    golem uses for its own tools (``fs``) gets ``-mcp`` after it."""
    if re.fullmatch(SERVER_NAME, name) and len(name) <= SERVER_NAME_MAX:
        cleaned = name
    else:
        cleaned = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")[:SERVER_NAME_MAX].strip("-")
    if cleaned in RESERVED_SERVER_NAMES:
        cleaned = f"{cleaned}-mcp"
    return cleaned


def plan(path: Path, servers: list[Imported], *, origin: str) -> Plan:
    """What importing ``servers`` into the config file at ``path`` would do; ``text`` is the
    file's new text when there is something to add and nothing in the way. ``ConfigError``
    when the file cannot be read as golem reads it, before anything else."""
    data = settings.read_file(path)
    existing = settings.settings_from(settings.parse(data, path), path).mcp_servers if data is not None else {}
    result = Plan(path=path)
    seen: dict[str, str] = {}
    for item in servers:
        if item.refused:
            result.refused.append(item)
        elif item.name in seen:
            item.refused = f"its name becomes {item.name!r}, as {seen[item.name]!r}'s does"
            result.refused.append(item)
        elif item.name in existing:
            (result.unchanged if existing[item.name] == item.server else result.conflicts).append(item)
        else:
            result.added.append(item)
        seen.setdefault(item.name, item.source_name)
    if result.added and not result.conflicts:
        result.text = _appended(path, data.decode("utf-8") if data is not None else "", result.added, origin)
    return result


def _appended(path: Path, text: str, added: list[Imported], origin: str) -> str:
    """``text`` with the tables of ``added`` after it, once the whole reads back as golem
    reads config.toml and each table as it was written."""
    block = [f"# imported from {origin} by golem mcp import, {date.today().isoformat()}\n"]
    block += [toml_table(item.name, item.table) for item in added]
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    new_text = text + separator + "\n".join(block)
    try:
        parsed = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{path}: the new tables would not fit in this file ({e}); add them by hand:\n" + "\n".join(block)
        ) from None
    servers = settings.settings_from(parsed, path).mcp_servers
    wrong = [item.name for item in added if servers.get(item.name) != item.server]
    if wrong:
        raise ConfigError(f"{path}: the imported table {wrong[0]} would not read back as written")
    if len(new_text.encode("utf-8")) > settings.MAX_CONFIG_BYTES:
        limit = settings.MAX_CONFIG_BYTES // 2**20
        raise ConfigError(f"{path}: the new tables would make it larger than golem reads ({limit} MiB)")
    return new_text


def toml_table(name: str, table: dict[str, Any]) -> str:
    """``[mcp_servers.NAME]`` and its keys, in TOML."""
    lines = [f"[mcp_servers.{name}]"]
    for key, value in table.items():
        lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML spelling for {type(value).__name__}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but DEL must be escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
