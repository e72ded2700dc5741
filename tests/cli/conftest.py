"""Running golem as users do: the console script in a subprocess, or ``main()`` in-process
where a subprocess adds nothing, each in the test's own ``home`` (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.inprocess import Result

_SCRIPT = Path(sys.executable).parent / "golem"
GOLEM_CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "golem_cli"]
_CLEARED = ("FORCE_COLOR", "GOLEM_FORCE_TERMINAL", "NO_COLOR", "GOLEM_DEBUG", "GOLEM_MODEL", "COLUMNS")


@pytest.fixture
def golem(home):
    """``golem(*args, input=..., env=...)``: the console script in a subprocess."""

    def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
        full_env = os.environ | {"GOLEM_HOME": str(home)} | (env or {})  # the environment ``home`` left
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            [*GOLEM_CMD, *args], input=data if data is not None else b"", capture_output=True, env=full_env, timeout=timeout
        )
        return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"), proc.stdout)

    return run


@pytest.fixture
def golem_in(home, capsys):
    """``golem_in(*args)``: ``golem_cli.__main__.main`` in this process under pytest's capture,
    for a test that patches the process around the call (``os.write``, ``input()``, a terminal
    on stdin); ``golem_main`` for every other in-process call."""
    from golem_cli.__main__ import main

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def assert_one_line_error(result: Result) -> None:
    """A failure is one line on stderr starting with ``golem:`` and never a traceback."""
    assert "Traceback" not in result.err, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("golem: "), result.err
