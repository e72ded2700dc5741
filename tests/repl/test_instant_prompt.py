"""The chat's prompt is drawn before prompt_toolkit loads (instant_prompt.py, ADR 0017), and
every key typed meanwhile reaches prompt_toolkit as if typed later: in order, once, nothing
echoed by the terminal; Ctrl-C is the prompt's Ctrl-C, not a signal in the middle of an
import; the terminal's mode is the one it had when golem ends, however it ends.

Behaviour tests on the real program in a pseudo-terminal. Where the order of events matters,
prompt_toolkit's import is held back by a gate (an import hook) the test opens, so nothing
depends on how fast the machine is."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pexpect
import pytest
from golem_cli.store import Store

from tests.repl.conftest import GOLEM, Chat, golem_env, plain
from tests.repl.test_chat import banner_cid

FOOTER = r"\d+ stored, \d+ sent[^\n]*"
BANNER = r"golem \d+\.\d+"

#: golem with the import of module argv[2] held until the file argv[1] exists.
GATED = """
import os, sys, time

class Gate:
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[2]:
            sys.meta_path.remove(self)
            while not os.path.exists(sys.argv[1]):
                time.sleep(0.01)
        return None

sys.meta_path.insert(0, Gate())
from golem_cli.__main__ import main
sys.exit(main(sys.argv[3:]))
"""


def gated(home: Path, tmp_path: Path, *args: str, held: str = "prompt_toolkit") -> tuple[Chat, Path]:
    gate = tmp_path / "gate"
    child = pexpect.spawn(sys.executable, ["-c", GATED, str(gate), held, *args], env=golem_env(home),
                          encoding="utf-8", dimensions=(40, 120), timeout=15)  # fmt: skip
    return Chat(child), gate


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


@pytest.mark.parametrize("held", ["prompt_toolkit", "asyncio"])
def test_the_prompt_is_on_screen_before_the_repl_loads_and_keys_wait_for_it(home, tmp_path, held):
    """Neither prompt_toolkit nor the REPL's event loop (asyncio) is loaded to draw it."""
    chat, gate = gated(home, tmp_path, "chat", held=held)
    chat.prompt()  # drawn while the import is held at the gate
    chat.child.send("helo\x1b[Dl")  # "helo", Left, "l": "hello" once the prompt reads it
    time.sleep(0.3)
    assert chat.screen()[-1] == "you>"  # nothing echoed by the terminal meanwhile
    gate.touch()
    chat.expect("hello")
    chat.child.send("\r")
    out = chat.expect(FOOTER)
    assert "echo: hello" in out
    chat.prompt()
    screen = chat.screen()
    assert screen.count("you> hello") == 1 and screen.count("echo: hello") == 1, screen
    assert "golem resume" in chat.leave()
    assert chat.child.exitstatus == 0


def test_ctrl_c_typed_before_prompt_toolkit_loads_clears_the_line_and_the_rest_follows(home, tmp_path):
    chat, gate = gated(home, tmp_path, "chat")
    cid = banner_cid(chat.prompt())
    chat.child.send("dropped\x03kept\r")  # Ctrl-C at the prompt clears the line; not a signal
    time.sleep(0.3)
    gate.touch()
    assert "echo: kept" in chat.expect(FOOTER)
    chat.prompt()
    chat.leave()
    assert chat.child.exitstatus == 0
    assert [m.content for m in Store(home).load(cid)] == ["kept", "echo: kept"]


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


def test_ctrl_c_typed_at_once_is_ctrl_c_at_an_empty_prompt(home):
    chat = in_shell(home, MODES_AROUND)
    chat.expect(BANNER)
    chat.child.send("\x03")  # while prompt_toolkit loads: without holding, a SIGINT ends the chat
    chat.prompt()
    chat.child.send("still here\r")
    assert "echo: still here" in chat.expect(FOOTER)
    chat.prompt()
    chat.child.sendeof()
    before, status, after = modes_around(chat)
    assert status == "0" and before == after


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


def test_sigterm_restores_the_terminal_before_ending_golem(home):
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
    os.kill(int(golem), signal.SIGTERM)
    before, status, after = modes_around(chat)
    assert status == str(128 + signal.SIGTERM) and before == after


def test_not_a_terminal_gets_no_instant_prompt(home):
    chat = in_shell(home, 'printf "piped\\n" | "$0" chat')
    chat.child.expect(pexpect.EOF, timeout=20)
    out = plain(chat.log.getvalue())
    assert "echo: piped" in out and "you>" not in out
