"""The chat and its terminal (``repl/terminal.py``): keys typed before the prompt reaches them
reach it as if typed later, in order, once, not echoed by the terminal from the banner on; the
terminal's mode is the one it had when golem ends, however it ends (Ctrl-C, Ctrl-D, an error,
SIGTERM, SIGHUP). Behaviour tests on the real program in a pseudo-terminal."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pexpect
import pytest
from golem_cli.store import Store

from tests.repl.conftest import GOLEM, Chat, golem_env, plain
from tests.repl.test_chat import banner_cid

FOOTER = r"\d+ stored, \d+ sent[^\n]*"
BANNER = r"golem \d+\.\d+"

def in_shell(home: Path, script: str) -> Chat:
    """``script`` run by bash on the pseudo-terminal, ``$0`` the golem program (so ``stty -g``
    can read the terminal's mode before and after golem)."""
    child = pexpect.spawn("bash", ["--norc", "--noprofile", "-c", script, GOLEM], env=golem_env(home),
                          encoding="utf-8", dimensions=(40, 120), timeout=15)  # fmt: skip
    return Chat(child)


STTY = r"[0-9a-f]+(?::[0-9a-f]+){10,}"


def modes_around(chat: Chat) -> tuple[str, str, str]:
    """The terminal's mode before golem, its exit status, the mode after (``in_shell`` with
    ``MODES_AROUND``)."""
    chat.child.expect(pexpect.EOF, timeout=20)
    out = plain(chat.log.getvalue())
    before = re.search(rf"before=({STTY})", out)
    status = re.search(r"status=(\d+)", out)
    after = re.search(rf"after=({STTY})", out)
    assert before and status and after, out
    return before.group(1), status.group(1), after.group(1)


MODES_AROUND = 'echo "before=$(stty -g)"; "$0" chat "$@"; echo "status=$?"; echo "after=$(stty -g)"'


def test_text_typed_right_after_spawn_is_the_first_prompt_once_in_order(spawn, home):
    chat = spawn("chat")
    chat.child.setecho(False)  # what the terminal echoes before golem starts is no program's doing
    chat.child.send("first words\r")
    out = chat.expect(FOOTER)
    cid = banner_cid(out)
    chat.prompt()
    chat.child.send("second\r")
    chat.expect(FOOTER)
    chat.prompt()
    screen = chat.screen()
    assert screen.count("you> first words") == 1 and screen.count("echo: first words") == 1, screen
    assert screen.index("you> first words") < screen.index("echo: first words") < screen.index("you> second")
    chat.leave()
    assert [m.content for m in Store(home).load(cid)] == ["first words", "echo: first words", "second", "echo: second"]


def test_text_typed_as_the_banner_shows_is_not_echoed_twice(spawn, home):
    chat = spawn("chat")
    chat.expect(BANNER)
    chat.child.send("as it shows\r")  # the terminal echoes as usual until golem holds the keys
    chat.expect(FOOTER)
    chat.prompt()
    screen = chat.screen()
    assert sum("as it shows" in line for line in screen) == 2, screen  # the prompt and the reply
    assert screen.count("you> as it shows") == 1
    chat.leave()


def test_ctrl_c_typed_as_the_chat_starts_leaves_the_terminal_as_it_was(home):
    """Before the prompt runs, Ctrl-C ends the chat (130); once it runs, it clears the line and
    Ctrl-D leaves (0). Either way: no traceback, and the terminal's mode is the one it had."""
    chat = in_shell(home, MODES_AROUND)
    chat.expect(BANNER)
    chat.child.send("\x03")
    chat.child.sendeof()  # the prompt's Ctrl-D, if the Ctrl-C was the prompt's
    before, status, after = modes_around(chat)
    assert status in ("0", "130") and before == after
    assert "Traceback" not in plain(chat.log.getvalue())


def test_ctrl_d_typed_at_once_leaves_with_the_terminal_as_it_was(home):
    chat = in_shell(home, MODES_AROUND)
    chat.expect(BANNER)
    chat.child.sendeof()
    before, status, after = modes_around(chat)
    assert status == "0" and before == after
    assert "Nothing said, nothing saved." in plain(chat.log.getvalue())


def test_a_bad_model_is_one_line_and_the_terminal_is_restored(home):
    chat = in_shell(
        home, 'echo "before=$(stty -g)"; "$0" chat -m nosuch:model; echo "status=$?"; echo "after=$(stty -g)"'
    )
    before, status, after = modes_around(chat)
    assert status == "1" and before == after
    out = plain(chat.log.getvalue())
    lines = [line for line in out.splitlines() if "golem:" in line]
    assert len(lines) == 1 and lines[0].startswith("golem: ") and "unknown provider 'nosuch'" in lines[0], out
    assert "Traceback" not in out


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_terminating_signal_restores_the_terminal_and_ends_golem_with_its_status(home, signum):
    chat = in_shell(home, MODES_AROUND)
    chat.prompt()
    shell = chat.child.pid
    children = Path(f"/proc/{shell}/task/{shell}/children")
    deadline = time.monotonic() + 10
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    (golem,) = children.read_text().split()
    chat.child.send("reading")
    chat.expect("reading")  # prompt_toolkit shows it: its prompt has taken over
    os.kill(int(golem), signum)
    before, status, after = modes_around(chat)
    assert status == str(128 + signum) and before == after


def test_piped_input_gets_no_prompt(home):
    chat = in_shell(home, 'printf "piped\\n" | "$0" chat')
    chat.child.expect(pexpect.EOF, timeout=20)
    out = plain(chat.log.getvalue())
    assert "echo: piped" in out and "you>" not in out
