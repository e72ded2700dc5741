"""Everything golem keeps about a conversation beside its history file, in one scheme.

The history file ``<id>.json`` holds the messages and nothing else (Go golem loads it as
``[]model.Message``). What golem knows beyond them lives beside it in ``conversations/``:

- a **document** ``<id>.<kind>.json``: one JSON object, replaced whole (tmp + rename), written
  only if the file is still the one that was read (``write_document``'s ``expected``);
- a **log** ``<id>.<kind>.jsonl``: one JSON object a line, only ever appended to (``O_APPEND``
  of whole lines); a log replaced behind the writer's back (a sync tool) gets the writer's
  records that are missing from it appended again (``Appender``).

Every document and every log record carries ``"v"`` (``VERSION``) and every log record a
``"key"``. A reader takes what it understands and skips the rest (a newer ``v``, a torn last
line, a line that is not JSON): a damaged or missing sidecar means less to say, never an
unloadable conversation. Readers are bounded like every outside file (regular files only,
``O_NOFOLLOW | O_NONBLOCK``, the kind's size limit: ``files.read_regular``).

Because every sidecar is named ``<id>.*``, ``delete``, the trash, ``restore`` and a sync tool
treat a conversation as one unit (``names_of``); ``fork`` copies what each kind's rule says
(``fork_log``, ``fork_summaries``). docs/store.md ("Sidecars") describes each kind and how to
add one.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import msgspec
from msgspec import Struct, field

from golem_cli.store.atomic import PRIVATE_FILE, ensure_private_dir, write_atomic
from golem_cli.store.files import UnreadableFile, pread, read_with_stat

#: The format version every document and log record carries as ``"v"``. It changes only for
#: an incompatible change: a reader skips what is newer than it knows (new fields are additive
#: and keep the version; msgspec ignores fields it does not know).
VERSION = 1


class Kind(Struct, frozen=True, kw_only=True):
    """One kind of sidecar: its name in ``<id>.<name>.json[l]``, whether it is a log, and the
    size its reader accepts."""

    name: str
    log: bool
    limit: int

    @property
    def suffix(self) -> str:
        return f".{self.name}.jsonl" if self.log else f".{self.name}.json"

    def file_name(self, cid: str) -> str:
        return f"{cid}{self.suffix}"


#: title, model, chat settings, lineage, and the cache of what the history file says (meta.py)
META = Kind(name="meta", log=False, limit=1 << 20)
#: the run ledger and the tool calls' start/finish records, keyed by run ID and call ID
RUNS = Kind(name="runs", log=True, limit=64 << 20)
#: compaction summaries, keyed by the run and position of the last message each covers
SUMMARIES = Kind(name="summaries", log=False, limit=16 << 20)
KINDS = (META, RUNS, SUMMARIES)

#: The name of any sidecar, of a kind this golem knows or not (a newer golem's kinds move with
#: the conversation too): ``<id>.<kind>.json`` or ``<id>.<kind>.jsonl``.
SIDECAR_NAME = re.compile(
    r"(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(?P<kind>[a-z][a-z0-9-]*)\.jsonl?\Z"
)


def names_of(directory: Path, cid: str) -> list[str]:
    """The names of every sidecar of ``cid`` in ``directory`` (one listing: for the rare
    commands that move or remove a conversation as a unit)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    prefix = f"{cid}."
    return sorted(n for n in names if n.startswith(prefix) and (m := SIDECAR_NAME.match(n)) and m["id"] == cid)


# --- the file this process knows ---------------------------------------------------------------


class FileSig(NamedTuple):
    """Which file a path named when it was read or written: a replaced file (rename) has another
    inode, a file rewritten in place another size, mtime or ctime."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileSig:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def current_sig(path: Path) -> FileSig | None:
    """The signature of what ``path`` names now (not following a symlink), None when nothing."""
    try:
        return FileSig.of(os.lstat(path))
    except FileNotFoundError:
        return None


class SidecarChanged(Exception):
    """The sidecar is no longer the file that was read: another program replaced or changed it.
    The caller reads it again and applies its kind's rule (``merge_meta``, ``newest``)."""


# --- documents ---------------------------------------------------------------------------------

T = TypeVar("T")


def read_document(path: Path, kind: Kind, type_: type[T]) -> tuple[T | None, FileSig | None]:
    """The document at ``path`` decoded as ``type_`` (None when missing, unreadable, not of that
    shape or of a newer version) and the signature of the file read (None when missing), to
    write it back only if it is still that file."""
    try:
        data, st = read_with_stat(path, kind.limit, follow=False, what=f"a {kind.name} sidecar")
    except FileNotFoundError:
        return None, None
    except UnreadableFile as e:
        return None, FileSig.of(e.stat) if e.stat is not None else current_sig(path)
    except OSError:
        return None, current_sig(path)
    return decode_document(data, type_), FileSig.of(st)


