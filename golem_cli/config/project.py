"""Project instructions: the ``AGENTS.md`` files of the directory the tools work in.

``AGENTS.md`` (or ``CLAUDE.md`` where a directory has no ``AGENTS.md``) in the tool root and
each parent up to the repository's root (the first directory holding ``.git``; outside a
repository, the tool root alone) join the instructions of every run, after the system
prompt, outermost first, at most ``LIMIT`` bytes in all (cut with a line saying so). They
are read again for every run, as the runtime resolves instructions, and never written into
the history file. Each file is read as any outside file: a regular file, bounded, never
blocking (``read_outside``); one that cannot be read is left out and named.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md")
LIMIT = 32 * 1024


@dataclass(frozen=True, kw_only=True)
class Instructions:
    """The project instructions of one run: the files read (outermost first), their joined
    text (cut at ``LIMIT``), and the files that could not be read, with why."""

    files: tuple[tuple[Path, int], ...] = ()  # each file and its size in bytes
    text: str = ""
    cut: bool = False
    problems: tuple[str, ...] = ()

    def summary(self, root: Path) -> str:
        """``../AGENTS.md (0.4 KB), AGENTS.md (2.1 KB)`` for the banner, each path relative to
        ``root`` ("" when there are none)."""
        return ", ".join(f"{os.path.relpath(path, root)} ({size / 1024:.1f} KB)" for path, size in self.files)


def directories(root: Path) -> list[Path]:
    """The tool root and its parents up to the repository's root, outermost first (the
    root alone outside a repository)."""
    root = root.resolve()
    chain: list[Path] = []
    for directory in (root, *root.parents):
        chain.append(directory)
        if (directory / ".git").exists():
            return list(reversed(chain))
    return [root]


def read_instructions(root: Path) -> Instructions:
    """The project instructions for a run in ``root``."""
    files: list[tuple[Path, int]] = []
    pieces: list[str] = []
    problems: list[str] = []
    for directory in directories(root):
        path = next((directory / name for name in NAMES if (directory / name).exists()), None)
        if path is None:
            continue
        try:
            data = read_outside(path, LIMIT + 1)
        except OSError as e:
            problems.append(f"{path}: {e.strerror or e}")
            continue
        files.append((path, len(data)))
        pieces.append(f"Project instructions from {path}:\n\n" + data.decode("utf-8", "replace").strip())
    text = "\n\n".join(pieces)
    cut = len(text.encode()) > LIMIT
    if cut:
        text = text.encode()[:LIMIT].decode("utf-8", "ignore")
        text += f"\n\n[project instructions cut at {LIMIT // 1024} KB; the rest of the files above is left out]"
    return Instructions(files=tuple(files), text=text, cut=cut, problems=tuple(problems))


def read_outside(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` when it is a regular file (``OSError`` otherwise),
    opened without blocking on a FIFO or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        chunks: list[bytes] = []
        left = limit
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
