"""Bringing the index up to date with the conversations directory, in the command that needs it.

``golem list`` needs the rows (``Index.refresh``); ``golem search`` the rows and the text of every
conversation (``Index.catch_up``). Either is done here before the command answers, with progress
reported to the caller (``Progress``: the CLI draws a bar on a terminal when it takes more than a
moment):

- **Fresh:** one ``stat`` of the directory. Every change to it (a golem save's rename, a file
  added or removed by another program) changes its mtime; while it matches the index's record
  (and that record was not racy, index.py), the rows are current.
- **Scan:** otherwise every messages file is stat'ed (``scan``) and compared with the rows: new
  conversations, changed ones (their file or whether they have a sidecar), gone ones.
- **Rows** come from the sidecar when it describes the messages file: one open, ``fstat`` and
  read relative to the directory's descriptor, its bytes stored as they are (``quick_row``).
  Without a sidecar (a store synced in from elsewhere), the messages file is read the same way
  and decoded lean (digest.py): the metadata worked out lives in the row alone, keyed by the
  file's signature, so the next refresh reads the file only if it changed; golem writes the
  sidecar when it next saves that conversation (docs/adr/0034-the-index-holds-what-a-rebuild-works-out.md).
  Anything else (a stale or odd sidecar, a file the lean decode declines) goes through
  ``meta.read_entry``, which reads every spelling Go reads and keeps what the user chose from a
  stale sidecar. An empty table gets its secondary indexes after its rows.
- **Text:** for a search, every conversation whose words the index does not hold is read and
  decoded, in the same pass as its row when the row needs the messages too.
- **Workers:** with ``PARALLEL_TASKS`` files or more to decode, the chunks are read by one
  worker process per core (workers.py: the same ``Reader``, its outcomes sent back encoded)
  while this process writes them, in order (docs/adr/0038-a-large-rebuild-reads-in-worker-processes.md).
- Work is written in transactions of ``CHUNK`` conversations, so another golem's save waits for
  one chunk at most; each write keeps a row that changed meanwhile (the directory's mtime then
  differs from the one recorded at the end, and the next command looks again). One process
  refreshes at a time (``index.refresh.lock``): another waits, then finds the work done.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Container, Generator, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import msgspec

from golem_cli.store import workers
from golem_cli.store.atomic import is_temp_file, remove_files, remove_stale_temp_files
from golem_cli.store.digest import LEAN_BYTES, digest, words_of
from golem_cli.store.files import MESSAGES_SUFFIX, META_SUFFIX, opener
from golem_cli.store.meta import (
    Decoded,
    Entry,
    Signature,
    decode_meta,
    encode_meta,
    read_entry,
    read_messages,
    sig_of,
    sig_text,
    signature,
)
from golem_cli.store.schema import (
    INDEXES,
    INSERT_ROW,
    TEXT_BEHIND,
    UPDATE_ROW,
    Row,
    Text,
    create_indexes,
    forget,
    state,
    transaction,
    write_texts,
)
from golem_cli.store.search import indexed_text

#: What the store reports progress on: (what is being done, how many done, of how many). The
#: last call of a piece of work says ``done == total``, however it ends.
Progress = Callable[[str, int, int], None]
READING = "reading conversations"
INDEXING = "indexing conversations"
WAITING = "waiting for another golem to finish indexing"

#: Conversations read and written per transaction.
CHUNK = 500
#: A refresh with this many messages files to decode reads them in worker processes
#: (workers.py), one per core, while this process writes.
PARALLEL_TASKS = 4000
#: What a worker reads a chunk with (``chunk_reader``).
WORKER = f"{__name__}:chunk_reader"
#: A refresh that fills an empty table with this many rows builds its indexes afterwards.
BULK_ROWS = 1000
#: A sidecar larger than this (golem's are about 250 bytes) is read carefully.
QUICK_SIDECAR_BYTES = 1 << 14
RACY_SECONDS = 0.1
RACY_SECONDS_COARSE = 2.0
REFRESH_LOCK = "index.refresh.lock"

NEW, CHANGED, TEXT = "new", "changed", "text"


class Task(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """A conversation to read: its ID, its messages file's signature (None for a new one: the
    read's ``fstat`` gives it), whether its row is new, changed or only its text is behind
    (``old``: the signature its row has), and whether it has a sidecar. (A Struct: a rebuild
    makes one per file, and sends them to its workers as msgpack arrays.)"""

    cid: str
    msig: Signature | None
    kind: str
    old: str | None = None
    sidecar: bool = False


class Done(msgspec.Struct, frozen=True, kw_only=True):
    """A task's outcome: the row to write (None: it stays), and the text read with the file it
    is the text of (None: not read)."""

    task: Task
    row: Row | None
    text: tuple[str, Text] | None


# One match per directory entry: a conversation's messages file (group 3), its metadata sidecar
# (group 2) or another of its sidecars (store/sidecars: no group but the ID).
_NAME = (
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"(?:(\.meta\.json)|(\.json)|\.[a-z][a-z0-9-]*\.jsonl?)\Z"
)


def scan(directory: Path, rows: Container[str]) -> tuple[dict[str, Signature | None], set[str], list[str], list[str]]:
    """List the conversations directory: the messages files, ``stat``'ed only for the
    conversations that have a row (``rows``) to compare with (a new one's signature comes from
    the ``fstat`` of its read); sidecars are only noted. Returns (messages signatures, IDs with
    a sidecar, foreign names, temporary names). This loop is what a listing pays after a change,
    so it does one regex match per name, and a first rebuild no ``stat`` at all."""
    messages: dict[str, Signature | None] = {}
    sidecars: set[str] = set()
    foreign: list[str] = []
    temps: list[str] = []
    match = re.compile(_NAME).match  # re's cache: compiled once per process
    try:
        it = os.scandir(directory)
    except FileNotFoundError:
        return messages, sidecars, foreign, temps
    with it:
        for item in it:
            name = item.name
            m = match(name)
            if m is None:
                (temps if is_temp_file(name) else foreign).append(name)
            elif m.lastindex == 2:
                sidecars.add(name[:36])
            elif m.lastindex == 3:
                try:
                    if not item.is_file(follow_symlinks=False):  # the directory entry's type: no stat
                        foreign.append(name)
                    elif name[:36] in rows:
                        messages[name[:36]] = _stat(item.path)
                    else:
                        messages[name[:36]] = None
                except OSError:
                    continue  # removed while we looked
    for cid in sidecars:  # a new conversation's row comes from its sidecar: it needs the signature
        if cid in messages and messages[cid] is None:
            try:
                messages[cid] = _stat(f"{directory}{os.sep}{cid}{MESSAGES_SUFFIX}")
            except OSError:
                del messages[cid]  # removed while we looked
    return messages, sidecars, foreign, temps


def _stat(path: str) -> Signature:
    st = os.lstat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def entry_row(entry: Entry) -> Row:
    """The row of an entry built by the careful reader."""
    m = entry.meta
    return (
        m.id,
        m.updated,
        encode_meta(m),
        sig_text(entry.messages_sig) or "",
        sig_text(entry.sidecar_sig),
        entry.problem,
    )


class Refresh:
    """One bringing up to date of the index in ``db`` (rows, and with ``text`` every
    conversation's text) with the conversations in ``directory``."""

    def __init__(
        self,
        directory: Path,
        *,
        limit: int,
        text: bool,
        progress: Progress | None = None,
    ) -> None:
        self.directory = directory
        self.limit = limit
        self.text = text
        self.progress = progress or _silent

    def run(self, db: sqlite3.Connection) -> None:
        if self._stale(db) is not None:
            with self._one_at_a_time():
                dir_mtime_ns = self._stale(db)  # another process may have done it meanwhile
                if dir_mtime_ns is not None:
                    self._rescan(db, dir_mtime_ns)
                    return
        if self.text and db.execute(f"SELECT 1 FROM conversations WHERE {TEXT_BEHIND} LIMIT 1").fetchone():
            with self._one_at_a_time():
                behind = db.execute(f"SELECT id, msig FROM conversations WHERE {TEXT_BEHIND}").fetchall()
                tasks = [Task(cid=cid, msig=_sig(msig), kind=TEXT, old=msig) for cid, msig in behind]
                with self._workers(len(tasks)) as pool:
                    self._apply_all(db, tasks, INDEXING, pool)

    def _stale(self, db: sqlite3.Connection) -> int | None:
        """The directory's mtime when the rows may be behind it, else None."""
        try:
            dir_mtime_ns = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:
            dir_mtime_ns = -1
        return None if state(db) == (dir_mtime_ns, False) else dir_mtime_ns

    @contextmanager
    def _one_at_a_time(self) -> Iterator[None]:
        from golem_cli.store.locks import exclusive

        with ExitStack() as stack:
            waited: list[bool] = []

            def waiting() -> None:
                waited.append(True)
                self.progress(WAITING, 0, 1)

            try:
                stack.enter_context(exclusive(self.directory.parent / REFRESH_LOCK, waiting=waiting))
            except OSError:
                pass  # a store that cannot be written: its index is in memory, for this command only
            finally:
                if waited:
                    self.progress(WAITING, 1, 1)
            yield

    def _rescan(self, db: sqlite3.Connection, dir_mtime_ns: int) -> None:
        checked_at = time.time_ns()
        known = {cid: (msig, ssig, behind) for cid, msig, ssig, behind in db.execute(
            f"SELECT id, msig, ssig, {TEXT_BEHIND} FROM conversations")}  # fmt: skip
        messages, sidecars, foreign, temps = scan(self.directory, known)
        self._update_rows(db, messages, sidecars, known)
        with transaction(db):
            create_indexes(db)  # also after a bulk fill that was interrupted
            db.execute("DELETE FROM foreign_names")
            db.executemany("INSERT OR IGNORE INTO foreign_names (name) VALUES (?)", [(n,) for n in foreign])
            window = RACY_SECONDS_COARSE if dir_mtime_ns % 1_000_000_000 == 0 else RACY_SECONDS
            set_state(db, dir_mtime_ns, checked_at - dir_mtime_ns < window * 1e9)
        orphans = [f"{cid}{META_SUFFIX}" for cid in sidecars if cid not in messages]
        if orphans:  # only an interrupted delete leaves a sidecar without its messages
            remove_files(self.directory, orphans)
        if temps:
            remove_stale_temp_files(self.directory, temps)

    def _update_rows(
        self,
        db: sqlite3.Connection,
        messages: dict[str, Signature | None],
        sidecars: set[str],
        known: dict[str, tuple[str, str | None, int]],
    ) -> None:
        """Forget the conversations gone, then read and write the new and changed ones. Filling
        an empty table, every file is a task, so the workers start at once and import golem while
        this process works out the tasks; otherwise they start once the tasks are known."""
        first = not known
        bulk = first and len(messages) >= BULK_ROWS
        with ExitStack() as stack:
            pool = stack.enter_context(self._workers(_decoding(messages, sidecars, self.text))) if first else None
            with transaction(db):
                for cid, (msig, _, _) in known.items():
                    if cid not in messages:
                        forget(db, cid, msig)
            tasks = self._tasks(messages, sidecars, known)
            if bulk:  # an empty table filled at once builds its indexes afterwards, in one sort each
                with transaction(db):
                    for name in INDEXES:
                        db.execute(f"DROP INDEX IF EXISTS {name}")
            if not first:
                pool = stack.enter_context(self._workers(sum(1 for t in tasks if self.text or not t.sidecar)))
            self._apply_all(db, tasks, INDEXING if self.text else READING, pool)

    def _tasks(
        self, messages: dict[str, Signature | None], sidecars: set[str], known: dict[str, tuple[str, str | None, int]]
    ) -> list[Task]:
        """What to read: new conversations in ID order (the ID index grows at its end), then
        changed ones, then (for a search) those whose text is behind."""
        if not known:  # a first rebuild: every conversation is new
            return [Task(cid=cid, msig=messages[cid], kind=NEW, sidecar=cid in sidecars) for cid in sorted(messages)]
        new: list[Task] = []
        other: list[Task] = []
        for cid, msig in messages.items():
            row = known.get(cid)
            has = cid in sidecars
            if row is None:
                new.append(Task(cid=cid, msig=msig, kind=NEW, sidecar=has))
            elif row[0] != sig_text(msig) or (row[1] is not None) != has:
                other.append(Task(cid=cid, msig=msig, kind=CHANGED, old=row[0], sidecar=has))
            elif self.text and row[2]:
                other.append(Task(cid=cid, msig=msig, kind=TEXT, old=row[0], sidecar=has))
        new.sort(key=_cid)  # unique: the order of the tasks themselves, without comparing tuples
        return new + other

    @contextmanager
    def _workers(self, decoding: int) -> Iterator[workers.Pool | None]:
        """Worker processes, one per core, when there are cores to spare and ``decoding`` (the
        files to decode) reaches ``PARALLEL_TASKS`` (a sidecar alone is read quicker here than
        sent back); else None. They are stopped when the block ends, however it ends."""
        count = workers.cores() if decoding >= PARALLEL_TASKS else 1
        pool = workers.pool(count) if count > 1 else None
        try:
            yield pool
        finally:
            if pool is not None:
                pool.stop()

    def _apply_all(self, db: sqlite3.Connection, tasks: list[Task], what: str, pool: workers.Pool | None) -> None:
        """Read the tasks' files a chunk at a time (in the worker processes of ``pool``, if
        any: workers.py) and write each chunk's rows and texts in a transaction, in order."""
        total = len(tasks)
        if not total:
            return
        chunks = [tasks[at : at + CHUNK] for at in range(0, total, CHUNK)]
        reader = Reader(self.directory, limit=self.limit, text=self.text)
        outcomes = self._read(chunks, reader, pool)
        written = 0
        try:
            for chunk, done in zip(chunks, outcomes, strict=True):
                with transaction(db):
                    _write(db, done)
                written += len(chunk)
                self.progress(what, written, total)
        finally:
            outcomes.close()  # the workers stopped now, however the loop ended
            reader.close()
            self.progress(what, total, total)

    def _read(
        self, chunks: list[list[Task]], reader: Reader, pool: workers.Pool | None
    ) -> Generator[list[Done], None, None]:
        """Each chunk's outcomes, in order: from the pool's workers when there is more than one
        chunk, else read here; the chunks a worker that died left are read here."""
        at = 0
        if pool is not None and len(chunks) > 1:
            args = (str(self.directory), self.limit, self.text)
            try:
                for data in workers.run(pool, [_encode(chunk) for chunk in chunks], start=WORKER, args=args):
                    yield _decoded(chunks[at], data)
                    at += 1
            except workers.Lost:
                pass
        for chunk in chunks[at:]:
            yield [reader.read(task) for task in chunk]


def _decoding(messages: dict[str, Signature | None], sidecars: set[str], text: bool) -> int:
    """How many of the messages files a first rebuild decodes: all for a search, else those
    without a sidecar."""
    return len(messages) if text else sum(1 for cid in messages if cid not in sidecars)


def _cid(task: Task) -> str:
    return task.cid


def _silent(what: str, done: int, total: int) -> None:
    pass


def _sig(text: str) -> Signature:
    sig = sig_of(text)
    assert sig is not None
    return sig


def set_state(db: sqlite3.Connection, dir_mtime_ns: int, racy: bool) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)",
        [("dir_mtime_ns", dir_mtime_ns), ("racy", int(racy))],
    )


