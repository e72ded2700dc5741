"""One running ``golem chat`` shared by the tests of a module that are about what happens
inside a conversation, not about a chat starting or ending: each test takes it at a new
conversation of its own (``/new``), so it pays for no process start.

A chat is started once per module and set of arguments, in a GOLEM_HOME of the module's own.
A test that fails ends the chats it took: the next test starts a fresh one, so a chat left in
a broken state by one test never makes another fail or pass. Tests about start-up, exit,
signals, the screen as a whole or settings that outlive ``/new`` (system prompt, options,
tool approvals) start their own chat with ``spawn``."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pexpect

from tests.repl.conftest import GOLEM, PATIENCE, Chat, golem_env

CID = re.compile(r"conversation ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


@dataclass(kw_only=True)
class Taken:
    """A shared chat at a new conversation: the chat, its GOLEM_HOME, the conversation's ID."""

    chat: Chat
    home: Path
    cid: str


@dataclass(kw_only=True)
class ChatPool:
    """The module's running chats, one per argument list, and the conversation each is at."""

    home: Path
    chats: dict[tuple[str, ...], tuple[Chat, str]] = field(default_factory=dict)

    def take(self, *args: str) -> Taken:
        """The chat started with ``args``, at a conversation no test has used, its
        output so far consumed (what a test expects comes after this)."""
        held = self.chats.get(args)
        if held is None or not held[0].child.isalive():
            child = pexpect.spawn(GOLEM, ["chat", *args], env=golem_env(self.home), encoding="utf-8",
                                  dimensions=(40, 120), timeout=PATIENCE)  # fmt: skip
            chat = Chat(child)
            cid = CID.search(chat.prompt())[1]
        else:
            chat, cid = held
            chat.log = io.StringIO()  # Chat.screen() replays this test's output, from /new's prompt on
            chat.child.logfile_read = chat.log
            chat.child.sendline("/new")
            said = chat.expect(r"New conversation|This conversation is still empty") + chat.prompt()
            cid = CID.search(said)[1] if "New conversation" in said else cid  # an empty one is new still
        self.chats[args] = (chat, cid)
        return Taken(chat=chat, home=self.home, cid=cid)

    def end(self, args: tuple[str, ...]) -> None:
        chat, _ = self.chats.pop(args)
        chat.child.terminate(force=True)

    def end_all(self) -> None:
        for args in list(self.chats):
            self.end(args)