def decode_document(data: bytes, type_: type[T]) -> T | None:
    """``data`` as ``type_`` when it is a document of a version this golem reads, else None."""
    try:
        head = msgspec.json.decode(data, type=_Versioned)
        if head.v > VERSION:
            return None
        return msgspec.json.decode(data, type=type_)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def write_document(path: Path, data: bytes, *, expected: FileSig | None, durable: bool) -> FileSig:
    """Replace the document at ``path`` with ``data`` (tmp + rename), only if ``path`` still
    names the file ``expected`` describes (None: no file): else ``SidecarChanged``, nothing
    written. The check is made before the rename (a writer that takes no lock can still slip in
    between the check and the rename: ADR 0025). Returns the new file's signature."""
    written: list[FileSig] = []

    def still_expected(fd: int) -> None:
        if current_sig(path) != expected:
            raise SidecarChanged(str(path))
        written.append(FileSig.of(os.fstat(fd)))

    write_atomic(path, data, durable=durable, before_rename=still_expected)
    sig = written[0]
    return FileSig(sig.dev, sig.ino, sig.size, sig.mtime_ns, current_ctime(path, sig.ctime_ns))


def current_ctime(path: Path, fallback: int) -> int:
    """A rename changes the file's ctime on some file systems: the signature is taken after it."""
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return fallback


# --- logs --------------------------------------------------------------------------------------


class Envelope(msgspec.Struct, kw_only=True):
    """What every log record has, whatever its kind: the version, the key it merges by, and
    (in the ``runs`` log) the run it belongs to, by which ``fork`` chooses what to copy."""

    v: int = 0
    key: str = ""
    run: str = ""


class _Versioned(msgspec.Struct):
    v: int = 0


class LogRead(NamedTuple):
    """A log as read: each record's line (without its newline) and envelope, in file order, and
    the signature of the file read."""

    lines: list[bytes]
    envelopes: list[Envelope]
    sig: FileSig | None


def read_log(path: Path, kind: Kind) -> LogRead:
    """Every record of the log at ``path`` this golem understands (a torn last line, a bad line
    or a newer version is skipped); nothing for a missing or unreadable log."""
    try:
        data, st = read_with_stat(path, kind.limit, follow=False, what=f"a {kind.name} log")
    except OSError:
        return LogRead([], [], current_sig(path))
    lines: list[bytes] = []
    envelopes: list[Envelope] = []
    pieces = data.split(b"\n")
    for line in pieces[:-1]:  # the last piece has no newline: empty, or a torn write
        envelope = _envelope(line)
        if envelope is not None:
            lines.append(line)
            envelopes.append(envelope)
    return LogRead(lines, envelopes, FileSig.of(st))


def _envelope(line: bytes) -> Envelope | None:
    try:
        envelope = msgspec.json.decode(line, type=Envelope)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return envelope if 1 <= envelope.v <= VERSION and envelope.key else None


