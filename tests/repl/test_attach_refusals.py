"""Issue 8.6 in the REPL: ``/attach`` of what is not a regular file is one error line at
once, and the chat goes on (the next prompt goes out without it)."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.slow


def test_attach_refuses_special_files_and_the_chat_goes_on(spawn, server, tmp_path):
    os.mkfifo(tmp_path / "pipe.png")  # reading it would wait forever
    (tmp_path / "zero.png").symlink_to("/dev/zero")  # reading it would never end
    chat = spawn("chat")
    chat.prompt()
    for source, words in (
        (tmp_path / "pipe.png", "is a FIFO (named pipe), not a file golem attaches"),
        (tmp_path / "zero.png", "is a device, not a file golem attaches (a link to /dev/zero)"),
        ("/proc/self/environ", "is a file the system makes up (/proc, /sys), not a file golem attaches"),
        (tmp_path, "is a directory, not a file golem attaches"),
    ):
        chat.command(f"/attach {source}", r"golem\s+attaches")
        shown = " ".join(" ".join(chat.screen()).split())  # as wrapped on the screen
        assert words in shown, shown
    assert "Attached to your next prompt: nothing" in chat.command("/attach", "Usage")
    assert "echo: still here" in chat.say("still here")
    assert server.requests[-1].json["messages"][-1]["content"] == "still here"
    chat.leave()
