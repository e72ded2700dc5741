"""Building the index's text in the background, so that no command waits for it.

The trigram text index costs about 0.3 ms per conversation to build (half a minute at 100,000
conversations), fifty times what ``grep`` needs to read the files. So the first search after
the index is deleted, corrupted or made by another version of golem answers from the files
(textscan.py) and starts this builder, a detached process of its own, to build the index for
the searches after it. A listing that leaves many texts behind starts it too.

One builder runs at a time (``index.build.lock``); it runs at low priority, writes in short
transactions (saves by golem processes go on in between), and stops as soon as the index it
is building is deleted or replaced (someone deleted it again: the next command starts over).
Everything it does is also done by any command that needs it, so a builder killed at any
moment loses nothing.

    python -m golem_cli.store.builder ROOT [MAX_HISTORY_BYTES]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BUILD_LOCK = "index.build.lock"


def running(root: Path) -> bool:
    """Whether a builder holds the build lock of the store at ``root``."""
    from golem_cli.store.locks import LockFileUnsafe, lock_fd, open_lock_file, unlock_fd

    try:
        fd = open_lock_file(root / BUILD_LOCK, create=False)
    except FileNotFoundError:
        return False
    except (LockFileUnsafe, OSError):
        return True  # something odd is there: do not start one
    try:
        if not lock_fd(fd, blocking=False):
            return True
        unlock_fd(fd)
        return False
    finally:
        os.close(fd)


def start(root: Path, max_history_bytes: int) -> bool:
    """Start a builder for the store at ``root`` unless one is running; True when started.
    It outlives the command that starts it; its output goes nowhere."""
    if running(root):
        return False
    argv = [sys.executable, "-m", "golem_cli.store.builder", str(root), str(max_history_bytes)]
    try:
        if hasattr(os, "posix_spawn"):
            devnull = os.devnull
            os.posix_spawn(
                sys.executable,
                argv,
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
                ],
                setsid=True,
            )
        else:  # pragma: no cover - Windows
            import subprocess

            flags = getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                creationflags=flags,
                close_fds=True,
            )
    except OSError:
        return False
    return True


def build(root: Path, max_history_bytes: int) -> bool:
    """Bring the index of the store at ``root`` up to date, rows and text, unless another
    builder is at it; True when it finished."""
    from golem_cli.store.files import CONVERSATIONS_DIR, INDEX_NAME
    from golem_cli.store.index import Index
    from golem_cli.store.locks import LockFileUnsafe, lock_fd, open_lock_file

    conversations = root / CONVERSATIONS_DIR
    if not conversations.is_dir():
        return True
    try:
        fd = open_lock_file(root / BUILD_LOCK)
    except (LockFileUnsafe, OSError):
        return False
    try:
        if not lock_fd(fd, blocking=False):
            return False
        index = Index(conversations, root / INDEX_NAME, limit=max_history_bytes)
        try:
            index.open()
            ours = _identity(index.path)
            if ours is None:  # deleted as soon as opened: building it would go on unseen
                return False

            def gone() -> bool:  # deleted or replaced since: whoever did it starts over
                return _identity(index.path) != ours

            return index.refresh(stop=gone) and index.update_texts(stop=gone)
        finally:
            index.close()
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race with an opener)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__ or "")
        return 2
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    limit = int(argv[1]) if len(argv) > 1 else None
    from golem_cli.store.files import MAX_HISTORY_BYTES

    try:
        build(Path(argv[0]), limit or MAX_HISTORY_BYTES)
    except Exception:  # a cache: whatever went wrong, the next command redoes it
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
