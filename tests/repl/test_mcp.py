"""Tool servers in chat as a person meets them: the real ``golem`` on a pseudo-terminal (or,
without a terminal, golem's entry point in this process behind pipes), the loopback provider
answering with calls of a server's tools, and a real tool server (tests/mcpservers/demo_app.py,
the SDK's own server class): over streamable HTTP from a thread of this process, or, where the
test is about the server's process (its start, its exit, a kill mid-call, a cancellation), a
program of its own that golem starts. Two tests about a conversation with the server, which
leave the chat's approvals as they found them, share one chat (tests/repl/mcp_chats.py:
``/new`` per test).

The provider's reply after tool results is ``tool results: <id> [failed] <first line>``, so
what the model was sent shows in the transcript."""

from __future__ import annotations

import base64
import json
import os
import signal
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from golem_cli.config.schema import McpServerTable
from golem_cli.core.history.repair import normalize_history
from golem_cli.store import Store

from tests.mcpservers import demo_toml, published, url_toml
from tests.mcpservers.threaded import http_demo
from tests.providerserver import ProviderServer, Scenario
from tests.repl.conftest import PATIENCE, plain
from tests.repl.mcp_chats import STDIO_DEMO, pool_with, take_ready
from tests.repl.shared_chat import ChatPool
from tests.repl.test_tools import calls, stored, wait_for

pytestmark = pytest.mark.slow
FOOTER = r"\d+ stored, \d+ sent[^\n]*"
READY = r"Tool server ready in [^\n]*"


@pytest.fixture
def marks(home: Path) -> Path:
    path = home / "marks"
    path.mkdir()
    return path


@pytest.fixture
def demo(home: Path, marks: Path) -> Iterator[Path]:
    """A config with the demo server as `demo` (over HTTP, from a thread of this process), and
    two programs golem starts: one that exits at start as `bad`, and one that is slow to start
    as `late`: it starts once the test opens its gate (``open_gate``)."""
    with http_demo("demo", marks) as url:
        yield configured(home, marks, url_toml("demo", url))


@pytest.fixture
def demo_process(home: Path, marks: Path) -> Path:
    """The same config with `demo` a program golem starts, for the tests about its process."""
    return configured(home, marks, demo_toml("demo", "--marks", str(marks)))


def configured(home: Path, marks: Path, demo: str) -> Path:
    config = home / "config.toml"
    config.write_text(config.read_text() + demo + demo_toml("bad", "--exit-at-start", "3")
                      + demo_toml("late", "--name", "late", "--marks", str(marks), "--start-gate", str(marks / "gate")))  # fmt: skip
    return config


def open_gate(marks: Path) -> None:
    """Let the `late` server go on starting."""
    (marks / "gate").touch()


