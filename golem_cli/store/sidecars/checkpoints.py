"""What a file tool replaced, kept so that ``/undo`` and ``/rewind`` can put it back (issue 24).

Before ``write_file`` or ``edit_file`` changes a file, the file's previous bytes (or that it did
not exist) and a digest of what the tool writes are kept under the store's
``checkpoints/<conversation id>/``: the bytes once per content (``blobs/<sha256>``), and one
record per change in ``changes.jsonl``, keyed by the call and carrying its run, so that the
changes of the turns a rewind removes are found by their run IDs. This is not a conversation's
sidecar: it is this machine's undo history, not something a sync tool should carry.

Reverting a change puts the previous bytes back only when the file still holds what the tool
wrote: a file someone changed since is left as it is, and said. Bounded: a conversation keeps at
most ``MAX_CONVERSATION_BYTES`` of previous contents (its oldest are pruned first; a change
whose bytes were pruned is said to be lost when reverted), the store at most
``MAX_TOTAL_BYTES`` (the conversations written to longest ago are pruned first).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec
from msgspec import Struct, field

from golem_cli.store.atomic import ensure_private_dir, temp_name
from golem_cli.store.sidecars import VERSION, Appender, Kind, decode_records, encode_record, read_log

MAX_CONVERSATION_BYTES = 128 << 20
MAX_TOTAL_BYTES = 1 << 30
#: The largest file a revert reads to compare (the file tools change at most 32 MiB).
MAX_COMPARED = 64 << 20
CHANGES = Kind(name="changes", log=True, limit=16 << 20)


class Change(msgspec.Struct, kw_only=True):
    """One change a file tool made: the file, what it held before (``before``: its digest,
    None when it did not exist) and what the tool wrote (``after``)."""

    v: int = VERSION
    key: str  # the call ID
    run: str
    path: str
    before: str | None
    after: str
    at: float = 0.0


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Reverted(Struct, kw_only=True):
    """What a revert did, file by file (paths as recorded)."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # created by a tool: removed again
    changed_since: list[str] = field(default_factory=list)  # left as they are
    lost: list[str] = field(default_factory=list)  # their previous bytes were pruned
    failed: list[str] = field(default_factory=list)  # "path: why"


