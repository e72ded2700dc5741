"""``search_files``: a regular expression over the files of the walk, in a process of its own.

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` takes exponential time on a line of
forty ``a`` and a ``!``, and while it matches it holds the GIL, so nothing else in golem runs,
not even the handler of Ctrl-C. A thread cannot be stopped either. So the search runs in a
child process (``python -P -c ...``) that golem can always stop: at the
search's deadline, on Ctrl-C, and when golem leaves. The child also stops itself: an alarm
at its deadline (the default action of SIGALRM ends a process even mid-match) and, on Linux,
``PR_SET_PDEATHSIG`` when golem dies.

The child walks (``walk.Walk``: ignore files, regular files only, an entry budget), skips
binary files and files over ``MAX_SEARCHED_FILE`` (named in the result, never silently), and
writes one JSON line per finding, so what it found before a deadline is not lost.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import IO, Any

MAX_MATCHES = 200
MAX_LINE = 400  # characters of one matching line shown
MAX_SEARCHED_FILE = 8 * 1024 * 1024  # bytes: larger files are not searched (and are named)
DEFAULT_DEADLINE = 30.0  # seconds a search may take
LARGE_NAMED = 5  # large files named in the result; the rest are counted


class _WorkerRoot:
    """The root as the worker needs it (``confine.Root`` would load golem's core with it)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def show(self, path: Path) -> str:
        try:
            return path.relative_to(self.path).as_posix() or "."
        except ValueError:
            return str(path)


def search(root: _WorkerRoot, start: Path, regex: re.Pattern[str], out: IO[str]) -> None:
    """Write the findings under ``start`` as JSON lines: ``{"m": "path:line: text"}``,
    ``{"large": "path"}``, then ``{"end": files searched, "truncated": walk cut short}``."""
    from golem_cli.tools.regular import open_regular
    from golem_cli.tools.walk import Walk, is_binary

    def emit(value: dict[str, Any]) -> None:
        out.write(json.dumps(value, ensure_ascii=False) + "\n")
        out.flush()

    walk = Walk(root, start)
    files = matches = 0
    for found in walk:
        try:
            if found.stat().st_size > MAX_SEARCHED_FILE:
                emit({"large": root.show(found)})
                continue
            if is_binary(found):
                continue
            with open(open_regular(found), encoding="utf-8", errors="replace") as f:
                files += 1
                for number, line in enumerate(f, 1):
                    if regex.search(line):
                        text = line.rstrip("\r\n")
                        if len(text) > MAX_LINE:
                            text = text[:MAX_LINE] + "…"
                        emit({"m": f"{root.show(found)}:{number}: {text}"})
                        matches += 1
                        if matches >= MAX_MATCHES:
                            break
        except OSError:
            continue
        if matches >= MAX_MATCHES:
            break
    emit({"end": files, "truncated": walk.truncated})


def worker_main() -> None:
    """The child: arguments as one JSON object on stdin, findings on stdout."""
    args = json.loads(sys.stdin.read())
    _die_with_parent(args["parent"])
    _alarm(args["deadline"])
    flags = re.IGNORECASE if args["ignore_case"] else 0
    regex = re.compile(args["pattern"], flags)
    search(_WorkerRoot(args["root"]), Path(args["start"]), regex, sys.stdout)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # golem died before the line above
        os._exit(1)


def _alarm(deadline: float) -> None:
    import signal

    if hasattr(signal, "alarm"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # ends the process, even mid-match
        signal.alarm(max(1, int(deadline) + 2))


# --- golem's side -------------------------------------------------------------------------


class Found:
    """What a search found: its lines, the large files it skipped, how it ended."""

    def __init__(self) -> None:
        self.matches: list[str] = []
        self.large: list[str] = []
        self.files = 0
        self.walk_truncated = False
        self.timed_out = False
        self.complete = False


_WORKER = "from golem_cli.tools.search import worker_main; worker_main()"


async def run_search(
    root: Path, start: Path, pattern: str, *, ignore_case: bool, deadline: float = DEFAULT_DEADLINE
) -> Found:
    """Search in a child process; what it found by the deadline (``timed_out`` then set).
    Cancellation (Ctrl-C) kills the child at once."""
    import asyncio

    from golem_cli.tools.shell import kill_group, live_groups

    request = {"root": str(root), "start": str(start), "pattern": pattern, "ignore_case": ignore_case,
               "deadline": deadline, "parent": os.getpid()}  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-c", _WORKER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True, limit=1 << 20,
    )  # fmt: skip
    live_groups.add(proc.pid)
    found = Found()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()
        try:
            async with asyncio.timeout(deadline):
                while line := await proc.stdout.readline():
                    item = json.loads(line)
                    if "m" in item:
                        found.matches.append(item["m"])
                        if len(found.matches) >= MAX_MATCHES:
                            break
                    elif "large" in item:
                        found.large.append(item["large"])
                    elif "end" in item:
                        found.files, found.walk_truncated, found.complete = item["end"], item["truncated"], True
        except TimeoutError:
            found.timed_out = True
    finally:
        kill_group(proc.pid)
        live_groups.discard(proc.pid)
        try:
            async with asyncio.timeout(2):
                await proc.wait()  # no zombie left
        except TimeoutError:
            pass
    return found
