"""A chat whose save is refused (the size limit on history files, a full disk) loses no turn:
the REPL goes on with one line saying the turn is not saved and why, the next turn saves the
whole conversation again, and leaving with turns still unsaved writes the whole conversation
elsewhere (unsaved.py) and says where in one line, or says that nothing took it. The file in
the store stays as it was meanwhile.

A full disk is a file size limit set on the running golem from outside (``prlimit``): every
write past it fails as a full disk's does (EFBIG instead of ENOSPC), and lifting it is the
disk freed."""

from __future__ import annotations

import re
import resource

import pexpect
from golem_cli.core.codec.history import load_history
from golem_cli.store import Store

from tests.repl.conftest import PATIENCE, plain
from tests.repl.test_chat import banner_cid

#: The footer, saved or not.
FOOTER = r"\d+ (?:stored|not saved), \d+ sent[^\n]*"


def turn(chat, text: str) -> str:
    chat.child.sendline(text)
    out = chat.expect(FOOTER)
    chat.prompt()
    return out


def ended(chat) -> str:
    chat.child.sendeof()
    chat.child.expect(pexpect.EOF, timeout=PATIENCE)
    out = plain(chat.child.before)
    chat.child.close()
    return out


def disk_full(chat, full: bool) -> None:
    _, hard = resource.prlimit(chat.child.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(chat.child.pid, resource.RLIMIT_FSIZE, (200 if full else hard, hard))


def test_over_the_size_limit_the_chat_goes_on_and_leaving_writes_it_elsewhere(spawn, home):
    chat = spawn("chat", env={"GOLEM_MAX_HISTORY_BYTES": "3000"})
    cid = banner_cid(chat.prompt())
    assert "2 stored" in turn(chat, "short")
    big = "x" * 1500
    out = turn(chat, big)  # prompt and echo: over 3,000 bytes
    notice = re.findall(r"Not saved: .*?leaving writes it elsewhere if that fails too\.", out.replace("\n", " "))
    assert len(notice) == 1 and "over the 3,000 bytes" in notice[0] and "GOLEM_MAX_HISTORY_BYTES" in notice[0], out
    assert "4 not saved" in out
    assert "echo: more" in turn(chat, "more")  # the chat goes on
    out = ended(chat)
    assert chat.child.exitstatus == 1
    where = re.search(r"the whole conversation \(6 messages\) is in (\S+)", out.replace("\n", ""))
    assert where, out
    kept = load_history(open(where.group(1), "rb").read())
    assert [m.content for m in kept] == ["short", "echo: short", big, f"echo: {big}", "more", "echo: more"]
    assert where.group(1).startswith(str(home / "unsaved"))
    # the store's file as the last save it took left it: the big prompt (saved before the model was asked)
    assert [m.content for m in Store(home).load(cid)] == ["short", "echo: short", big]
    assert "Saved. Resume with" not in out and "Traceback" not in out


def test_a_full_disk_keeps_the_turn_and_the_next_turn_saves_it(spawn, home):
    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    turn(chat, "first")
    disk_full(chat, True)
    out = turn(chat, "second")
    assert "echo: second" in out
    assert len(re.findall(r"Not saved: File too large", out)) == 1, out
    assert [m.content for m in Store(home).load(cid)] == ["first", "echo: first"]
    disk_full(chat, False)
    out = turn(chat, "third")
    assert "Saved: the turns kept in memory are on disk now." in out and "6 stored" in out
    out = ended(chat)
    assert chat.child.exitstatus == 0 and "Saved. Resume with" in out
    stored = [m.content for m in Store(home).load(cid)]
    assert stored == ["first", "echo: first", "second", "echo: second", "third", "echo: third"]


def test_when_nothing_takes_the_conversation_it_says_so(spawn, home, tmp_path):
    chat = spawn("chat", env={"TMPDIR": str(tmp_path)})
    cid = banner_cid(chat.prompt())
    turn(chat, "first")
    disk_full(chat, True)
    assert "Not saved: File too large" in turn(chat, "second")
    out = ended(chat).replace("\n", "")
    assert chat.child.exitstatus == 1
    assert "Could not save the conversation anywhere: File too large" in out, out
    assert str(tmp_path) in out and "Traceback" not in out
    assert [m.content for m in Store(home).load(cid)] == ["first", "echo: first"]
