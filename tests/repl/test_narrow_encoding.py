"""A terminal or pipe whose encoding cannot hold the reply (``PYTHONIOENCODING=ascii``, issue 25
item 13): the reply is shown escaped, kept whole, and the turn ends as any other, exit 0."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pexpect
import pytest
from golem_cli.store import Store

from tests.providerserver import ProviderServer, Reply, Scenario
from tests.repl.conftest import GOLEM, PATIENCE, golem_env, plain

pytestmark = pytest.mark.slow

REPLY = "h\u00e9llo \u2713 \u4e16\u754c"
ESCAPED = "h\\xe9llo \\u2713 \\u4e16\\u754c"
ASCII = {"PYTHONIOENCODING": "ascii"}


def kept(home: Path) -> list[str]:
    (row,) = Store(home).list()
    return [m.content for m in Store(home).load(row.id)]


@pytest.mark.parametrize("flags", [[], ["--no-stream"]])
def test_ask_into_a_pipe_escapes_and_keeps_the_reply(server: ProviderServer, home: Path, flags: list[str]):
    server.enqueue(Scenario(reply=Reply(text=REPLY)))
    done = subprocess.run([GOLEM, "ask", *flags, "greet me \u00e0 la fran\u00e7aise"], capture_output=True,
                          env=golem_env(home) | ASCII, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("ascii") == ESCAPED + "\n"
    assert done.stderr == b""
    assert kept(home) == ["greet me \u00e0 la fran\u00e7aise", REPLY]


def test_ask_on_a_terminal_escapes_and_keeps_the_reply(server: ProviderServer, home: Path):
    server.enqueue(Scenario(reply=Reply(text=REPLY)))
    child = pexpect.spawn(GOLEM, ["ask", "greet me"], env=golem_env(home) | ASCII, encoding="utf-8",
                          dimensions=(40, 120), timeout=PATIENCE)  # fmt: skip
    child.expect(pexpect.EOF)
    child.close()
    shown = plain(child.before)
    assert child.exitstatus == 0, shown
    assert ESCAPED in shown and "golem:" not in shown
    assert kept(home) == ["greet me", REPLY]


def test_chat_escapes_the_reply_and_goes_on(server: ProviderServer, home: Path):
    server.enqueue(Scenario(reply=Reply(text=REPLY)))
    child = pexpect.spawn(GOLEM, ["chat"], env=golem_env(home) | ASCII, encoding="utf-8", dimensions=(40, 120),
                          timeout=PATIENCE)  # fmt: skip
    try:
        child.expect("you>")
        child.sendline("greet me")
        child.expect(r"\d+ stored, \d+ sent")
        shown = plain(child.before)
        assert ESCAPED in shown and "error" not in shown
        child.expect("you>")
        child.sendeof()
        child.expect(pexpect.EOF)
        assert "Traceback" not in plain(child.before)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert kept(home) == ["greet me", REPLY]
