"""The parts of tool servers that need no server: names for the model, results from what a
server answered, the policy a listing gets, and the config that reaches the tools layer."""

from __future__ import annotations

import base64
import re
import string

import pytest
from golem_cli.config.schema import RESERVED_SERVER_NAMES, SERVER_NAME, SERVER_NAME_MAX
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.builtin import BuiltinSource
from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.naming import SEPARATOR, model_name
from golem_cli.tools.mcp.results import MAX_IMAGES, tool_result
from golem_cli.tools.mcp.source import MAX_SCHEMA, McpSource
from golem_cli.tools.registry import NAME, Registry
from hypothesis import given
from hypothesis import strategies as st

from tests.mcpservers import server_tables

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).decode()

# SERVER_NAME's words joined by "-" or "_", cut to SERVER_NAME_MAX: every length up to the limit
# is drawn (from_regex draws names mostly over it, and filtering those out took a minute a run).
_WORD = st.text(string.ascii_letters + string.digits, min_size=1, max_size=SERVER_NAME_MAX)
server_names = st.builds(lambda first, rest: (first + "".join(s + w for s, w in rest))[:SERVER_NAME_MAX].rstrip("-_"),
                         _WORD, st.lists(st.tuples(st.sampled_from("-_"), _WORD), max_size=3))  # fmt: skip
tool_names = st.text(min_size=1, max_size=100)


# --- names ---------------------------------------------------------------------------------


def server_of(name: str) -> str:
    """The server part of a model name: what precedes its first ``__`` ("" for a built-in)."""
    server, separator, _ = name.partition(SEPARATOR)
    return server if separator else ""


def test_plain_names_and_the_fallback():
    assert model_name("github", "search_issues") == "github__search_issues"
    fallback = model_name("github", "files.read")
    assert re.fullmatch(r"github__files_read_[0-9a-f]{8}", fallback)
    assert model_name("github", "files.read") == fallback  # the same in every chat
    assert model_name("github", "files read") != fallback
    long = model_name("s", "x" * 80)
    assert len(long) == 64 and long.startswith("s__xxx") and NAME.fullmatch(long)
    assert re.fullmatch(r"s__[0-9a-f]{8}", model_name("s", "ü"))  # nothing usable left of the name
    assert server_of("github__files_read") == "github" and server_of("read_file") == ""


@given(server_names, tool_names)
def test_every_model_name_is_valid_for_both_providers_and_names_its_server(server, tool):
    assert re.fullmatch(SERVER_NAME, server) and len(server) <= SERVER_NAME_MAX  # the strategy draws valid names
    name = model_name(server, tool)
    assert NAME.fullmatch(name)
    assert server_of(name) == server


@given(st.lists(st.tuples(server_names, tool_names), min_size=2, max_size=6, unique=True))
def test_names_of_different_servers_never_collide(pairs):
    by_server: dict[str, set[str]] = {}
    for server, tool in pairs:
        by_server.setdefault(server, set()).add(model_name(server, tool))
    servers = list(by_server)
    for i, a in enumerate(servers):
        for b in servers[i + 1 :]:
            assert not by_server[a] & by_server[b]


def test_no_builtin_name_can_be_a_model_name_of_a_server():
    builtins = {e.name for e in BuiltinSource().entries()}
    assert all("__" not in n for n in builtins)
    groups = {e.group for e in BuiltinSource().entries()}
    assert builtins | groups | {"all", "builtin"} == set(RESERVED_SERVER_NAMES)


# --- results -------------------------------------------------------------------------------


def test_text_images_structured_content_and_errors():
    result = tool_result({"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"},
                                      {"type": "image", "data": PNG, "mimeType": "image/png"}]})  # fmt: skip
    assert result.text == "one\ntwo" and [p.media_type for p in result.parts] == ["image/png"]
    assert result.parts[0].data.startswith(b"\x89PNG")
    assert tool_result({"content": [], "structuredContent": {"a": [1, "é"]}}).text == '{"a":[1,"é"]}'
    both = {"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": {"a": 1}}
    assert tool_result(both).text == '{"a": 1}'  # the server's text; the structure is not sent twice
    with pytest.raises(ToolFailed, match="^no such repo$"):
        tool_result({"content": [{"type": "text", "text": "no such repo"}], "isError": True})
    with pytest.raises(ToolFailed, match="without saying what it was"):
        tool_result({"content": [], "isError": True})
    assert tool_result({}).text == ""


def test_what_is_not_sent_is_said():
    big = base64.b64encode(b"\0" * (6 * 1024 * 1024)).decode()
    result = tool_result({"content": [
        {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},
        {"type": "image", "data": big, "mimeType": "image/png"},
        {"type": "image", "data": "not base64!", "mimeType": "image/png"},
        {"type": "audio", "data": PNG, "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": PNG, "mimeType": "application/zip"}},
        {"type": "resource_link", "uri": "file:///c", "name": "c"},
        {"type": "video"}, "not an object",
    ]})  # fmt: skip
    assert result.parts == ()
    lines = result.text.splitlines()
    assert lines[:3] == ["[resource: file:///a.txt]", "inside", "[resource link: file:///c (c)]"]
    said = "\n".join(lines[3:])
    for expected in ("image of type 'image/svg+xml' left out", "larger than 5,242,880 bytes", "not valid base64",
                     "audio (about 30 bytes, audio/wav) left out", "resource file:///b.bin", "type 'video' left out",
                     "not an object"):  # fmt: skip
        assert expected in said
    many = tool_result({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}] * (MAX_IMAGES + 2)})
    assert len(many.parts) == MAX_IMAGES and many.text.count(f"at most {MAX_IMAGES} images") == 2


