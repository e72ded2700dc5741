"""``golem mcp list``, ``golem mcp import`` and ``golem tools`` with tool servers, through the
real entry point (``golem_main``: in this process, where the SDK is imported once, not once
per call; a FIFO, which could hang a read, goes to the program); and the paths that must never
import the MCP SDK (about a second), each a fresh process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import assert_one_line_error
from tests.mcpservers import demo_toml, raw_toml, url_toml
from tests.mcpservers.threaded import http_demo

CLAUDE = {
    "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}, "autoApprove": ["search"]},
        "remote": {"url": "https://mcp.example.com/mcp?key=k", "headers": {"Authorization": "Bearer s3cret"}},
        "old": {"type": "sse", "url": "http://h/sse"},
    }
}  # fmt: skip


@pytest.fixture
def claude_json(tmp_path: Path) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(CLAUDE))
    return path


def test_import_adds_tables_shows_them_without_secrets_and_keeps_the_file(golem_main, home, claude_json):
    home.mkdir()
    config = home / "config.toml"
    config.write_text('model = "offline:echo"  # mine\n')
    os.chmod(config, 0o640)
    dry = golem_main("mcp", "import", str(claude_json), "--dry-run")
    assert dry.code == 0 and "would add to" in dry.out and "(dry run: nothing written)" in dry.out
    assert config.read_text() == 'model = "offline:echo"  # mine\n'
    done = golem_main("mcp", "import", str(claude_json))
    assert done.code == 0, done.err
    assert "github  stdio  npx -y @modelcontextprotocol/server-github  [env: GITHUB_PERSONAL_ACCESS_TOKEN; not imported: autoApprove]" in done.out
    assert "remote  http  https://mcp.example.com/mcp  [headers: Authorization]" in done.out
    assert "ghp_secret" not in done.out + done.err and "s3cret" not in done.out + done.err and "key=k" not in done.out
    assert "golem: not imported: 'old': it uses the SSE transport" in done.err
    text = config.read_text()
    assert text.startswith('model = "offline:echo"  # mine\n')
    assert tomllib.loads(text)["mcp_servers"]["github"]["env"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    again = golem_main("mcp", "import", str(claude_json))
    assert again.code == 0 and "unchanged: github" in again.out and config.read_text() == text


def test_a_conflict_writes_nothing_and_says_which(golem_main, home, claude_json):
    home.mkdir()
    config = home / "config.toml"
    config.write_text('[mcp_servers.github]\ncommand = "my-github"\n')
    done = golem_main("mcp", "import", str(claude_json))
    assert done.code == 2
    assert f"golem: [mcp_servers.github] is already in {config} with other settings" in done.err
    assert f"golem: nothing imported: 1 name(s) conflict with {config}" in done.err
    assert config.read_text() == '[mcp_servers.github]\ncommand = "my-github"\n'


def test_a_symlinked_config_stays_a_link_and_a_new_one_is_private(golem_main, home, claude_json, tmp_path):
    home.mkdir()
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "golem.toml").write_text("max_messages = 7\n")
    (home / "config.toml").symlink_to(dotfiles / "golem.toml")
    assert golem_main("mcp", "import", str(claude_json)).code == 0
    assert (home / "config.toml").is_symlink() and "[mcp_servers.github]" in (dotfiles / "golem.toml").read_text()
    other = tmp_path / "fresh"
    assert golem_main("mcp", "import", str(claude_json), env={"GOLEM_HOME": str(other)}).code == 0
    assert stat.S_IMODE((other / "config.toml").stat().st_mode) == 0o600


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"), (b"{", "not a JSON file"), (b"[]", 'no "mcpServers" object'),
])  # fmt: skip
def test_bad_files_are_one_line(golem_main, tmp_path, content, message):
    path = tmp_path / "x.json"
    if content is not None:
        path.write_bytes(content)
    done = golem_main("mcp", "import", str(path))
    assert done.code in (1, 2) and message in done.err
    assert_one_line_error(done)


def test_a_fifo_is_refused_without_a_read(golem, tmp_path):
    """The program, not ``golem_main``: a read of a FIFO nobody writes would hang."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "FIFO" in golem("mcp", "import", str(fifo)).err


@pytest.mark.slow
def test_list_starts_each_server_and_says_how_it_went(golem_main, home):
    """The demo server over HTTP from a thread of this process; `bad` a program golem starts."""
    home.mkdir()
    with http_demo() as url:
        (home / "config.toml").write_text(url_toml("demo", url) + demo_toml("bad", "--exit-at-start", "4")
                                          + '\n[mcp_servers.off]\ncommand = "x"\nenabled = false\n')  # fmt: skip
        quick = golem_main("mcp", "list", "--no-start")
        done = golem_main("mcp", "list")
        listed = json.loads(golem_main("mcp", "list", "--json").out)
    assert quick.code == 0 and f"demo  http   {url}\nbad   stdio  " in quick.out, quick.out
    assert "ready" not in quick.out
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == f"demo  http   {url}" and lines[1].strip().startswith("ready, 19 tools ("), done.out
    assert lines[2].startswith(f"bad   stdio  {sys.executable}"), done.out
    assert lines[3].strip() == "did not start: exited at start (exit status 4; it said: demo: refusing to start (told to))"
    assert lines[5].strip() == "disabled (enabled = false)"
    assert [(s["name"], s.get("status")) for s in listed] == [("demo", "ready"), ("bad", "failed"), ("off", None)]
    assert "picture" in listed[0]["tools"]


@pytest.mark.slow
def test_golem_tools_lists_the_servers_tools(golem_main, home):
    """The demo server over HTTP from a thread of this process; `bad` a program golem starts."""
    home.mkdir()
    with http_demo() as url:
        (home / "config.toml").write_text(url_toml("demo", url, 'allow = ["echo"]\n') + demo_toml("bad", "--exit-at-start", "1"))
        done = golem_main("tools")
        listed = json.loads(golem_main("tools", "--json").out)
    assert done.code == 0, done.err
    assert "demo__echo" in done.out and "demo__hostile" in done.out
    echo = next(line for line in done.out.splitlines() if "demo__echo" in line)
    assert echo.split()[1:4] == ["demo", "mcp:demo", "runs"]
    assert "bad tool server, did not start: exited at start (exit status 1; it said: demo: refusing to start" in " ".join(done.out.split())
    shout = next(t for t in listed if t["name"] == "demo__shout")
    assert shout["destructive"] and shout["ownName"] == "shout" and shout["needsApproval"]


SDK = ("mcp", "mcp_types", "httpx2", "anyio")


def _modules_after(args: list[str], home: Path, stdin: str = "") -> list[str]:
    code = (
        "import sys\nfrom golem_cli.__main__ import main\n"
        f"code = main({args!r})\n"
        f"print('SDK', sorted(m for m in {SDK!r} if m in sys.modules), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    line = next(line for line in done.stderr.splitlines() if line.startswith("SDK "))
    return eval(line[4:])  # a printed list of names


def test_commands_without_a_tool_server_never_import_the_sdk(home):
    home.mkdir()
    (home / "config.toml").write_text('model = "offline:echo"\n' + raw_toml("demo"))  # a server without the SDK
    assert _modules_after(["--version"], home) == []
    assert _modules_after(["list"], home) == []
    assert _modules_after(["chat"], home, stdin="hello\n") == []  # a server configured, not enabled
    assert _modules_after(["chat", "-T", "fs"], home, stdin="hello\n") == []
    assert _modules_after(["mcp", "list", "--no-start"], home) == []
    assert "mcp" in _modules_after(["chat", "-T", "demo"], home, stdin="hello\n")  # the test can fail
