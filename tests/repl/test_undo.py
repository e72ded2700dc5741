"""See and undo what tools did (issue 24): every file a tool writes or edits is checkpointed
first; ``/undo`` puts back the files of the last turn and rewinds the conversation to before its
prompt (the turns set aside stay in a fork), ``/rewind`` lists the turns and goes back further;
a file changed since by someone else is left as it is, and said; what commands did stays, and
that is said too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from golem_cli.store import Store

from tests.providerserver import ProviderServer
from tests.repl import inprocess_golem, test_tools
from tests.repl.test_chat import banner_cid
from tests.repl.test_tools import calls

project = test_tools.project
golem_run = inprocess_golem.golem_run  # golem's entry point in this process, its exit code checked

pytestmark = pytest.mark.slow


def test_undo_and_rewind_put_files_back_and_keep_the_turns_in_a_fork(
    spawn, server: ProviderServer, home: Path, project: Path
):
    chat = spawn("chat", "-T", "fs", "-T", "shell", "--yes")
    cid = banner_cid(chat.prompt())
    server.enqueue(calls(("w1", "write_file", {"path": "a.txt", "content": "one\n"}),
                         ("e1", "edit_file", {"path": "notes.txt", "old_text": "hello", "new_text": "bye"})))  # fmt: skip
    chat.say("first")
    server.enqueue(calls(("w2", "write_file", {"path": "b.txt", "content": "two\n"}),
                         ("e2", "edit_file", {"path": "notes.txt", "old_text": "bye", "new_text": "ciao"}),
                         ("r1", "run_command", {"command": "echo ran > c.txt"})))  # fmt: skip
    chat.say("second")
    assert (project / "notes.txt").read_text() == "ciao\n" and (project / "b.txt").exists()
    assert list((home / "checkpoints" / cid / "blobs").iterdir())  # the previous bytes, in the store

    out = " ".join(chat.command("/undo", "effects stay").split())
    assert "Back to before turn 2; the turns set aside are kept in conversation " in out and "Removed again (a tool created them): " in out and "b.txt" in out
    assert "Put back: " in out and "notes.txt" in out
    assert "/undo cannot revert what commands or tool servers did (run_command): their effects stay." in out
    assert not (project / "b.txt").exists() and (project / "notes.txt").read_text() == "bye\n"
    assert (project / "c.txt").exists()  # a command's effect stays
    assert [m.content for m in Store(home).load(cid) if m.role == "user"] == ["first"]
    [fork] = [row.id for row in Store(home).list() if row.meta.parent == cid]
    assert [m.content for m in Store(home).load(fork) if m.role == "user"] == ["first", "second"]  # nothing lost

    (project / "a.txt").write_text("mine\n")  # someone else changes a file the tool wrote
    listing = " ".join(chat.command("/rewind", "/rewind N goes back").split())
    assert re.search(r"1 first \(files: [^)]*a\.txt, [^)]*notes\.txt\)", listing), listing
    out = " ".join(chat.command("/rewind 1", "Back to before turn 1").split())
    assert "Left as they are, changed since the tool wrote them: " in out and "a.txt" in out
    assert (project / "a.txt").read_text() == "mine\n"  # not overwritten
    assert (project / "notes.txt").read_text() == "hello\n"  # back to before the first turn
    assert [m for m in Store(home).load(cid) if m.role == "user"] == []
    chat.say("fresh start")
    assert [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"] == ["fresh start"]
    chat.leave()


def test_a_checkpoint_that_cannot_be_kept_leaves_the_file_unchanged(
    golem_run, server: ProviderServer, home: Path, project: Path
):
    (home / "checkpoints").write_text("not a directory")  # the store cannot keep the copy
    server.enqueue(calls(("w1", "write_file", {"path": "notes.txt", "content": "gone\n"})))
    done = golem_run("chat", "-T", "fs", "--yes", input="overwrite\n")  # its prompt on standard input
    out = " ".join((done.out + done.err).split())
    assert "was not changed: its copy for /undo could not be kept" in out
    assert (project / "notes.txt").read_text() == "hello\n"
