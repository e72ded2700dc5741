"""``[mcp_servers.NAME]`` in config.toml: checked by the schema with errors naming the file and
the key; and ``golem mcp import``'s conversion and merge, which never rewrites the user's text."""

from __future__ import annotations

import json
import tomllib

import pytest
from golem_cli.config import mcp_import
from golem_cli.config.schema import McpServerTable
from golem_cli.config.settings import ConfigError, load_settings
from hypothesis import given
from hypothesis import strategies as st


def write(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_stdio_and_an_http_server_are_read(tmp_path):
    path = write(tmp_path, '[mcp_servers.fs]\ncommand = "npx"\nargs = ["-y", "x"]\nenv = { TOKEN = "t" }\n\n'
                           '[mcp_servers.remote]\nurl = "http://127.0.0.1:8000/mcp"\n'
                           'headers = { Authorization = "Bearer x" }\nallow = ["read_*"]\n')  # fmt: skip
    with pytest.raises(ConfigError, match="mcp_servers.fs: 'fs' is a name golem uses for its own tools"):
        load_settings(path, env={})
    path.write_text(path.read_text().replace("mcp_servers.fs]", "mcp_servers.files]"))
    s = load_settings(path, env={})
    assert s.mcp_servers == {
        "files": McpServerTable(command="npx", args=("-y", "x"), env={"TOKEN": "t"}),
        "remote": McpServerTable(url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer x"}, allow=("read_*",)),
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("[mcp_servers.x]\nargs = []\n",
         "mcp_servers.x: needs either command (a program golem starts) or url (a streamable HTTP server)"),
        ('[mcp_servers.x]\ncommand = "a"\nurl = "http://h/mcp"\n',
         "mcp_servers.x: has both command and url; a tool server is one or the other"),
        ('[mcp_servers.x]\ncommand = "a"\nheaders = { A = "b" }\n', "mcp_servers.x: headers does not go with a command"),
        ('[mcp_servers.x]\nurl = "http://h/mcp"\ncwd = "/"\n', "mcp_servers.x: cwd does not go with a url"),
        ('[mcp_servers."a.b"]\ncommand = "a"\n',
         'mcp_servers."a.b" is not a name golem can use: letters and digits, with single - or _ between them, at '
         "most 32 characters (it begins its tools' names)"),
        ('[mcp_servers.a__b]\ncommand = "a"\n', 'mcp_servers."a__b" is not a name golem can use'),
        ('[mcp_servers.x]\ncommand = "a"\ncomand = "b"\n', "mcp_servers.x.comand is not a key of a tool server (known: "),
        ('[mcp_servers.x]\nurl = "ftp://h"\n',
         'mcp_servers.x.url must be an http(s) URL like "http://127.0.0.1:8000/mcp", not "ftp://h"'),
        ('[mcp_servers.x]\ncommand = "a"\nargs = "b"\n',
         'mcp_servers.x.args must be a list of strings, like ["-y", "server"], not "b"'),
        ('[mcp_servers.x]\ncommand = "a"\ntool_timeout_sec = 0\n',
         "mcp_servers.x.tool_timeout_sec must be a number of seconds above 0, not 0"),
        ('[mcp_servers.x]\ncommand = "a"\nallow = "read_*"\n',
         'mcp_servers.x.allow must be a list of tool names or patterns, like ["read_*"], not "read_*"'),
        ("mcp_servers = 1\n", "mcp_servers must be a table of [mcp_servers.NAME] tables, not 1"),
        ("[mcp_servers]\nx = 1\n", "mcp_servers.x must be a table, not 1"),
    ],
)  # fmt: skip
def test_wrong_tables_are_refused_naming_file_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert str(info.value).startswith(f"{path}: {message}")


# --- import --------------------------------------------------------------------------------

CLAUDE = {
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        "github": {"command": "npx", "args": ["-y", "gh"], "env": {"TOKEN": 'ghp_"quoted"\\\x7f'},
                   "autoApprove": ["search"]},
        "brave search": {"command": "npx", "args": ["brave"], "disabled": True},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer s"}},
        "old": {"type": "sse", "url": "http://h/sse"},
        "fs": {"command": "fs-server"},
        "broken": {"args": ["x"]},
    }
}  # fmt: skip


