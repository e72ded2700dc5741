"""`golem fork` of a long conversation shows its prompt first, as `resume` does (ADR 0015):
the fork is made, loaded and repaired behind the prompt, the "Forked" line and the repair
report printed above it when ready. Nothing is lost: the first turn runs in the fork on its
whole repaired history, Ctrl-D at once leaves the fork made and repaired, a fork point past
the end is one line and leaves no fork behind."""

from __future__ import annotations

import re

import pexpect
from golem_cli.core.history.repair import normalize_history
from golem_cli.store import Store

from tests.repl.conftest import plain
from tests.repl.test_resume_long import FOOTER, long_damaged

ID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def test_the_prompt_comes_first_and_the_fork_and_its_report_above_it(spawn, home, server):
    parent, n = long_damaged(home)
    on_disk = Store(home).messages_path(parent).read_bytes()
    chat = spawn("fork", parent[:8])
    first = chat.prompt()
    new = re.search(rf"conversation ({ID})", first).group(1)
    assert "Forked" not in first and "Repaired" not in first  # the prompt did not wait
    report = chat.expect(r"dropped[^\n]*ghost[^\n]*")
    assert f"into {new}." in report and "Repaired this conversation before continuing" in report
    chat.prompt()
    out = chat.say("go on")
    assert "echo: go on" in out and f"{n + 2} stored" in out  # the fork's whole repaired history
    chat.leave()
    store = Store(home)
    assert store.meta(new).parent == parent
    assert [m.content for m in store.load(new)][-2:] == ["go on", "echo: go on"]
    assert store.messages_path(parent).read_bytes() == on_disk  # the parent is untouched


def test_a_prompt_typed_at_once_goes_to_the_fork(spawn, home, server):
    parent, n = long_damaged(home)
    chat = spawn("fork", parent[:8])
    chat.child.sendline("straight away")
    out = chat.expect(FOOTER, timeout=60)
    new = re.search(rf"conversation ({ID})", out).group(1)
    assert "echo: straight away" in out and f"{n + 2} stored" in out
    chat.prompt()
    chat.leave()
    stored = Store(home).load(new)
    assert [m.content for m in stored[-2:]] == ["straight away", "echo: straight away"]
    assert not normalize_history(stored)[1].changed


def test_ctrl_d_at_once_leaves_the_fork_made_and_repaired(spawn, home):
    parent, n = long_damaged(home)
    chat = spawn("fork", parent[:8])
    new = re.search(rf"conversation ({ID})", chat.prompt()).group(1)
    chat.child.sendeof()  # while the fork is being made
    chat.child.expect(pexpect.EOF, timeout=60)
    out = plain(chat.child.before)
    chat.child.close()
    assert chat.child.exitstatus == 0 and "Saved. Resume with" in out and "Traceback" not in out
    store = Store(home)
    stored = store.load(new)
    assert len(stored) == n and not normalize_history(stored)[1].changed
    lock = store.lock(new)
    assert lock.took_over is None  # released, not left behind
    lock.release()


def test_a_fork_point_past_the_end_is_one_line_and_no_fork(spawn, home, server):
    parent, n = long_damaged(home)
    chat = spawn("fork", parent[:8], "--at", str(n + 5))
    chat.child.expect(pexpect.EOF, timeout=60)
    out = plain(chat.child.before)
    chat.child.close()
    assert chat.child.exitstatus != 0
    lines = [line for line in out.splitlines() if line.startswith("golem:")]
    assert len(lines) == 1 and "fork at 1 to" in lines[0] and "Traceback" not in out, out
    assert [row.id for row in Store(home).list()] == [parent]
