"""Text golem did not write reaches a terminal shown, never obeyed: the real ``golem`` on a
pseudo-terminal, the bytes it wrote checked for the escape sequences and bidi controls of
hostile text (OSC 52 clipboard, OSC 8 link, OSC 0 title, ``ESC[2J``, C1 CSI, U+202E, U+2066,
zero-width characters). Piped or written to a file, the same text stays byte for byte.

Each place golem prints such text has its case: the streamed reply (REPL with and without
markdown, ``ask``), ``show``, ``list``, ``search``, ``export``, the repair reports of
``normalize``, ``import``, ``resume`` and ``fork``, provider error lines, the tool view and
the approval question, tool server lines, and names from the config."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.store import Store

from tests.providerserver import ProviderServer, Reply, Scenario
from tests.repl.conftest import GOLEM, golem_env, plain
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow
FOOTER = r"\d+ stored, \d+ sent[^\n]*"

#: What a hostile model, tool, file or server writes (QA B9 and R16 among it).
HOSTILE = (
    "evil \x1b]52;c;aGk=\x07\x1b[2J\x1b]0;TITLE\x07 \x1b]8;;http://evil.example/\x07link\x1b]8;;\x1b\\ "
    "\x9b31m C1 \u202e RLO text\u202c \u2066iso\u2069 zero\u200bwidth\ufeff end"
)
#: What must never reach the terminal. golem's own output has none of these.
ATTACKS = {
    "OSC (52, 8, 0)": "\x1b]",
    "ESC[2J": "\x1b[2J",
    "BEL": "\x07",
    "C1 CSI": "\x9b",
    "RLO": "\u202e",
    "LRI": "\u2066",
    "ZWSP": "\u200b",
    "BOM": "\ufeff",
}
#: How the attack is shown instead.
SHOWN = ("^[]52;c;aGk=^G^[[2J^[]0;TITLE^G", "<U+009B>31m", "<U+202E> RLO", "<U+200B>")


def assert_shown(raw: str, *, whole: bool = True) -> None:
    """``raw`` (what reached the terminal) holds none of the attacks, and (``whole``) shows
    them as text instead."""
    assert [name for name, seq in ATTACKS.items() if seq in raw] == []
    if whole:
        text = " ".join(plain(raw).split())
        assert [s for s in SHOWN if s not in text] == []


def on_tty(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, int]:
    """Run ``golem ARGS`` on a pseudo-terminal: everything it wrote there, and its exit code."""
    child = pexpect.spawn(GOLEM, list(args), env=golem_env(home) | (env or {}), encoding="utf-8",
                          dimensions=(40, 200), timeout=30)  # fmt: skip
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def piped(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([GOLEM, *args], capture_output=True, env=golem_env(home), timeout=60)


def hostile_conversation(home: Path) -> str:
    """A stored conversation with hostile text in every field a transcript shows."""
    call = ToolCall(
        id="call\x1b]0;ID\x07\u202e",
        name="read\x1b[2Jfile",
        args=json.dumps({"path": HOSTILE}),
    )
    return Store(home).create(
        [
            Message("user", "read this: " + HOSTILE),
            Message(
                "assistant",
                "",
                tool_calls=[call],
                thinking=[ThinkingBlock(text="hmm " + HOSTILE)],
            ),
            Message("tool", HOSTILE + "\nline 2", tool_call_id=call.id, tool_name=call.name),
            Message(
                "assistant",
                f"It says **{HOSTILE}** and [a link](http://evil.example/\x1b]0;x\x07)",
            ),
        ],
        title="title " + HOSTILE,
        model="local:\x1b]0;model\x07echo",
    )


# --- the streamed reply ------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [(), ("--no-markdown",)], ids=["markdown", "plain"])
def test_repl_reply(shared_chat, server: ProviderServer, flags: tuple[str, ...]):
    server.enqueue(Scenario(reply=Reply(text=f"**{HOSTILE}**\n\n{HOSTILE}")))  # streamed in 1-6 character pieces
    chat = shared_chat(*flags).chat
    chat.child.sendline("hi")
    assert_shown(chat.expect_raw(FOOTER))
    chat.prompt()


@pytest.mark.parametrize("flags", [(), ("--no-stream",)], ids=["streamed", "whole"])
def test_ask_on_a_terminal_and_piped(golem, home: Path, server: ProviderServer, flags: tuple[str, ...]):
    server.enqueue(Scenario(reply=Reply(text=HOSTILE)))
    raw, code = on_tty(home, "ask", *flags, "hi")
    assert code == 0
    assert_shown(raw)
    server.enqueue(Scenario(reply=Reply(text=HOSTILE)), Scenario(reply=Reply(text=HOSTILE)))
    done = piped(home, "ask", *flags, "hi")  # a pipe gets the reply byte for byte
    assert done.returncode == 0 and done.stdout == (HOSTILE + "\n").encode()
    done = golem("ask", "--json", "again")
    assert json.loads(done.out)["reply"] == HOSTILE


# --- stored conversations ----------------------------------------------------------------------


@pytest.fixture
def golem(golem_main) -> Any:
    """``golem(*args)``: golem's main in this process (``golem_main``), for what a command
    writes where it is not a terminal (JSON, an export) when the pipe itself is not the point."""
    return lambda *args: golem_main(*args, env={"COLUMNS": "200", "LINES": "40"})


@pytest.mark.parametrize("flags", [(), ("--full",), ("--run-ids",)])
def test_show(home: Path, flags: tuple[str, ...]):
    hostile_conversation(home)
    raw, code = on_tty(home, "show", "last", *flags)
    assert code == 0
    assert_shown(raw)


def test_list_and_search(home: Path):
    hostile_conversation(home)
    for args in (("list",), ("list", "--tree"), ("search", "evil")):
        raw, code = on_tty(home, *args)
        assert code == 0, raw
        assert_shown(raw, whole=False)  # titles and models are clipped
        assert "<U+202E>" in raw or "^[" in raw


def test_export_markdown(golem, home: Path, tmp_path: Path):
    cid = hostile_conversation(home)
    raw, code = on_tty(home, "export", "-f", "markdown", cid)
    assert code == 0
    assert_shown(raw)
    to_pipe = piped(home, "export", "-f", "markdown", cid).stdout
    assert HOSTILE.encode() in to_pipe  # a file or pipe gets the conversation as it is
    on_tty(home, "export", "-f", "markdown", cid, "-o", str(tmp_path / "out.md"))
    assert (tmp_path / "out.md").read_bytes() == to_pipe
    assert json.loads(golem("show", cid, "--json").out)["messages"][0]["content"] == "read this: " + HOSTILE


# --- repair reports ------------------------------------------------------------------------------


#: How the hostile call ID is shown in a report (rich drops the BEL itself).
ID_SHOWN = ("^[]0;ID", "<U+202E>1")


def dangling(tmp_path: Path) -> Path:
    """A history whose tool call (hostile ID and name) has no result."""
    path = tmp_path / "dangling.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "toolCalls": [{"id": "c\u001b]0;ID\u0007\u202e1", "name": "run\u001b[2J\u2066x", "args": "{}"}]},
    ]))  # fmt: skip
    return path


def test_normalize_and_import_reports(golem, home: Path, tmp_path: Path):
    source = dangling(tmp_path)
    for args in (
        ("normalize", str(source)),
        ("import", str(source)),
        ("normalize", "--sanitize", str(source)),
    ):
        raw, code = on_tty(home, *args)
        assert code == 0, raw
        assert_shown(raw, whole=False)
        assert all(s in plain(raw) for s in ID_SHOWN)
    report = json.loads(golem("normalize", "--json", str(source)).out)
    assert report["findings"][0]["callId"] == "c\x1b]0;ID\x07\u202e1"  # --json is exact


def test_resume_and_fork_reports(spawn, golem, home: Path, tmp_path: Path):
    assert golem("import", "--trust", str(dangling(tmp_path))).code == 0
    raw, code = on_tty(home, "fork", "last", "--no-chat")
    assert code == 0 and all(s in plain(raw) for s in ID_SHOWN)
    assert_shown(raw, whole=False)
    chat = spawn("resume", "last")
    raw = chat.expect_raw("you>")
    assert all(s in plain(raw) for s in ID_SHOWN)
    assert_shown(raw, whole=False)
    chat.leave()


# --- errors, tools, servers, config ------------------------------------------------------------


def test_provider_error_lines(shared_chat, home: Path, server: ProviderServer):
    server.enqueue(Scenario(status=400, message=HOSTILE))
    raw, code = on_tty(home, "ask", "hi")
    assert code != 0
    assert_shown(raw)
    server.enqueue(Scenario(status=400, message=HOSTILE))
    chat = shared_chat().chat
    chat.child.sendline("hi")
    assert_shown(chat.expect_raw("/retry sends it again"))
    chat.prompt()


@pytest.fixture
def evil_file(home: Path) -> Path:
    """QA B9: a file whose text a tool reads and the model quotes."""
    root = home / "project"
    root.mkdir()
    (root / "evil.txt").write_text(HOSTILE + "\n")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())
    return root / "evil.txt"


def test_tool_results_and_the_reply_quoting_them(spawn, home: Path, server: ProviderServer, evil_file: Path):
    server.enqueue(calls(("e2", "read_file", {"path": "evil.txt"})))  # then the reply quotes the result
    chat = spawn("chat", "-T", "fs")
    chat.prompt()
    chat.child.sendline("esc test")
    assert_shown(chat.expect_raw(FOOTER))
    chat.prompt()
    chat.child.sendline("/history --full")
    assert_shown(chat.expect_raw(r"tool results: e2[^\n]*\n"))
    chat.leave()
    server.enqueue(calls(("e3", "read_file", {"path": "evil.txt"})))
    raw, code = on_tty(home, "ask", "-T", "fs", "esc test")
    assert code == 0
    assert_shown(raw)


def test_the_approval_question(spawn, server: ProviderServer, evil_file: Path):
    """QA R16: a command shown reordered by U+202E would not be the command that runs."""
    server.enqueue(calls(("c1", "run_command", {"command": "ls #\u202e txt.exe; " + HOSTILE})))
    chat = spawn("chat", "-T", "shell")
    chat.prompt()
    chat.child.sendline("run it")
    raw = chat.expect_raw(r"\[y\]es once")
    assert "$ ls #<U+202E> txt.exe" in plain(raw)
    assert_shown(raw)
    chat.child.sendline("n no")
    chat.expect(FOOTER)
    chat.leave()


def test_tool_server_lines(spawn, home: Path):
    script = "import sys; sys.stderr.write(" + repr(HOSTILE) + "); sys.exit(3)"
    config = home / "config.toml"
    config.write_text(config.read_text() + "\n[mcp_servers.evil]\ncommand = " + json.dumps(__import__("sys").executable)
                      + "\nargs = [\"-c\", " + json.dumps(script) + "]\n")  # fmt: skip
    chat = spawn("chat", "-T", "evil")
    raw = chat.expect_raw("did not start")  # printed above the prompt once the server failed
    raw += chat.expect_raw("you>")
    assert_shown(raw)
    chat.child.sendline("/tools")  # its row says why it did not start
    raw = chat.expect_raw("/tools enable NAME, ")
    assert_shown(raw)
    chat.leave()
    for args in (("mcp", "list"), ("tools",)):
        raw, _ = on_tty(home, *args)
        assert_shown(raw)


def test_names_from_the_config(spawn, home: Path):
    config = home / "config.toml"
    config.write_text('"evil\\u001b]0;T\\u0007\\u202e" = 1\n' + config.read_text().replace(
        'model = "local:echo"', 'model = "local:echo\\u001b]0;T\\u0007\\u202e"'))  # fmt: skip
    raw, _ = on_tty(home, "models")
    assert_shown(raw, whole=False)
    assert "<U+202E>" in raw
    raw, _ = on_tty(home, "ask", "hi")
    assert_shown(raw, whole=False)
    assert "<U+202E>" in raw
    chat = spawn("chat")
    raw = chat.expect_raw("you>")
    assert_shown(raw, whole=False)
    assert "<U+202E>" in raw
    chat.leave()
