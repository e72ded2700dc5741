"""`golem resume` of a long conversation (issue 13): the lock is taken and a locked
conversation offers its fork before the prompt; the history is loaded and repaired while the
prompt is already on screen, and the repair report is printed above it when ready. Nothing is
lost: the first turn runs on the whole repaired history, Ctrl-D at once saves the repair and
frees the lock, a file that is not a history is one line and the command's exit code."""

from __future__ import annotations

import re

import pexpect
from golem_cli.cli.commands.chat import LOAD_AFTER_THE_PROMPT
from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import INTERRUPTED, Message, ToolCall
from golem_cli.store import Store

from tests.repl.conftest import plain

FOOTER = r"\d+ stored, \d+ sent[^\n]*"
TEXT = "a long conversation, line after line of it. " * 12


def long_damaged(home) -> tuple[str, int]:
    """A conversation over LOAD_AFTER_THE_PROMPT whose last round left a call unanswered
    and a result without its call: the ID and the number of messages."""
    history: list[Message] = []
    size = 0  # the characters of content so far (a running total: summing each time is quadratic)
    while size < 2 * LOAD_AFTER_THE_PROMPT:
        n = len(history)
        history += [Message(role="user", content=f"{n}: {TEXT}"), Message(role="assistant", content=f"{n}: {TEXT}")]
        size += len(history[-2].content) + len(history[-1].content)
    history += [
        Message(role="user", content="roll twice"),
        Message(role="assistant", tool_calls=[ToolCall("call-1", "roll", '{"sides":6}'), ToolCall("call-2", "roll", "{}")]),
        Message(role="tool", content="4", tool_call_id="call-1", tool_name="roll"),
        Message(role="tool", content="orphaned", tool_call_id="ghost", tool_name="roll"),
    ]  # fmt: skip
    store = Store(home)
    cid = store.create(history, model="local:echo")
    assert store.messages_path(cid).stat().st_size > LOAD_AFTER_THE_PROMPT
    return cid, len(history)


def test_the_prompt_comes_first_and_the_report_above_it(spawn, home, server):
    cid, n = long_damaged(home)
    chat = spawn("resume", cid[:8])
    first = chat.prompt()
    assert f"conversation {cid}" in first and "Repaired" not in first  # the prompt did not wait
    report = chat.expect(r"dropped[^\n]*ghost[^\n]*")
    assert "Repaired this conversation before continuing" in report
    assert re.search(r"synthesized[^\n]*call-2", report, re.I)
    chat.prompt()
    out = chat.say("go on")
    assert "echo: go on" in out
    assert f"{n + 2} stored" in out  # the repaired history: one result made, one dropped, then the turn
    chat.leave()
    stored = Store(home).load(cid)
    assert [(m.tool_call_id, m.content) for m in stored if m.role == "tool"] == [("call-2", INTERRUPTED), ("call-1", "4")]
    assert stored[-1].content == "echo: go on"
    sent = server.requests[-1].json["messages"]
    # the repaired round went out whole (on the wire, results follow their calls: ADR 0007)
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["call-1", "call-2"]


def test_a_prompt_typed_at_once_runs_on_the_loaded_and_repaired_history(spawn, home, server):
    cid, n = long_damaged(home)
    chat = spawn("resume", cid[:8])
    chat.child.sendline("straight away")
    out = chat.expect(FOOTER, timeout=60)
    assert "Repaired this conversation before continuing" in out and "echo: straight away" in out
    assert f"{n + 2} stored" in out
    chat.prompt()
    chat.leave()
    stored = Store(home).load(cid)
    assert [m.content for m in stored[-2:]] == ["straight away", "echo: straight away"]
    assert not normalize_history(stored)[1].changed


def test_ctrl_d_at_once_saves_the_repair_and_frees_the_lock(spawn, home):
    cid, n = long_damaged(home)
    chat = spawn("resume", cid[:8])
    chat.prompt()
    chat.child.sendeof()  # while the history is still loading
    chat.child.expect(pexpect.EOF, timeout=60)
    out = plain(chat.child.before)
    chat.child.close()
    assert chat.child.exitstatus == 0 and "Saved. Resume with" in out and "Traceback" not in out
    store = Store(home)
    stored = store.load(cid)
    assert len(stored) == n and not normalize_history(stored)[1].changed  # the repair was saved
    lock = store.lock(cid)  # free: not held, nor left behind by a process that did not release it
    assert lock.took_over is None
    lock.release()


def test_a_long_conversation_open_elsewhere_still_offers_a_fork(spawn, home):
    cid, n = long_damaged(home)
    first = spawn("resume", cid[:8])
    first.prompt()
    first.expect("Repaired this conversation")
    second = spawn("resume", cid[:8])
    second.expect(r"open in another golem process")
    second.expect(r"Fork it and continue in the copy\? \[y/N\]")
    second.child.sendline("y")
    out = second.prompt()
    new = re.search(r"Forked \S+ into ([0-9a-f-]{36})", out).group(1)
    assert "echo: in the copy" in second.say("in the copy")
    second.leave()
    first.leave()
    store = Store(home)
    assert store.meta(new).parent == cid
    assert [m.content for m in store.load(new)][-2:] == ["in the copy", "echo: in the copy"]


def test_a_long_file_that_is_not_a_history_is_one_line_and_keeps_the_file(spawn, home):
    cid, _ = long_damaged(home)
    path = Store(home).messages_path(cid)
    broken = path.read_bytes()[:-200]  # cut off: not JSON any more
    path.write_bytes(broken)
    chat = spawn("resume", cid[:8])
    chat.child.expect(pexpect.EOF, timeout=60)
    out = plain(chat.child.before)
    chat.child.close()
    assert chat.child.exitstatus == 2, out
    assert len([line for line in out.splitlines() if line.startswith("golem:")]) == 1 and "Traceback" not in out
    assert path.read_bytes() == broken
    lock = Store(home).lock(cid)
    assert lock.took_over is None  # the lock was released, not left behind
    lock.release()
