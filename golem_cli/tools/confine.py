"""Every file tool works inside one directory, its root (the working directory, or the
configured ``tool_root``). A path the model gives is refused when it leads outside, whether
by ``..``, by an absolute path, or through a symbolic link; the refusal is a ``failed``
result the model reads, naming the root.

Paths are resolved with the links followed (``Path.resolve``), so a link inside the root that
points outside is caught the same as a path that says so. Writes also open the final
component with ``O_NOFOLLOW``, so a link planted between the check and the write is not
followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from golem_cli.core.tools import ToolFailed


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

    def show(self, path: Path) -> str:
        """``path`` as the model should write it: relative to the root, ``.`` for the root."""
        try:
            rel = path.relative_to(self.path)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."