def gone(pid: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


# --- listing and approval ------------------------------------------------------------------


def test_the_servers_tools_are_listed_and_approved_y_n_a(spawn, server: ProviderServer, demo: Path):
    server.enqueue(calls(("call_1", "demo__echo", {"text": "hi"})), Scenario(), calls(("call_2", "demo__shout", {"text": "no"})),
                   Scenario(), calls(("call_3", "demo__echo", {"text": "a"})), Scenario(),
                   calls(("call_4", "demo__echo", {"text": "b"})))  # fmt: skip
    chat = spawn("chat", "-T", "demo")
    chat.prompt()
    assert "demo (19 tools)" in chat.expect(READY)
    listed = chat.command("/tools", r"/tools enable NAME")
    assert "* demo__echo" in listed and "mcp:demo" in listed and "Say the text back." in listed
    assert "bad" in listed and "not started (/tools enable bad)" in listed
    chat.child.sendline("echo it")
    asked = chat.expect(r"\[y\]es once")
    assert "? demo__echo (mcp:demo) wants to run:" in asked and "text: hi" in asked
    assert "(the server says this tool is read-only)" in asked
    chat.child.send("y")
    out = chat.expect(FOOTER)
    assert "← demo__echo ok" in out and "tool results: call_1 demo says: hi" in out
    chat.prompt()
    chat.child.sendline("shout it")
    assert "(the server says this tool is destructive)" in chat.expect(r"\[y\]es once")
    chat.child.sendline("n not so loud")
    out = chat.expect(FOOTER)
    assert "← demo__shout denied" in out
    assert "tool results: call_2 [failed] Your tool call was denied: not so loud." in out
    chat.prompt()
    chat.child.sendline("again")
    chat.expect(r"\[y\]es once")
    chat.child.send("a")
    assert "tool results: call_3 demo says: a" in chat.expect(FOOTER)
    chat.prompt()
    out = chat.say("and again")
    assert "wants to run" not in out and "tool results: call_4 demo says: b" in out
    chat.leave()


def test_without_a_terminal_a_call_is_denied_and_allow_runs_it(server: ProviderServer, golem_main, demo: Path,
                                                               marks: Path):  # fmt: skip
    """One run: demo__slow is not allowed (denied, never run), demo__echo is (``--allow demo.echo``).
    golem's own entry point in this process, its streams pipes (no terminal)."""
    server.enqueue(calls(("call_1", "demo__slow", {"seconds": 0}), ("call_2", "demo__echo", {"text": "allowed"})))
    done = golem_main("ask", "-T", "demo", "--allow", "demo.echo", "go")
    assert done.code == 0, done.err
    assert ("tool results: call_1 [failed] Your tool call was denied: it needs the user's approval and nobody can be "
            "asked here (no terminal); the user can approve it with --yes or --allow demo__slow.") in done.out  # fmt: skip
    assert not (marks / "slow-started").exists(), "a denied call never runs"
    assert "call_2 demo says: allowed" in done.out, "--allow runs the call without a question"


# --- results -------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["local:echo", "claude:claude-test"])
def test_an_image_result_reaches_the_model(server: ProviderServer, golem_main, home: Path, demo: Path, model: str):
    server.enqueue(calls(("call_1", "demo__picture", {})))
    done = golem_main("ask", "-m", model, "-T", "demo.picture", "--yes", "look")
    assert done.code == 0, done.err
    assert "the tool returned an image (image/png, " in done.err  # named where the calls are shown
    body = server.requests[-1].json
    png = base64.b64encode(b"\x89PNG").decode()[:4]
    if model.startswith("claude"):
        (result,) = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
        assert result["content"][0] == {"type": "text", "text": "a red pixel"}
        assert result["content"][1]["type"] == "image" and result["content"][1]["source"]["media_type"] == "image/png"
        assert result["content"][1]["source"]["data"].startswith(png)
    else:
        tool = [m for m in body["messages"] if m["role"] == "tool"][0]
        assert tool["content"] == "a red pixel"
        frame = body["messages"][-1]["content"]
        assert frame[1]["image_url"]["url"].startswith("data:image/png;base64," + png)
    (message,) = [m for m in stored(home) if m.role == "tool"]
    assert message.parts[0].media_type == "image/png" and message.parts[0].data.startswith(b"\x89PNG")


@pytest.fixture(scope="module")
def chat_pool(provider_server: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatPool]:
    """The module's shared chats (tests/repl/mcp_chats.py), the demo server a program each
    starts (``STDIO_DEMO``): for the tests about a conversation with it that leave the chat's
    approvals as they were."""
    with pool_with(provider_server, tmp_path_factory, STDIO_DEMO) as pool:
        yield pool


def test_is_error_is_a_failed_result_and_hostile_text_is_not_printed_raw(shared_chat, server: ProviderServer):
    server.enqueue(calls(("call_1", "demo__fail", {"why": "disk full"}), ("call_2", "demo__hostile", {})))
    taken = take_ready(shared_chat, "-T", "demo")
    chat = taken.chat
    chat.child.sendline("try")
    raw = ""
    for _ in range(2):  # each call approved once
        raw += chat.expect_raw(r"\[y\]es once")
        chat.child.send("y")
    raw += chat.expect_raw(FOOTER)
    shown = raw[raw.index("demo__hostile ok") : raw.index("tool results: call_1")]  # the result, not the reply
    assert "^[]0;pwned^G^[[2J^[[31mred^[[0m and plain" in shown and "\x1b]0;pwned" not in shown and "\x1b[2J" not in shown
    out = plain(raw)
    assert "← demo__fail failed" in out and "Error executing tool fail: disk full" in out
    assert "^[[31mred^[[0m and plain" in out and "\x1b]0;pwned" not in raw  # the reply quoting it too
    chat.prompt()
    failed = [m for m in Store(taken.home).load(taken.cid) if m.role == "tool" and m.failed]
    assert [(m.tool_call_id, m.content) for m in failed] == [("call_1", "Error executing tool fail: disk full")]


def test_arguments_that_fail_the_servers_schema_are_not_asked_about(shared_chat, server: ProviderServer):
    """A required property missing, a property of the wrong type: rejected at once for the
    model to correct, without a question and without a call to the server."""
    server.enqueue(calls(("c1", "demo__echo", {"txt": "hi"}), ("c2", "demo__echo", {"text": 3})))
    chat = take_ready(shared_chat, "-T", "demo").chat
    out = chat.say("echo it")
    assert "wants to run" not in out and "Allow?" not in out
    assert out.count("← demo__echo rejected") == 2
    assert "tool results: c1 Your tool call was rejected: invalid arguments: missing required property 'text'" in out
    said = json.dumps(server.requests[-1].json)
    assert "property 'text' must be string, not an integer" in said


# --- faults --------------------------------------------------------------------------------


def test_a_server_that_exits_at_start_is_one_line_above_the_prompt_and_the_chat_goes_on(spawn, server: ProviderServer,
                                                                                        demo: Path):  # fmt: skip
    chat = spawn("chat", "-T", "bad", "-T", "fs")
    chat.prompt()
    chat.expect("did not start[^\n]*")
    chat.prompt()  # drawn again below the line
    assert chat.screen()[2].startswith("tools: read_file, ")  # the banner's last line: the tools enabled so far
    assert chat.screen()[3:] == [  # what a person sees below the banner: one line, above the prompt
        "Starting tool servers: bad…",
        "tool server 'bad' did not start: exited at start (exit status 3; it said: demo: refusing to start (told to))",
        "you>",
    ]
    assert "echo: still here" in chat.say("still here")
    chat.leave()


def test_each_servers_line_comes_when_that_server_is_done(spawn, demo: Path):
    """A server that fails at once is said at once, not once a slow one has started."""
    demo.write_text(demo.read_text() + demo_toml("sluggish", "--name", "sluggish", "--start-gate", str(demo.parent / "never")))
    chat = spawn("chat", "-T", "sluggish", "-T", "bad")
    chat.prompt()
    chat.expect("did not start[^\n]*", timeout=30)
    chat.prompt()  # drawn again below the line
    shown = chat.screen()
    assert shown[2:] == ["Starting tool servers: sluggish, bad…",
                         "tool server 'bad' did not start: exited at start (exit status 3; it said: demo: refusing to start "
                         "(told to))", "you>"]  # fmt: skip
    chat.leave()  # stops sluggish, still starting


def test_a_server_killed_mid_call_fails_the_call_and_starts_again(spawn, server: ProviderServer, demo_process: Path,
                                                                  marks: Path):  # fmt: skip
    server.enqueue(calls(("call_1", "demo__slow", {"seconds": 60})), Scenario(), calls(("call_2", "demo__pid", {})))
    chat = spawn("chat", "-T", "demo", "--yes")
    chat.prompt()
    chat.child.sendline("wait")
    chat.expect(r"running demo__slow · \d")
    os.kill(int(wait_for(marks / "slow-started")), signal.SIGKILL)
    out = chat.expect(FOOTER)
    assert "← demo__slow failed" in out
    assert "    tool server 'demo' stopped (killed by SIGKILL) during the call; its next call starts it again" in out
    assert "tool results: call_1 [failed] tool server 'demo' stopped (killed by SIGKILL)" in out  # what the model read
    chat.prompt()
    out = chat.say("pid?")
    pid = int(out.split("tool results: call_2 ")[1].split()[0])
    chat.leave()
    assert gone(pid)  # stopped on exit, reaped


def test_ctrl_c_mid_call_cancels_it_at_the_server_and_the_call_is_repaired(spawn, server: ProviderServer,
                                                                          demo_process: Path, marks: Path,
                                                                          home: Path):  # fmt: skip
    server.enqueue(calls(("call_1", "demo__slow", {"seconds": 60})), calls(("call_2", "demo__spawn_child", {})))
    chat = spawn("chat", "-T", "demo", "--yes")
    chat.prompt()
    chat.child.sendline("wait")
    chat.expect(r"running demo__slow · \d")
    wait_for(marks / "slow-started")
    chat.child.sendintr()
    assert "Stopped demo__slow after " in chat.expect(FOOTER)
    assert wait_for(marks / "slow-cancelled") == "yes"  # MCP's cancellation reached the server
    chat.prompt()
    last = stored(home)[-1]  # the call that started gets its own truthful result (issue 24 bug 1)
    assert last.role == "tool" and last.tool_call_id == "call_1" and "stopped by the user" in last.content, last
    out = chat.say("and now?")
    assert "Repaired this conversation" not in out
    assert "tool results: call_2 " in out, out
    child = int(out.split("tool results: call_2 ")[1].split()[0])
    server_pid = int((marks / "slow-started").read_text())
    chat.leave()
    history = stored(home)
    first = [(m.tool_call_id, m.content) for m in history if m.role == "tool"][0]
    assert first[0] == "call_1" and first[1].startswith("The call was stopped by the user (Ctrl-C)")
    assert not normalize_history(history)[1].changed
    assert gone(server_pid) and gone(child)  # the server and what it started stop with the chat


def test_two_servers_with_the_same_tool_names(spawn, server: ProviderServer, demo: Path):
    server.enqueue(calls(("c1", "alpha__echo", {"text": "x"}), ("c2", "beta__echo", {"text": "y"})))
    with http_demo("alpha") as alpha, http_demo("beta") as beta:
        demo.write_text(demo.read_text() + url_toml("alpha", alpha) + url_toml("beta", beta))
        chat = spawn("chat", "-T", "alpha", "-T", "beta.echo", "--yes")
        chat.prompt()
        ready = {chat.expect(READY).split(": ")[-1] for _ in range(2)}  # one line each, as each is ready
        assert ready == {"alpha (19 tools)", "beta (19 tools)"}
        out = chat.say("both")
        assert "tool results: c1 alpha says: x; c2 beta says: y" in out
        sent = [t["function"]["name"] for t in server.requests[-1].json["tools"]]
        assert "alpha__echo" in sent and "beta__echo" in sent and "beta__shout" not in sent
        chat.leave()


def test_tools_enable_starts_a_server_mid_chat(spawn, server: ProviderServer, demo: Path):
    server.enqueue(calls(("c1", "demo__echo", {"text": "late"})))
    chat = spawn("chat", "--yes")
    chat.prompt()
    out = chat.command("/tools enable demo.echo", r"Enabled: [^\n]*")
    assert "Enabled: demo__echo." in out
    assert "tool results: c1 demo says: late" in chat.say("now")
    assert json.dumps(server.requests[-1].json["tools"][0]["function"]["name"]) == '"demo__echo"'
    chat.leave()


# --- starting in the background ----------------------------------------------------------


def test_the_prompt_does_not_wait_for_a_slow_server_and_the_first_turn_does(spawn, server: ProviderServer, demo: Path,
                                                                           marks: Path):  # fmt: skip
    server.enqueue(calls(("c1", "late__echo", {"text": "early"})))
    chat = spawn("chat", "-T", "late", "--yes")
    before = chat.prompt()
    assert "Starting tool servers: late" in before and "ready" not in before
    wait_for(marks / "starting")  # the server is up, and waits at its gate before it answers
    chat.child.sendline("typed before the server is ready")
    chat.expect("Waiting for tool servers: late")
    open_gate(marks)
    out = chat.expect(FOOTER)
    assert "late (19 tools)" in out  # said when it came, before the turn went on
    assert "tool results: c1 late says: early" in out
    sent = [t["function"]["name"] for t in server.requests[0].json["tools"]]
    assert "late__echo" in sent  # the first request already had the server's tools
    chat.prompt()
    chat.leave()


def test_ctrl_c_while_the_first_turn_waits_for_a_server_sends_nothing(spawn, server: ProviderServer, demo: Path,
                                                                     marks: Path):  # fmt: skip
    chat = spawn("chat", "-T", "late", "--yes")
    chat.prompt()
    wait_for(marks / "starting")
    chat.child.sendline("never mind")
    chat.expect("Waiting for tool servers: late")
    chat.child.sendintr()
    assert "Stopped waiting for the tool servers; nothing was sent." in chat.expect("nothing was sent[^\n]*")
    chat.prompt()
    open_gate(marks)
    assert "late (19 tools)" in chat.expect(READY)  # the server went on starting
    assert "echo: and now" in chat.say("and now")
    assert len(server.requests) == 1
    chat.leave()


def writing_to_the_terminal(pid: int) -> bool:
    """Whether process ``pid`` is in a write(2) to its stdout or stderr (blocked: nobody reads)."""
    fields = Path(f"/proc/{pid}/syscall").read_text().split()
    return len(fields) > 1 and fields[0] == "1" and int(fields[1], 16) in (1, 2)


def test_a_key_typed_while_a_servers_line_is_printed_reaches_the_prompt(spawn, demo: Path):
    """A line printed above the prompt leaves the terminal as the prompt has it (raw): a key
    typed meanwhile waits for the prompt. In cooked mode the line discipline would take
    Ctrl-D as end of file (the prompt gets a NUL instead) and echo letters into the line.
    The line here is long, and nothing reads the terminal until the key is typed, so golem is
    caught writing it."""
    chat = spawn("chat", "-T", "demo", "-T", "demo." + "x" * 60_000)
    chat.prompt()
    pid = chat.child.pid
    deadline = time.monotonic() + 30
    while not writing_to_the_terminal(pid):  # the line about the name that selects nothing
        assert time.monotonic() < deadline, "golem never wrote the server's line"
        time.sleep(0.05)
    lflag = termios.tcgetattr(chat.child.child_fd)[3]  # the terminal's mode (the pty's other side)
    chat.child.send("\x04")  # Ctrl-D at an empty prompt: leave
    left = chat.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=PATIENCE) == 0
    assert not lflag & termios.ICANON and not lflag & termios.ECHO, "cooked mode while the line was printed"
    assert left, "Ctrl-D typed while the line was printed never reached the prompt"
    assert "has no tool 'demo.xxx" in plain(chat.log.getvalue()) and "Nothing said, nothing saved." in plain(chat.child.before)


