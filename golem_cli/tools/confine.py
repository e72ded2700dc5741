"""Every file tool works inside one directory, its root (the working directory, or the
configured ``tool_root``). A path the model gives is refused when it leads outside, whether
by ``..``, by an absolute path, or through a symbolic link; the refusal is a ``failed``
result the model reads, naming the root.

Paths are resolved with the links followed (``Path.resolve``), so a link inside the root that
points outside is caught the same as a path that says so. Resolving is only the check: a
file is then reached from a descriptor of the root, one component at a time, each directory
opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one before (``openat``), and the
file itself, a new file and a rename relative to its directory's descriptor. A directory of
the path swapped for a link after the check (another process racing the tool) is then a
link where none may be, refused, never followed out of the root (ADR 0026).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from golem_cli.core.tools import ToolFailed

_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: The longest path Linux opens by name: one walked a component at a time could be longer, but
#: no other program could open it.
PATH_MAX = 4096
#: Where ``openat`` is missing (Windows), a path is opened by name after its check.
WALKS = os.open in os.supports_dir_fd


class Root:
    """The directory file tools are confined to."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).resolve()

    def __repr__(self) -> str:
        return f"Root({str(self.path)!r})"

    def resolve(self, given: str) -> Path:
        """The real path ``given`` names (relative to the root unless absolute), or
        ``ToolFailed`` when it is outside the root."""
        if "\x00" in given:
            raise ToolFailed("a path cannot contain a NUL character")
        text = given.strip() or "."
        target = Path(os.path.expanduser(text)) if text.startswith("~") else Path(text)
        joined = target if target.is_absolute() else self.path / target
        try:
            real = joined.resolve()
        except (OSError, RuntimeError) as e:  # a symlink loop
            raise ToolFailed(f"cannot resolve {given!r}: {e}") from None
        if real != self.path and not real.is_relative_to(self.path):
            raise ToolFailed(
                f"{given!r} is outside the directory the file tools may use ({self.path}); "
                "use a path inside it (relative paths start there)"
            )
        return real

    @contextmanager
    def directory(self, real: Path, *, create: bool = False, named: Path | None = None) -> Iterator[int | None]:
        """A descriptor of the directory ``real`` (a path ``resolve`` returned), reached from
        the root one component at a time without following a link; missing directories are
        made on the way when ``create``. ``ToolFailed`` naming ``named`` (the file wanted in
        it) when a component is a link (it was swapped since the check); the ``OSError``
        otherwise (not found, not a directory). None where there is no ``openat``."""
        if not WALKS:  # pragma: no cover - Windows
            if create:
                real.mkdir(parents=True, exist_ok=True)
            yield None
            return
        if len(os.fsencode(real)) >= PATH_MAX:  # what opening it by name would refuse, before making anything
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(real))
        fd = os.open(self.path, _DIRECTORY)
        try:
            for name in real.relative_to(self.path).parts:
                parent, fd = fd, -1
                try:
                    fd = self._step(parent, name, named or real, create)
                finally:
                    os.close(parent)
            yield fd
        finally:
            if fd >= 0:
                os.close(fd)

    def _step(self, fd: int, name: str, real: Path, create: bool) -> int:
        """The descriptor of directory ``name`` in the directory ``fd``."""
        if create:
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
        try:
            return os.open(name, _DIRECTORY, dir_fd=fd)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR) and is_link(name, fd):
                raise self.swapped(real) from None
            raise

    def swapped(self, real: Path) -> ToolFailed:
        """The refusal of a path a link was planted in after it was checked."""
        return ToolFailed(
            f"{self.show(real)!r} changed while golem opened it: a part of the path is now a link, which may lead "
            f"outside the directory the file tools may use ({self.path}); nothing was read or written"
        )

    def show(self, path: Path) -> str:
        """``path`` as the model should write it: relative to the root, ``.`` for the root."""
        try:
            rel = path.relative_to(self.path)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."


def is_link(name: str, dir_fd: int | None) -> bool:
    """Whether ``name`` in the directory ``dir_fd`` is a symbolic link now."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
