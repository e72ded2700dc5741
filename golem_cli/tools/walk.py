"""An ignore-aware walk of the root, for listing and searching files.

It skips what a person would not want searched: ``.git`` (and other VCS directories), what
``.gitignore`` files exclude (each one applying below its own directory, as git reads them,
plus ``.git/info/exclude``), and, for searching, binary files (a NUL byte in the first 8 KB).
Symbolic links to directories are not followed (no loops, no escape); a linked file is
listed only when it resolves inside the root. Only regular files are yielded: a named pipe,
a device or a socket would block or never end when read (``special=True``, for listing,
yields them too, for what they are). The walk stops after ``max_entries`` entries, and says
so, so a home directory or a monorepo cannot stall a tool call.

It needs nothing of golem but a root with a ``path``: the search worker (``search.py``)
walks in a process of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct, field

from golem_cli.tools.regular import read_head

if TYPE_CHECKING:
    from typing import TypeAlias

    from pathspec import GitIgnoreSpec

    #: Ignore rules in force, each with the directory it applies below.
    Specs: TypeAlias = list[tuple[Path, GitIgnoreSpec]]


class Root(Protocol):
    """The directory walked (``confine.Root`` in golem)."""

    @property
    def path(self) -> Path: ...


SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".jj", "__pycache__", "node_modules", ".venv", ".tox", ".mypy_cache"})
BINARY_SNIFF = 8192


class Walk(Struct):
    """The files (and directories) under ``start``; ``truncated`` is set when the walk
    stopped at ``max_entries``."""

    root: Root
    start: Path
    max_entries: int = 20_000
    include_dirs: bool = False
    special: bool = False
    max_depth: int | None = None
    truncated: bool = False
    seen: int = 0
    _specs: dict[Path, GitIgnoreSpec | None] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Path]:
        if not self.start.is_dir():
            if self.special or self.start.is_file():
                yield self.start
            return
        stack: list[tuple[Path, int, Specs]] = [(self.start, 0, self._inherited(self.start))]
        while stack:
            directory, depth, specs = stack.pop()
            specs = self._with_own(directory, specs)
            subdirs: list[Path] = []
            for entry in _listing(directory):
                if not self._kept(entry, specs):
                    continue
                self.seen += 1
                if self.seen > self.max_entries:
                    self.truncated = True
                    return
                if entry.is_dir:
                    if self.include_dirs:
                        yield entry.path
                    if self.max_depth is None or depth + 1 < self.max_depth:  # the next level is shown
                        subdirs.append(entry.path)
                elif self._yielded(entry):
                    yield entry.path
            stack.extend((d, depth + 1, specs) for d in reversed(subdirs))

    def _with_own(self, directory: Path, specs: Specs) -> Specs:
        """``specs`` and the ignore rules of ``directory`` itself, which apply below it."""
        own = self._spec(directory)
        return specs if own is None else [*specs, (directory, own)]

    def _kept(self, entry: _Entry, specs: Specs) -> bool:
        """Whether the walk counts ``entry``: not a VCS or cache directory, not ignored, and
        (a link) resolving inside the root."""
        if entry.is_dir and entry.path.name in SKIPPED_DIRS:
            return False
        if _ignored(entry.path, entry.is_dir, specs):
            return False
        return not entry.is_link or self._inside(entry.path)

    def _yielded(self, entry: _Entry) -> bool:
        """Whether a kept entry that is not a directory is yielded."""
        if entry.is_link and entry.path.is_dir():
            return False  # a link to a directory inside the root: listed by its real path
        return entry.is_file or self.special

    def _inside(self, path: Path) -> bool:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return real == self.root.path or real.is_relative_to(self.root.path)

    def _spec(self, directory: Path) -> GitIgnoreSpec | None:
        if directory not in self._specs:
            lines: list[str] = []
            for name in (".gitignore", os.path.join(".git", "info", "exclude")):
                try:
                    with open(directory / name, encoding="utf-8", errors="replace") as f:
                        lines += f.read(1_000_000).splitlines()
                except OSError:
                    pass
            if lines:
                from pathspec import GitIgnoreSpec

                self._specs[directory] = GitIgnoreSpec.from_lines(lines)
            else:
                self._specs[directory] = None
        return self._specs[directory]

    def _inherited(self, start: Path) -> Specs:
        """The ignore files of the directories between the root and ``start``."""
        specs: Specs = []
        if start == self.root.path or not start.is_relative_to(self.root.path):
            return specs
        directory = self.root.path
        for part in start.relative_to(self.root.path).parts:
            spec = self._spec(directory)
            if spec is not None:
                specs.append((directory, spec))
            directory = directory / part
        return specs


class _Entry(Struct, frozen=True, kw_only=True):
    path: Path
    is_dir: bool  # a directory itself, not a link to one
    is_link: bool
    is_file: bool  # a regular file, or a link to one


def _listing(directory: Path) -> list[_Entry]:
    """The entries of ``directory`` by name; none when it cannot be read, and none whose type
    cannot be read."""
    try:
        with os.scandir(directory) as it:
            found = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    entries: list[_Entry] = []
    for entry in found:
        try:
            entries.append(_Entry(path=Path(entry.path), is_dir=entry.is_dir(follow_symlinks=False),
                                  is_link=entry.is_symlink(), is_file=entry.is_file()))  # fmt: skip
        except OSError:
            continue
    return entries


def _ignored(path: Path, is_dir: bool, specs: Specs) -> bool:
    """git's answer: the last matching pattern of the innermost file decides."""
    verdict = False
    for base, spec in specs:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        result = spec.check_file(rel)
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def is_binary(path: Path) -> bool:
    """A NUL byte in the first 8 KB, the rule git and grep use (or not a readable regular
    file at all: nothing to search)."""
    try:
        return b"\x00" in read_head(path, BINARY_SNIFF)
    except OSError:
        return True