class Checkpoints:
    """The checkpoints of every conversation of one store (``Store.checkpoints``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._logs: dict[str, Appender] = {}
        #: the bytes of each conversation's previous contents, as last counted and added to
        self._sizes: dict[str, int] = {}
        #: what this process added since it last counted the whole store (None: never counted)
        self._added: int | None = None

    def keep(self, cid: str, *, run: str, call: str, path: Path, before: bytes | None, after: bytes) -> None:
        """Keep ``before`` (None: the file did not exist) for the change a call is about to
        make to ``path``; raises ``OSError`` when it cannot be kept (the change is then not made)."""
        directory = self.root / cid
        blobs = directory / "blobs"
        ensure_private_dir(blobs)
        old = digest(before) if before is not None else None
        if cid not in self._sizes:
            self._sizes[cid] = sum(st.st_size for _, st in _files(blobs))
        if before is not None and old is not None:
            blob = blobs / old
            if blob.exists():
                os.utime(blob)  # kept again: the newest to prune
            else:
                _write_new(blob, before)
                self._sizes[cid] += len(before)
                self._added = None if self._added is None else self._added + len(before)
        log = self._logs.get(cid) or self._logs.setdefault(cid, Appender(directory / "changes.jsonl", CHANGES))
        change = Change(key=call or "?", run=run, path=str(path), before=old, after=digest(after), at=time.time())
        log.append([encode_record(change)])
        self._prune(cid, old)

    def changes(self, cids: Iterable[str], runs: set[str]) -> list[Change]:
        """The changes made in ``runs``, in the checkpoints of ``cids``, oldest first."""
        found: list[Change] = []
        for cid in dict.fromkeys(cids):
            lines = read_log(self.root / cid / "changes.jsonl", CHANGES).lines
            found += [c for c in decode_records(lines, Change) if c.run in runs]
        return sorted(found, key=lambda c: c.at)

    def revert(self, cids: Iterable[str], changes: Sequence[Change]) -> Reverted:
        """Undo ``changes``, newest first: each file back to what it held before, when it still
        holds what the tool wrote."""
        out = Reverted()
        cids = list(cids)
        # Each change with its file's states before it and before its earlier changes: a file
        # in one of them is back where it was (reverted before, or the write never happened).
        seen: dict[str, frozenset[str | None]] = {}
        states = []
        for change in changes:
            seen[change.path] = seen.get(change.path, frozenset()) | {change.before}
            states.append(seen[change.path])
        for change, earlier in reversed(list(zip(changes, states, strict=True))):
            try:
                self._revert_one(cids, change, earlier, out)
            except OSError as e:
                out.failed.append(f"{change.path}: {e.strerror or e}")
        return out

    def _revert_one(self, cids: list[str], change: Change, earlier: frozenset[str | None], out: Reverted) -> None:
        path = Path(change.path)
        now = _current(path)
        if now in earlier:
            return
        if now != change.after:
            if change.path not in out.changed_since:
                out.changed_since.append(change.path)
            return
        if change.before is None:
            path.unlink()
            out.removed.append(change.path)
            return
        blob = next((p for cid in cids if (p := self.root / cid / "blobs" / change.before).exists()), None)
        if blob is None:
            out.lost.append(change.path)
            return
        _replace(path, blob.read_bytes())
        if change.path not in out.restored:
            out.restored.append(change.path)

    def forget(self, cid: str) -> None:
        """Remove a conversation's checkpoints: when the conversation is gone for good, the
        previous contents of the files its tools changed go with it."""
        self._logs.pop(cid, None)
        self._sizes.pop(cid, None)
        shutil.rmtree(self.root / cid, ignore_errors=True)

    def _prune(self, cid: str, keep: str | None) -> None:
        """The conversation's oldest previous contents beyond its bound, then the conversations
        written to longest ago beyond the store's. Counted in memory between prunings: the
        directories are listed only when a bound may be passed (a sixteenth of the store's
        bound added since the store was last counted, or at this process's first checkpoint)."""
        if self._sizes[cid] > MAX_CONVERSATION_BYTES:
            blobs = sorted(_files(self.root / cid / "blobs"), key=lambda e: e[1].st_mtime_ns)
            total = sum(st.st_size for _, st in blobs)
            for path, st in blobs:
                if total <= MAX_CONVERSATION_BYTES:
                    break
                if path.name != keep:
                    path.unlink(missing_ok=True)
                    total -= st.st_size
            self._sizes[cid] = total
        if self._added is not None and self._added < MAX_TOTAL_BYTES // 16:
            return
        self._added = 0
        others = []
        for entry in _dirs(self.root):
            size = sum(st.st_size for _, st in _files(entry / "blobs"))
            others.append((entry, size, _mtime(entry / "changes.jsonl")))
        total = sum(size for _, size, _ in others)
        for entry, size, _ in sorted(others, key=lambda e: e[2]):
            if total <= MAX_TOTAL_BYTES:
                break
            if entry.name != cid:
                shutil.rmtree(entry, ignore_errors=True)
                self._sizes.pop(entry.name, None)
                total -= size


def _current(path: Path) -> str | None:
    """The digest of what ``path`` holds now: None when nothing is there; "" when it is not a
    regular file (a link, a directory) or too large to compare, which matches no change."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_COMPARED:
        return ""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as f:
        data = f.read(MAX_COMPARED + 1)
    return digest(data) if len(data) <= MAX_COMPARED else ""


def _replace(path: Path, data: bytes) -> None:
    """``path`` holding ``data`` (tmp + rename beside it), keeping its mode."""
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.chmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_new(blob: Path, data: bytes) -> None:
    tmp = temp_name(blob)
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), "wb") as f:
        f.write(data)
    os.replace(tmp, blob)


def _files(directory: Path) -> list[tuple[Path, os.stat_result]]:
    try:
        with os.scandir(directory) as entries:
            return [(Path(e.path), e.stat(follow_symlinks=False)) for e in entries if e.is_file(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _dirs(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
