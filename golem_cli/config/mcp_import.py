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
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from golem_cli.config.schema import RESERVED_SERVER_NAMES, SERVER_NAME, SERVER_NAME_MAX
from golem_cli.config.settings import ConfigError

MAX_JSON_BYTES = 10 * 1024 * 1024
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamablehttp"}
_KEYS = {"command", "args", "env", "cwd", "url", "serverUrl", "headers", "type", "disabled"}


@dataclass
class Imported:
    """One server of the JSON file: its table for config.toml, or why it was refused."""

    name: str  # the name in config.toml
    source_name: str  # the name in the JSON file
    table: dict[str, Any] = field(default_factory=dict)
    refused: str = ""
    ignored: list[str] = field(default_factory=list)  # keys not imported


@dataclass
class Plan:
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
    name = golem_name(source_name)
    item = Imported(name or source_name, source_name)
    if not name:
        item.refused = "no usable name can be made of it (letters and digits, single - or _ between them)"
        return item
    if not isinstance(entry, dict):
        item.refused = "its entry is not an object"
        return item
    try:
        json.dumps(entry, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        item.refused = "it holds text that is not valid Unicode"
        return item
    item.ignored = sorted(k for k in entry if k not in _KEYS)
    kind = str(entry.get("type", "")).lower()
    url = entry.get("url", entry.get("serverUrl"))
    table: dict[str, Any] = {}
    if kind == "sse":
        item.refused = "it uses the SSE transport, which golem does not speak (stdio and streamable HTTP)"
        return item
    if isinstance(entry.get("command"), str) and entry["command"].strip():
        table["command"] = entry["command"]
        for key, check in (("args", _strings), ("env", _string_table), ("cwd", _string)):
            if key in entry:
                if not check(entry[key]):
                    item.refused = f"its {key} is not {_WHAT[key]}"
                    return item
                table[key] = entry[key]
    elif isinstance(url, str) and re.match(r"^https?://\S+$", url):
        table["url"] = url
        if "headers" in entry:
            if not _string_table(entry["headers"]):
                item.refused = f"its headers are not {_WHAT['headers']}"
                return item
            table["headers"] = entry["headers"]
    else:
        item.refused = "it has neither a command nor an http(s) url"
        return item
    if entry.get("disabled") is True:
        table["enabled"] = False
    item.table = table
    return item


_WHAT = {"args": "a list of strings", "env": "an object of strings", "cwd": "a string",
         "headers": "an object of strings"}  # fmt: skip


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_table(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _string(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


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
    file's new text when there is something to add and nothing in the way."""
    from golem_cli.config import schema
    from golem_cli.config.settings import read_table

    data, table = read_table(path)
    text = data.decode("utf-8") if data is not None else ""
    existing = table.get("mcp_servers", {})
    result = Plan(path)
    seen: dict[str, str] = {}
    for item in servers:
        if item.refused:
            result.refused.append(item)
        elif item.name in seen:
            item.refused = f"its name becomes {item.name!r}, as {seen[item.name]!r}'s does"
            result.refused.append(item)
        elif item.name in existing:
            (result.unchanged if existing[item.name] == item.table else result.conflicts).append(item)
        else:
            result.added.append(item)
        seen.setdefault(item.name, item.source_name)
    if not result.added or result.conflicts:
        return result
    block = [f"# imported from {origin} by golem mcp import, {date.today().isoformat()}\n"]
    block += [toml_table(item.name, item.table) for item in result.added]
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    new_text = text + separator + "\n".join(block)
    try:
        parsed = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{path}: the new tables would not fit in this file ({e}); add them by hand:\n" + "\n".join(block)
        ) from None
    wrong = [i.name for i in result.added if parsed.get("mcp_servers", {}).get(i.name) != i.table]
    problem = schema.problem(parsed, path)
    if wrong or problem:
        raise ConfigError(problem or f"{path}: the imported table {wrong[0]} would not read back as written")
    result.text = new_text
    return result


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