def _write(db: sqlite3.Connection, done: list[Done]) -> None:
    """Write one chunk's rows and texts, keeping any row whose file changed meanwhile (a text
    is written only where the row now names the file it was read from)."""
    new: list[Row] = []
    changed: list[tuple[object, ...]] = []
    texts: dict[str, tuple[str, Text]] = {}
    for outcome in done:
        task, row, text = outcome.task, outcome.row, outcome.text
        if row is not None:
            if task.kind == NEW:
                new.append(row)
            else:
                changed.append((*row[1:], row[0], task.old))
        if text is not None:
            texts[task.cid] = text
    db.executemany(INSERT_ROW, new)
    db.executemany(UPDATE_ROW, changed)
    if texts:
        write_texts(db, texts)


#: What a worker sends back for a task: its row, and its words with their file's signature,
#: message count and size (``_text_record``), each None when there is none.
Outcome = tuple[tuple[str, float, bytes, str, str | None, str] | None, tuple[str, str | None, int, int] | None]
_tasks_codec = msgspec.msgpack.Decoder(list[Task])
_outcomes_codec = msgspec.msgpack.Decoder(list[Outcome])


def _encode(chunk: list[Task]) -> bytes:
    return msgspec.msgpack.encode(chunk)


def chunk_reader(directory: str, limit: int, text: bool) -> Callable[[bytes], bytes]:
    """A worker's reading (workers.py): a chunk of tasks in, their outcomes out."""
    reader = Reader(Path(directory), limit=limit, text=text)

    def read(data: bytes) -> bytes:
        outcomes: list[Outcome] = []
        for task in _tasks_codec.decode(data):
            done = reader.read(task)
            row, text = done.row, done.text
            outcomes.append((row, None if text is None else (text[0], text[1].sig, text[1].count, text[1].size)))
        return msgspec.msgpack.encode(outcomes)

    return read


