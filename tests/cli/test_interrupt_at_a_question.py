"""Ctrl-C at one of golem's yes/no or pick-one questions ends the command with 130 and leaves
the cursor on a fresh line: golem exits (it is not killed by the signal), so the shell does
not add the newline, and its prompt used to land after the ``^C``."""

from __future__ import annotations

import os
import signal

import pexpect
from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.cli.conftest import GOLEM_CMD


def _at_the_question(home, *args: str, question: str) -> tuple[str, int | None]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"GOLEM_HOME": str(home), "TERM": "xterm"}
    # SIGINT as a terminal gives it: a test run started in the background (CI, nohup) passes its
    # children SIGINT ignored, and Ctrl-C would then do nothing at all.
    child = pexpect.spawn(
        GOLEM_CMD[0],
        [*GOLEM_CMD[1:], *args],
        env=env,
        encoding="utf-8",
        timeout=60,  # generous: a wait costs nothing when the question comes
        dimensions=(24, 100),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    child.expect_exact(question)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def test_ctrl_c_at_the_delete_question_ends_the_line(home):
    cid = Store(home).create([Message("user", "keep me")])
    after, code = _at_the_question(home, "delete", cid, question="[y/N] ")
    assert code == 130
    assert after.endswith("\r\n") and "Traceback" not in after, repr(after)
    assert Store(home).exists(cid)


def test_ctrl_c_at_the_resume_picker_ends_the_line(home):
    Store(home).create([Message("user", "one")])
    after, code = _at_the_question(home, "resume", question="Enter leaves)? ")
    assert code == 130
    assert after.endswith("\r\n") and "Traceback" not in after, repr(after)