def test_leaving_while_a_server_starts_stops_it(spawn, server: ProviderServer, demo: Path, marks: Path):
    chat = spawn("chat", "-T", "late")
    chat.prompt()
    pid = int(wait_for(marks / "starting"))
    began = time.monotonic()
    out = chat.leave()
    assert time.monotonic() - began < McpServerTable().startup_timeout_sec  # it did not wait for the server (its gate stays shut)
    assert "Nothing said, nothing saved." in out and chat.child.exitstatus == 0
    assert gone(pid)  # stopped, and reaped: no zombie left behind


# --- other servers: with a token over HTTP, and one published on PyPI ---------------------


def test_a_streamable_http_server_in_a_chat(spawn, server: ProviderServer, home: Path):
    server.enqueue(calls(("c1", "remote__echo", {"text": "over http"}), ("c2", "remote__authorization", {})))
    with http_demo("web-demo") as url:
        config = home / "config.toml"
        config.write_text(config.read_text() + url_toml("remote", url, 'bearer_token_env_var = "DEMO_TOKEN"\n'))
        chat = spawn("chat", "-T", "remote", "--yes", env={"DEMO_TOKEN": "s3cret"})
        chat.prompt()
        assert "remote (19 tools)" in chat.expect(READY)
        out = chat.say("over the wire")
        chat.leave()
    assert "← remote__echo ok" in out and "tool results: c1 web-demo says: over http; c2 Bearer s3cret" in out