def decode_records(lines: Iterable[bytes], type_: type[T]) -> list[T]:
    """The lines of a log (``LogRead.lines``) as ``type_``, those of another shape skipped."""
    decoder = msgspec.json.Decoder(type_)
    out: list[T] = []
    for line in lines:
        try:
            out.append(decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return out


def encode_record(record: Any) -> bytes:
    """One log line (without its newline) for ``record``, which must carry ``v`` and ``key``."""
    line = msgspec.json.encode(record)
    envelope = _envelope(line)
    if envelope is None:
        raise ValueError(f"a log record needs a version 1..{VERSION} and a key: {line[:80]!r}")
    return line


class Appender(Struct):
    """Appends records to one log for one process, and remembers which file it appended to and
    what, so that when a sync tool has replaced the log since (another inode), the records it
    appended before and the new file lacks are appended again (merge by key, union)."""

    path: Path
    kind: Kind
    durable: bool = False
    _ino: tuple[int, int] | None = None
    _mine: dict[str, list[bytes]] = field(default_factory=dict)  # key -> lines this process appended

    def append(self, lines: Sequence[bytes]) -> None:
        """Append whole lines (from ``encode_record``) in one write; a torn last line left by a
        crash is ended first, so it stays one skipped line."""
        fd = _open_log(self.path)
        try:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            again: list[bytes] = []
            if self._ino is not None and ident != self._ino and self._mine:
                again = self._missing(fd)
            head = b"\n" if st.st_size and pread(fd, 1, st.st_size - 1) != b"\n" else b""
            _write_all(fd, head + b"".join(line + b"\n" for line in [*again, *lines]))
            if self.durable:
                os.fsync(fd)
            self._ino = ident
        finally:
            os.close(fd)
        for line in lines:
            envelope = _envelope(line)
            if envelope is not None:
                self._mine.setdefault(envelope.key, []).append(line)

    def _missing(self, fd: int) -> list[bytes]:
        """The lines this process appended that the log open on ``fd`` does not hold."""
        data = _read_bounded(fd, self.kind.limit)
        present = set(data.split(b"\n"))
        return [line for lines in self._mine.values() for line in lines if line not in present]


def _open_log(path: Path) -> int:
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = _open_creating_dir(path, flags)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise UnreadableFile(f"{path} is not a regular file; move it away to keep this log") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnreadableFile(f"{path} is not a regular file; move it away to keep this log", st)
    return fd


def _open_creating_dir(path: Path, flags: int) -> int:
    """A log may be a conversation's first file (the run ledger's start record is written
    before the conversation is created): its folder is made private when it is missing."""
    try:
        return os.open(path, flags, PRIVATE_FILE)
    except FileNotFoundError:
        ensure_private_dir(path.parent)
        return os.open(path, flags, PRIVATE_FILE)


def _read_bounded(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total <= limit:
        chunk = pread(fd, 1 << 20, total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def merge_logs(ours: LogRead, theirs: LogRead) -> list[bytes]:
    """The union of two copies of one log, by line: theirs in their order, then ours that they
    lack. Records of one key are folded by their reader in file order."""
    present = set(theirs.lines)
    return [*theirs.lines, *(line for line in ours.lines if line not in present)]


def fork_log(read: LogRead, runs: set[str]) -> list[bytes]:
    """The lines of the ``runs`` log a fork copies: those of runs whose IDs its messages carry."""
    return [line for line, envelope in zip(read.lines, read.envelopes, strict=True) if envelope.run in runs]


# --- summaries ------------------------------------------------------------------------------------


class Summary(msgspec.Struct, kw_only=True):
    """One compaction summary: it stands for every message of the file before its point, and is
    keyed by the run ID and position (``through``) of the last message it covers, so a repair
    or a merge that moves messages cannot misplace it (``store.summaries.locate``). Each summary
    folds the one before it in: the newest that can be placed is the one in force."""

    run: str
    through: int
    text: str = ""
    #: how many messages of ``run`` come before the last one it covers (its place in its run)
    nth: int = 0
    #: the number ``golem show`` gives the last message it covers (for people: "messages 1-N")
    number: int = 0
    #: how it came: ``compact`` (/compact, golem compact), ``auto``, ``rolling``, ``edited``
    by: str = "compact"
    model: str = ""
    focus: str = ""
    created: float = 0.0
    #: the run ID of the compaction's own model call (its record in the ``runs`` ledger)
    compact_run: str = ""


class Summaries(msgspec.Struct, kw_only=True):
    """The ``summaries`` document. On an outside change the newest document is kept (``newest``)."""

    v: int = VERSION
    changed: float = 0.0
    summaries: list[Summary] = []


def encode_document(document: Any) -> bytes:
    """A document's bytes."""
    return msgspec.json.encode(document)


def fork_summaries(doc: Summaries, copied: int) -> Summaries | None:
    """What a fork of the first ``copied`` messages keeps: the summaries covering only those."""
    kept = [s for s in doc.summaries if s.through < copied]
    return msgspec.structs.replace(doc, summaries=kept) if kept else None


def newest(ours: Summaries, theirs: Summaries) -> Summaries:
    """The rule for a document kept whole: the one changed last."""
    return ours if ours.changed >= theirs.changed else theirs


# --- moving a conversation as a unit ---------------------------------------------------------------


def move_all(names: Iterable[str], source: Path, target: Path, check: Callable[[Path], None] | None = None) -> None:
    """Rename each of ``names`` from ``source`` to ``target`` (missing ones skipped; with
    ``check``, one it refuses is left where it is)."""
    for name in names:
        try:
            if check is not None:
                check(source / name)
            os.replace(source / name, target / name)
        except (FileNotFoundError, UnreadableFile):
            continue


def remove_all(directory: Path, names: Iterable[str]) -> None:
    for name in names:
        _unlink(directory / name)


def copy_lines(path: Path, lines: Sequence[bytes]) -> None:
    """A new log holding ``lines`` (a fork's), written whole (tmp + rename, not fsynced: the
    fork's history file is made durable after it)."""
    data = b"".join(line + b"\n" for line in lines)
    write_document(path, data, expected=current_sig(path), durable=False)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