def _decoded(chunk: list[Task], data: bytes) -> list[Done]:
    """A chunk's outcomes as a worker sent them back."""
    return [
        Done(task=task, row=row, text=None if t is None else (t[0], Text(t[1], t[2], t[3], 0, 0)))
        for task, (row, t) in zip(chunk, _outcomes_codec.decode(data), strict=True)
    ]


class Reader:
    """Reads conversations' files for their rows (and their words, with ``text``)."""

    def __init__(self, directory: Path, *, limit: int, text: bool) -> None:
        self.directory = directory
        self.limit = limit
        self.text = text
        self._open: Callable[[str], int] | None
        try:
            self._open, self.close = opener(str(directory))
        except OSError:  # the directory went away: every file is missing, as the careful reader says
            self._open, self.close = None, _nothing

    def read(self, task: Task) -> Done:
        if task.kind == TEXT:
            return self._words(task, None)
        if task.sidecar:
            msig = task.msig or self._signature(task.cid)
            if msig is None:
                return Done(task=task, row=None, text=None)  # removed since the scan: the next refresh sees it
            task = msgspec.structs.replace(task, msig=msig)
            row = quick_row(self._open, task.cid, msig) if self._open is not None else None
            if row is None:  # stale or odd: the careful reader keeps what the user chose from it
                return self._careful(task)
            return self._words(task, row) if self.text else Done(task=task, row=row, text=None)
        read = self._bytes(task)
        lean = None if read is None else digest(task.cid, read[0], words=self.text)
        if read is None or lean is None:
            return self._careful(task if read is None else msgspec.structs.replace(task, msig=read[1]))
        msig = read[1]
        row = (task.cid, lean.meta.updated, encode_meta(lean.meta), sig_text(msig) or "", None, "")
        text = (lean.words, _text_record(msig, lean.meta.messages)) if self.text else None
        return Done(task=task, row=row, text=text)

    def _words(self, task: Task, row: Row | None) -> Done:
        """The words of a conversation whose row and signature are known (``row``, or current in
        the index)."""
        read = self._bytes(task)
        lean = None if read is None else words_of(read[0])
        if read is None or lean is None:
            return self._careful(task, row)
        return Done(task=task, row=row, text=(lean[1], _text_record(read[1], lean[0])))

    def _bytes(self, task: Task) -> tuple[bytes, Signature] | None:
        """The messages file's bytes and signature when it is a regular file of at most
        ``LEAN_BYTES`` that is still the one scanned (if it was ``stat``'ed); else None."""
        limit = min(self.limit, LEAN_BYTES)
        if self._open is None or (task.msig is not None and task.msig[1] > limit):
            return None
        return _read_quick(self._open, task.cid + MESSAGES_SUFFIX, task.msig, limit)

    def _signature(self, cid: str) -> Signature | None:
        """The messages file's signature (a new conversation's was not taken by the scan); None
        when it is gone."""
        try:
            return signature(os.stat(self.directory / f"{cid}{MESSAGES_SUFFIX}", follow_symlinks=False))
        except OSError:
            return None

    def _careful(self, task: Task, row: Row | None = None) -> Done:
        """Read the messages through the careful reader: every spelling Go reads, a problem
        worded; the row (unless given) from ``meta.read_entry``."""
        from golem_cli.core.errors import HistoryFormatError

        msig = task.msig or self._signature(task.cid)
        if msig is None:
            return Done(task=task, row=None, text=None)  # removed since the scan: the next refresh sees it
        decoded: Decoded | None = None
        if row is None and task.kind != TEXT:
            entry, decoded = read_entry(self.directory, task.cid, msig, limit=self.limit, sidecar=task.sidecar)
            row = entry_row(entry)
            if entry.problem or not self.text:
                return Done(task=task, row=row, text=None)
        if decoded is None:
            try:
                decoded = read_messages(self.directory, task.cid, limit=self.limit)
            except (OSError, HistoryFormatError):
                return Done(task=task, row=row, text=None)  # changed since: the next refresh marks it
        return Done(task=task, row=row, text=_text(msig, decoded))