def test_text_is_capped_and_always_storable():
    result = tool_result({"content": [{"type": "text", "text": "a" * 50_000 + "\ud800"}]}, limit=1000)
    assert len(result.text) < 1100 and "characters cut here" in result.text
    result.text.encode("utf-8")  # a lone surrogate cannot reach the history file


# --- a listing as golem offers it ----------------------------------------------------------


def config(name: str, table: dict) -> ServerConfig:
    """A server as the tools layer gets it from config.toml."""
    return ServerConfig(name=name, table=server_tables({name: table})[name])


def offered(listing: list[dict], notices: list[str] | None = None, **keys) -> tuple[McpSource, Registry]:
    notices = [] if notices is None else notices
    source = McpSource(config("srv", {"command": "x", **keys}), notify=notices.append)
    source._entries = list(source._build(listing))
    source.started = True
    return source, Registry([source])


def tool(name: str, **annotations) -> dict:
    return {"name": name, "description": f"{name}.", "inputSchema": {"type": "object"}, "annotations": annotations}


def test_approval_from_allow_patterns_and_the_servers_claims():
    listing = [tool("read_a", readOnlyHint=True), tool("read_b", destructiveHint=True), tool("write"),
               tool("drop", destructiveHint=True), tool("odd", readOnlyHint=True, destructiveHint=True)]  # fmt: skip
    source, registry = offered(listing, allow=["read_*", "drop"])
    need = {e.own_name: e.needs_approval for e in source.entries()}
    assert need == {"read_a": False, "read_b": True, "write": True, "drop": False, "odd": True}
    source, registry = offered(listing, allow_read_only=True)
    need = {e.own_name: e.needs_approval for e in source.entries()}
    assert need == {"read_a": False, "read_b": True, "write": True, "drop": True, "odd": True}
    # --allow: a group or a pattern does not cover what the server calls destructive; its name does
    assert registry.allowable(["srv"]) == {"srv__read_a", "srv__write"}
    assert registry.allowable(["srv.*"]) == {"srv__read_a", "srv__write"}
    assert registry.allowable(["srv.drop", "srv__odd"]) == {"srv__drop", "srv__odd"}
    preview = registry.entry("srv__drop").preview({"table": "users"})  # type: ignore[union-attr]
    assert preview == "table: users\n(the server says this tool is destructive)"


def test_a_hostile_listing_is_bounded():
    listing = [
        tool("ok"), tool("files.read"), {"name": ""}, {"name": 5}, {"name": "x" * 300},
        {"name": "big", "inputSchema": {"type": "object", "description": "x" * (MAX_SCHEMA + 1)}},
        {"name": "array", "inputSchema": {"type": "array"}},
        {"name": "long", "description": "d" * 10_000},
        tool("ok"),  # twice
    ]  # fmt: skip
    notices: list[str] = []
    source, registry = offered(listing, notices, disabled_tools=["hidden"])
    names = [e.name for e in source.entries()]
    assert names[0] == "srv__ok" and re.fullmatch(r"srv__files_read_[0-9a-f]{8}", names[1]) and names[2] == "srv__long"
    assert len(names) == 3  # the nameless are left out without a word: there is nothing to call them
    assert len(registry.entry("srv__long").tool.description) == 4000  # type: ignore[union-attr]
    assert registry.entry("srv__long").tool.parameters == {"type": "object", "properties": {}}  # type: ignore[union-attr]
    assert registry.select(["srv.files.read"])[0].name == names[1]
    assert notices == [
        "tool server 'srv': 'big' left out: its input schema is larger than 64 KiB",
        "tool server 'srv': 'array' left out: its input schema is not a JSON object schema",
        "tool server 'srv': 'ok' left out: its name for the model, srv__ok, is taken by another of its tools",
    ]


def test_enabled_and_disabled_tools():
    source, _ = offered([tool("a"), tool("b"), tool("c")], enabled_tools=["a", "b"], disabled_tools=["b"])
    assert [e.own_name for e in source.entries()] == ["a"]


def test_config_values_reach_the_tools_layer():
    http = config("s", {"url": "https://user:pw@h.example:8443/mcp?key=1", "headers": {"A": "b"},
                        "bearer_token_env_var": "TOK", "tool_timeout_sec": 5})  # fmt: skip
    assert http.transport == "http" and http.where == "https://h.example:8443/mcp" and http.table.tool_timeout_sec == 5
    assert http.http_headers({"TOK": "t"}) == {"A": "b", "Authorization": "Bearer t"}
    assert http.http_headers({}) == {"A": "b"}
    stdio = config("s", {"command": "npx", "args": ["-y", "a b"], "env": {"X": "1"}, "env_vars": ["HOME2", "MISSING"]})
    assert stdio.where == "npx -y 'a b'" and stdio.environment({"HOME2": "h"}) == {"HOME2": "h", "X": "1"}
