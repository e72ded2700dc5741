"""run_command with real processes: output, exit status, timeouts and Ctrl-C kill the whole
process group (nothing is left running), huge output stays bounded, a command that cannot
start is a failed result with the reason."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.confine import Root
from golem_cli.tools.shell import Shell, kill_live_groups, live_groups

from tests.tools.conftest import call, run, wait_gone


async def running(root: Path) -> None:
    """Wait until the command has written its pid to ``pid`` and golem has the group in its
    list (the command can write before ``run_command`` gets back from starting it)."""
    pid = root / "pid"
    async with asyncio.timeout(60):
        while not (pid.exists() and pid.read_text().strip() and int(pid.read_text()) in live_groups):
            await asyncio.sleep(0.02)


def test_output_and_exit_status(registry, root: Path):
    text = call(registry, "run_command", command="pwd; echo out; echo err >&2; exit 3")
    head, *lines = text.splitlines()
    assert head.startswith("exit status 3 (")
    assert lines == [str(root), "out", "err"]
    assert call(registry, "run_command", command="true").endswith("\n(no output)")


def test_a_command_the_shell_cannot_run_is_a_failed_result(registry):
    with pytest.raises(ToolFailed, match=r"exit status 127: the shell could not run the command\n.*not found"):
        call(registry, "run_command", command="no-such-command-golem-test")


def test_a_command_that_cannot_start_says_why(tmp_path: Path):
    gone = tmp_path / "gone"
    gone.mkdir()
    shell = Shell(Root(gone))
    gone.rmdir()
    with pytest.raises(ToolFailed, match="could not start in .*gone: No such file or directory"):
        run(shell.run_command("echo hi"))


def test_timeout_kills_the_whole_group(root: Path):
    shell = Shell(Root(root), timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ToolFailed) as info:
        run(shell.run_command("echo $$ > pid; echo started; sleep 60 & sleep 60; echo never"))
    assert time.monotonic() - started < 5
    reason = info.value.reason
    assert reason.startswith("timed out after 0.5s; the command and everything it started were killed")
    assert "started" in reason and "never" not in reason
    assert wait_gone(int((root / "pid").read_text())) == []
    assert not live_groups


def test_the_model_may_ask_for_less_time_never_more(root: Path):
    shell = Shell(Root(root), timeout=0.4)
    with pytest.raises(ToolFailed, match="timed out after 0.4s"):
        run(shell.run_command("sleep 5", timeout=100))
    with pytest.raises(ToolFailed, match="timed out after 0.2s"):
        run(shell.run_command("sleep 5", timeout=0.2))


def test_cancellation_kills_the_group_and_leaves_nothing(root: Path):
    shell = Shell(Root(root))

    async def main() -> None:
        task = asyncio.ensure_future(shell.run_command("echo $$ > pid; (sleep 60; touch late) & sleep 60"))
        await running(root)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    pgid = int((root / "pid").read_text())
    assert wait_gone(pgid) == []
    assert not (root / "late").exists()
    assert not live_groups


def test_background_processes_do_not_outlive_the_command(root: Path):
    text = run(Shell(Root(root)).run_command("echo $$ > pid; (sleep 60 >/dev/null 2>&1 &); echo done"))
    assert text.endswith("done")
    assert wait_gone(int((root / "pid").read_text())) == []


def test_ten_megabytes_of_output_are_capped(root: Path):
    shell = Shell(Root(root), output_limit=4000)
    text = run(shell.run_command("head -c 10000000 /dev/zero | tr '\\0' x; echo; echo THE-END"))
    assert len(text) < 4200
    assert "[golem: 9,996,009 of 10,000,009 bytes cut here; the tool output limit is reached]" in text
    assert text.rstrip().endswith("THE-END")


def test_leaving_golem_kills_running_groups(root: Path):
    async def main() -> int:
        task = asyncio.ensure_future(Shell(Root(root)).run_command("echo $$ > pid; sleep 60"))
        await running(root)
        kill_live_groups()  # what atexit does
        text = await task
        return int(text.split()[3]) if "signal" in text else -1

    assert run(main()) == 9  # killed by SIGKILL
    assert wait_gone(int((root / "pid").read_text())) == []


def test_a_group_dies_with_golem_even_when_golem_is_killed(root: Path):
    """SIGKILL runs no clean-up in golem: the group's watchdog sees golem's pipe close."""
    import os
    import signal
    import subprocess
    import sys

    script = (
        "import asyncio, sys\n"
        "from golem_cli.tools.confine import Root\n"
        "from golem_cli.tools.shell import Shell\n"
        "asyncio.run(Shell(Root(sys.argv[1])).run_command("
        "'echo $$ > pid; (sleep 30; touch late-child) & sleep 30; touch late'))\n"
    )
    golem = subprocess.Popen([sys.executable, "-c", script, str(root)])
    try:
        deadline = time.monotonic() + 10
        while not ((root / "pid").exists() and (root / "pid").read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        pgid = int((root / "pid").read_text())
        golem.send_signal(signal.SIGKILL)
        golem.wait()
        assert wait_gone(pgid, 20) == []
    finally:
        if golem.poll() is None:
            golem.kill()
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.killpg(int((root / "pid").read_text()), signal.SIGKILL)
    assert not (root / "late").exists() and not (root / "late-child").exists()  # and nothing of it is left to