def test_a_published_server_from_pypi_in_golem(server: ProviderServer, golem_main, home: Path):
    """mcp-server-time (a test dependency) runs offline: golem (its entry point in this
    process) starts it, the model calls it."""
    config = home / "config.toml"
    config.write_text(config.read_text() + f'\n[mcp_servers.time]\ncommand = "{published("mcp-server-time")}"\n'
                      'args = ["--local-timezone", "Etc/UTC"]\n')  # fmt: skip
    listed = golem_main("tools")
    rows = [line.split()[:3] for line in listed.out.splitlines() if "mcp:time" in line]
    assert rows == [["time__get_current_time", "time", "mcp:time"], ["time__convert_time", "time", "mcp:time"]], listed
    arguments = {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    server.enqueue(calls(("c1", "time__get_current_time", {"timezone": "Etc/UTC"}), ("c2", "time__convert_time", arguments)))
    done = golem_main("ask", "-T", "time", "--allow", "time.convert_time", "convert")  # no terminal to ask about c1
    assert done.code == 0, done.err
    assert "tool results: c1 [failed] Your tool call was denied" in done.out, done.err
    (result,) = [m for m in server.requests[-1].json["messages"] if m["role"] == "tool" and m["tool_call_id"] == "c2"]
    said = json.loads(result["content"])
    assert said["source"]["timezone"] == "Europe/Paris" and said["target"]["timezone"] == "Asia/Tokyo"
    assert said["target"]["datetime"].startswith(said["source"]["datetime"][:10]) and said["time_difference"] == "+8.0h"
