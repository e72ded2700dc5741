"""A tool server's OAuth credentials on disk: one JSON file per server in golem's state
directory (``config.paths.state_dir()/mcp-auth``), apart from the conversations (which people
sync between machines), readable by its owner only (mode 0600, in a 0700 directory), written
whole (a temporary file renamed over it), read bounded. It holds two objects, as the
authorization server gave them: ``tokens`` and ``client`` (the registration). SDK-free."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

#: The largest credentials file golem reads (a token is a few KB).
MAX_BYTES = 256 * 1024


class TokenFile:
    """The credentials of the server ``name`` under ``directory``."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.path = directory / f"{name}.json"

    def load(self) -> dict[str, Any]:
        """What is stored ({} when nothing, or when the file is not one golem can read)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return {}
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}  # a FIFO or a device: never read
            data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            return {}
        try:
            value = json.loads(data)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.load().get(key)
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` under ``key``, the file written whole with mode 0600."""
        stored = self.load()
        stored[key] = value
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(stored, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise

    def delete(self) -> bool:
        """Forget everything stored; whether there was anything."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True
