"""``run_command``: a shell command in the root directory, in a process group of its own.

The command runs as ``/bin/sh -c COMMAND`` (``cmd /c`` on Windows) with no standard input,
its standard output and error merged in the order they were written, in golem's environment
without the credentials golem holds (``command_env.py``). It starts a new session
(``setsid``), so its process group holds everything it starts: a timeout, Ctrl-C (the run's
cancellation) or golem leaving kills the whole group with SIGKILL, so nothing it started
finishes later. What it printed is kept within the output limit (``Collector``) however
much it prints.

golem killed outright (SIGKILL, a crash, SIGTERM, which runs no clean-up) cannot kill
anything, so each group carries a watchdog: a background ``sh`` in the group that waits on
a pipe whose other end only golem holds, and kills its own group when that pipe closes,
whoever closed it. What remains: a program that leaves the group on purpose (``setsid``, a
daemon that forks into a session of its own) outlives the command, as it would a terminal.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable

from msgspec import Struct, field

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.command_env import CommandEnv
from golem_cli.tools.confine import Root
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, Collector

#: Seconds a command may run unless configured otherwise (``command_timeout``).
DEFAULT_TIMEOUT = 120.0
READ_CHUNK = 65536

#: The process groups golem started and has not killed yet (commands, search workers): killed when it leaves.
live_groups: set[int] = set()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (gone already is fine)."""
    if sys.platform == "win32":  # pragma: no cover - no process groups; the shell itself
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_live_groups() -> None:
    """Kill every command group still running (golem is leaving)."""
    for pid in list(live_groups):
        kill_group(pid)
    live_groups.clear()


atexit.register(kill_live_groups)


class Shell(Struct, frozen=True):
    root: Root
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    timeout: float = DEFAULT_TIMEOUT
    environment: CommandEnv = field(default_factory=CommandEnv)

    async def run_command(
        self, command: str, timeout: float | None = None, on_output: Callable[[str], None] | None = None
    ) -> str:
        """Run ``command``; ``on_output`` hears its output as it comes (decoded, whole
        characters only)."""
        if not command.strip():
            raise ToolFailed("the command is empty")
        limit = self.timeout if timeout is None or timeout <= 0 else min(float(timeout), self.timeout)
        started = time.monotonic()
        try:
            running = await _spawn(command, self.root, self.environment.environment())
        except OSError as e:
            raise ToolFailed(f"the command could not start in {self.root.path}: {e.strerror or e}") from None
        collected = Collector(self.output_limit)
        finished = await _run(running, collected, limit, on_output)
        output = collected.text().rstrip("\n")
        if not finished:
            raise ToolFailed(
                f"timed out after {limit:g}s; the command and everything it started were killed\n{output}".rstrip()
            )
        return _outcome(running.proc.returncode, output, time.monotonic() - started)


class _Running(Struct, frozen=True):
    """A started command: its process (the leader of its group), the output golem reads, and
    golem's ends of the two pipes (None where there are none), closed when the command ends.

    golem opens the output pipe itself rather than asking asyncio for one: after a timeout,
    what a flooding command wrote and nobody read holds asyncio's pipe open (its reading is
    paused on a full buffer, so it never sees the end), and the garbage collector closes it
    after the event loop has closed ("Event loop is closed" at exit). golem's own end is
    closed when the command ends, whatever is left in it."""

    proc: asyncio.subprocess.Process
    output: asyncio.StreamReader
    output_pipe: asyncio.BaseTransport | None = None
    watchdog_pipe: int | None = None

    def release(self) -> None:
        if self.output_pipe is not None:
            self.output_pipe.close()
        if self.watchdog_pipe is not None:
            os.close(self.watchdog_pipe)


async def _run(
    running: _Running, collected: Collector, limit: float, on_output: Callable[[str], None] | None = None
) -> bool:
    """Collect the command's output until it ends (True) or ``limit`` seconds pass (False),
    telling ``on_output`` as it comes; whatever ends the wait (done, timeout, Ctrl-C), nothing
    of its group lives on, and golem's ends of its pipes (the output, the one the group's
    watchdog waits on) are closed."""
    proc = running.proc
    live_groups.add(proc.pid)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        async with asyncio.timeout(limit):
            while chunk := await running.output.read(READ_CHUNK):
                collected.add(chunk)
                if on_output is not None and (text := decoder.decode(chunk)):
                    on_output(text)
            await proc.wait()
        return True
    except TimeoutError:
        return False
    finally:
        kill_group(proc.pid)
        live_groups.discard(proc.pid)
        running.release()
        if proc.returncode is None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(_reap(proc))


def _outcome(status: int | None, output: str, elapsed: float) -> str:
    """What the model reads of a command that ended; ``ToolFailed`` when the shell could not
    run it (not found, not executable)."""
    if status in (126, 127):
        raise ToolFailed(f"exit status {status}: the shell could not run the command\n{output}".rstrip())
    head = f"exit status {status}" if status is not None and status >= 0 else f"killed by signal {-(status or 0)}"
    return f"{head} ({elapsed:.1f}s)\n{output or '(no output)'}"


#: The group's watchdog, then the command itself (``$1``) in the same process, as
#: ``/bin/sh -c COMMAND`` would run it, with no input. The shell starts with the read end of
#: golem's pipe as its input; the watchdog keeps it (as descriptor 3), the command does not.
_WITH_WATCHDOG = (
    'exec 3<&0 </dev/null; { read _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec /bin/sh -c "$1"'
)


async def _spawn(command: str, root: Root, env: dict[str, str]) -> _Running:
    """The command, started in a new group with its watchdog."""
    if sys.platform == "win32":  # pragma: no cover
        proc = await asyncio.create_subprocess_shell(
            command, cwd=root.path, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        assert proc.stdout is not None
        return _Running(proc, proc.stdout)
    output, output_pipe, output_end = await _output_pipe()
    read_end, write_end = os.pipe()  # close-on-exec: the read end reaches only this child
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", _WITH_WATCHDOG, "golem-command", command, cwd=root.path, env=env, stdin=read_end,
            stdout=output_end, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    except BaseException:
        os.close(write_end)
        output_pipe.close()
        raise
    finally:
        os.close(read_end)
        os.close(output_end)  # the command holds it now
    return _Running(proc, output, output_pipe, write_end)


async def _output_pipe() -> tuple[asyncio.StreamReader, asyncio.BaseTransport, int]:
    """A pipe for a command's output: golem's reading end as a stream and as the transport
    to close, and the writing end to hand the command."""
    read_end, write_end = os.pipe()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    try:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_end, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_end)
        raise
    return reader, transport, write_end


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait briefly for the killed shell, so no zombie is left."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(2):
            await proc.wait()