def _nothing() -> None:
    pass


def _text_record(msig: Signature, count: int) -> Text:
    return Text(sig_text(msig), count, msig[1], 0, 0)


def _text(msig: Signature, decoded: Decoded) -> tuple[str, Text] | None:
    """The words the index holds for a file's messages, and what it records of the file; None
    when the file read is not the one scanned (it changed since: the next refresh sees it)."""
    if len(decoded.data) != msig[1]:
        return None
    return indexed_text(decoded.messages), _text_record(msig, len(decoded.messages))


def _read_quick(
    open_name: Callable[[str], int], name: str, sig: Signature | None, limit: int
) -> tuple[bytes, Signature] | None:
    """The bytes and signature of ``name`` when it is a regular file of at most ``limit`` bytes
    whose ``stat`` signature is ``sig`` (any, when None): one open, ``fstat``, read and close;
    None when anything is unusual."""
    try:
        fd = open_name(name)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        got = signature(st)
        if not stat.S_ISREG(st.st_mode) or (sig is not None and got != sig) or got[1] > limit:
            return None
        data = os.read(fd, got[1] + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (data, got) if len(data) == got[1] else None


def quick_row(open_name: Callable[[str], int], cid: str, msig: Signature) -> Row | None:
    """The row from a sidecar that is a small regular file describing the messages file
    (one open, ``fstat``, read and close); None when anything is unusual."""
    try:
        fd = open_name(cid + META_SUFFIX)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        # A file that says it is empty may be made up as it is read (/proc): read carefully.
        if not stat.S_ISREG(st.st_mode) or not 0 < size <= QUICK_SIDECAR_BYTES:
            return None
        data = os.read(fd, size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != size:
        return None
    meta = decode_meta(data)
    if meta is None or meta.id != cid or meta.size != msig[1]:
        return None
    return (cid, meta.updated, data, f"{msig[0]}:{msig[1]}:{msig[2]}", f"{st.st_mtime_ns}:{size}:{st.st_ino}", "")
