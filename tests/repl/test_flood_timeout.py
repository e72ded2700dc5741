"""A command that floods its output until its timeout leaves nothing for golem's exit to trip
on (issue 25 item 11): no "Event loop is closed" traceback in ``ask`` or ``chat``, through the
real program, with a command that writes far faster than anything reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.providerserver import ProviderServer
from tests.repl.conftest import GOLEM, golem_env
from tests.repl.test_tools import calls

pytestmark = pytest.mark.slow

#: Three floods in one turn: each left asyncio's pipe open for the garbage collector, and each
#: that it collected only after the event loop closed printed the traceback (3 runs in 8 of
#: ``ask`` with one flood, before the fix). The pipe is full within a millisecond, so a short
#: timeout leaves the same state a long one does, for less of ``yes`` burning a core: with
#: the code before the fix, ``ask`` printed the traceback in 7 runs of 8 at 0.3 s, 2 of 4 at 1 s.
FLOOD = calls(*((f"flood{i}", "run_command", {"command": "yes", "timeout": 0.3}) for i in range(3)))


@pytest.fixture
def project(home: Path) -> Path:
    root = home / "project"
    root.mkdir()
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())
    return root


def test_ask_after_a_flood_times_out_exits_clean(server: ProviderServer, home: Path, project: Path):
    server.enqueue(FLOOD)
    done = subprocess.run([GOLEM, "ask", "-T", "shell", "--yes", "flood"], capture_output=True, text=True,
                          env=golem_env(home), timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "timed out after 0.3s" in done.stdout
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr, done.stderr


def test_chat_after_a_flood_times_out_exits_clean(spawn, server: ProviderServer, project: Path):
    server.enqueue(FLOOD)
    chat = spawn("chat", "-T", "shell", "--yes")
    chat.prompt()
    out = chat.say("flood")
    assert "timed out after 0.3s" in out
    left = chat.leave()
    assert "Traceback" not in left and "Event loop is closed" not in left, left
    assert chat.child.exitstatus == 0
