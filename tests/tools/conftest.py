"""Real files, links and processes in a temporary root."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolContext
from golem_cli.tools.builtin import BuiltinSource, ToolSettings
from golem_cli.tools.registry import Registry

CTX = ToolContext(call_id="c1", tool_name="t", args="{}")


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project directory with an outside neighbour holding a secret."""
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("the secret\n")
    (project / "hello.txt").write_text("hello\nworld\n")
    return project


@pytest.fixture
def registry(root: Path) -> Registry:
    return Registry([BuiltinSource(ToolSettings(root=root, output_limit=2000, command_timeout=20))])


def call(registry: Registry, name: str, **args):
    """Run a built-in tool as the run loop does: decode the JSON arguments, then call."""
    import json

    entry = registry.entry(name)
    assert entry is not None
    return run(entry.tool.call(entry.tool.decode_args(json.dumps(args)), CTX)).text


def live_in_group(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            found.append(int(entry))
    return found


def wait_gone(pgid: int, seconds: float = 20) -> list[int]:
    """Wait until group ``pgid`` has no live process; what is still alive after ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := live_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
