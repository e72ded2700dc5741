"""Issue 25 item 1 in the chat: another program (a sync tool, Go golem) replaces the file of a
conversation open in `golem chat` (tmp + rename, no lock). The chat's next turn never overwrites
it: their messages come first and the turn follows them, or the turn goes to a fork; one line
says which, naming both conversations (ADR 0025)."""

from __future__ import annotations

import os

from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message
from golem_cli.store import Store


def replace_by_rename(path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".sync")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _open(spawn, home) -> tuple[object, str, list[Message]]:
    history = [Message("user", "first question"), Message("assistant", "first answer")]
    cid = Store(home).create(history, model="local:echo")
    chat = spawn("resume", cid[-12:])
    chat.prompt()
    return chat, cid, history


def test_two_messages_from_elsewhere_are_kept_and_the_turn_follows_them(spawn, home):
    chat, cid, history = _open(spawn, home)
    path = Store(home).messages_path(cid)
    elsewhere = [Message("user", "asked on the laptop"), Message("assistant", "answered on the laptop")]
    replace_by_rename(path, dump_history([*history, *elsewhere]))
    out = chat.say("asked here")
    assert (
        f"conversation {cid} changed on disk meanwhile (2 messages from elsewhere); your turn follows them"
        in " ".join(out.split())
    )
    chat.leave()
    stored = Store(home).read(cid)
    assert [m.content for m in stored] == [*(m.content for m in history), *(m.content for m in elsewhere),
                                           "asked here", "echo: asked here"]  # fmt: skip


def test_a_conversation_rewritten_elsewhere_is_left_alone_and_the_turn_forks(spawn, home):
    chat, cid, history = _open(spawn, home)
    path = Store(home).messages_path(cid)
    theirs = dump_history([Message("user", "an editor replaced everything")])
    replace_by_rename(path, theirs)
    out = " ".join(chat.say("asked here").split())
    assert f"conversation {cid} changed on disk meanwhile; your turn is saved in a fork" in out
    chat.say("and more")  # the chat goes on in the fork
    chat.leave()
    assert path.read_bytes() == theirs
    (fork,) = [c.id for c in Store(home).list() if c.id != cid]
    assert fork in out
    assert [m.content for m in Store(home).read(fork)] == [*(m.content for m in history), "asked here",
                                                           "echo: asked here", "and more", "echo: and more"]  # fmt: skip
    assert Store(home).meta(fork).parent == cid