def test_conversion_of_a_claude_desktop_file():
    servers = {s.source_name: s for s in mcp_import.servers_from_json(json.dumps(CLAUDE).encode(), "c.json")}
    assert servers["github"].table["env"] == {"TOKEN": 'ghp_"quoted"\\\x7f'} and servers["github"].ignored == ["autoApprove"]
    assert servers["brave search"].name == "brave-search" and servers["brave search"].table["enabled"] is False
    assert servers["remote"].table == {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer s"}}
    assert "SSE transport" in servers["old"].refused
    assert servers["fs"].name == "fs-mcp"
    assert servers["broken"].refused == "it has neither a command nor an http(s) url"
    with pytest.raises(ConfigError, match='no "mcpServers" object'):
        mcp_import.servers_from_json(b'{"servers2": {}}', "c.json")
    with pytest.raises(ConfigError, match="not a JSON file"):
        mcp_import.servers_from_json(b"\xff{", "c.json")


def test_the_merge_appends_and_keeps_the_users_text(tmp_path):
    original = '# mine\nmodel = "openai:gpt-4o-mini"   # keep this comment\n\n[mcp_servers.local]\ncommand = "x"\n'
    path = write(tmp_path, original)
    servers = mcp_import.servers_from_json(json.dumps(CLAUDE).encode(), "c.json")
    plan = mcp_import.plan(path, servers, origin="c.json")
    assert plan.text.startswith(original)
    assert [i.name for i in plan.added] == ["filesystem", "github", "brave-search", "remote", "fs-mcp"]
    parsed = tomllib.loads(plan.text)
    assert parsed["model"] == "openai:gpt-4o-mini" and parsed["mcp_servers"]["local"] == {"command": "x"}
    assert parsed["mcp_servers"]["github"]["env"]["TOKEN"] == 'ghp_"quoted"\\\x7f'
    path.write_text(plan.text)
    again = mcp_import.plan(path, servers, origin="c.json")
    assert not again.added and len(again.unchanged) == 5 and not again.text


def test_a_conflicting_name_stops_the_import(tmp_path):
    path = write(tmp_path, '[mcp_servers.github]\ncommand = "my-own-github"\n')
    servers = mcp_import.servers_from_json(json.dumps(CLAUDE).encode(), "c.json")
    plan = mcp_import.plan(path, servers, origin="c.json")
    assert [i.name for i in plan.conflicts] == ["github"] and plan.text == ""


def test_a_file_the_tables_cannot_be_appended_to_is_refused(tmp_path):
    path = write(tmp_path, 'mcp_servers = { local = { command = "x" } }\n')  # an inline table cannot grow
    servers = mcp_import.servers_from_json(json.dumps(CLAUDE).encode(), "c.json")
    with pytest.raises(ConfigError, match="the new tables would not fit in this file"):
        mcp_import.plan(path, servers, origin="c.json")


@given(st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=30), max_size=4), st.lists(st.text(max_size=20)))
def test_any_strings_round_trip_through_the_toml_written(env, args):
    table = {"command": "x", "args": args, "env": env}
    assert tomllib.loads(mcp_import.toml_table("s", table))["mcp_servers"]["s"] == table


def test_a_server_already_there_is_compared_as_golem_reads_it(tmp_path):
    """``args = []`` written out and no args at all are the same table: unchanged, not a conflict."""
    path = write(tmp_path, '[mcp_servers.github]\ncommand = "npx"\nargs = []\nenabled = true\n')
    servers = mcp_import.servers_from_json(json.dumps({"mcpServers": {"github": {"command": "npx"}}}).encode(), "c.json")
    plan = mcp_import.plan(path, servers, origin="c.json")
    assert [i.name for i in plan.unchanged] == ["github"] and not plan.conflicts and not plan.text


def test_a_table_golem_would_not_read_is_refused_not_written(tmp_path):
    entry = {"mcpServers": {"web": {"url": "http://h/mcp\n"}}}  # passes the JSON check, not the schema
    (item,) = mcp_import.servers_from_json(json.dumps(entry).encode(), "c.json")
    assert item.refused.startswith("its table would not be one golem reads: url must be an http(s) URL")
    assert mcp_import.plan(write(tmp_path, ""), [item], origin="c.json").text == ""


def test_a_config_file_golem_cannot_read_stops_the_import_at_once(tmp_path):
    path = write(tmp_path, "max_messages = 0\n")
    servers = mcp_import.servers_from_json(json.dumps(CLAUDE).encode(), "c.json")
    with pytest.raises(ConfigError, match="max_messages must be a whole number of at least 1, not 0"):
        mcp_import.plan(path, servers, origin="c.json")
