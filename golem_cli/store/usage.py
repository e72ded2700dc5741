"""The runs of every conversation in one SQLite file, ``usage.sqlite``, for ``golem usage``: a
copy of the ``runs`` logs (ledger.py), rebuildable from them at any time (delete it at will).

It is brought up to date before it answers: when the conversations directory changed since it
was last current (its mtime; every turn renames its history file there after writing its
ledger records), each ``<id>.runs.jsonl`` whose signature (inode, size, mtime) differs from the
recorded one is read again and a vanished one forgotten. A check within a moment of the
directory's change is "racy" (a run's last record may follow its history file's rename by a
moment) and the next query looks again, as the conversations index does (ADR 0009).

A run a fork copied sits in both ledgers: the table keeps a row per (run, conversation), and the
row of the oldest conversation holding a run (UUIDv7 IDs sort by creation, so a fork's ID comes
after its parent's) is marked ``first``, the one a total counts; the marks of the run IDs a
refresh touched are set again after it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from msgspec import Struct

from golem_cli.store.sidecars import SIDECAR_NAME
from golem_cli.store.sidecars.ledger import Run, read_runs, totals

NAME = "usage.sqlite"
VERSION = 2
RACY_NS = 2_000_000_000
SUFFIX = ".runs.jsonl"
SCHEMA = """
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS logs (cid TEXT PRIMARY KEY, sig TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT NOT NULL, cid TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL,
    started REAL NOT NULL, requests INTEGER NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, reasoning INTEGER NOT NULL, cost REAL,
    first INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, cid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_of ON runs (cid);
"""
#: Marks, for the run IDs given, the row of the oldest conversation holding each as the one a
#: total counts (``first``), the others not.
MARK_FIRST = "UPDATE runs SET first = (cid = (SELECT MIN(cid) FROM runs AS r WHERE r.run_id = runs.run_id))"
#: Above this many changed run IDs, every row is marked again in one statement.
MARK_ALL = 5000
BY = {"model": "model", "day": "date(started, 'unixepoch')", "conversation": "cid"}


class UsageRow(Struct, frozen=True, kw_only=True):
    """Totals of one group (a model, a day in UTC, a conversation), each run counted once."""

    group: str
    runs: int
    requests: int
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost: float
    unpriced: int  # runs with tokens but no known price (their cost is not in ``cost``)
    conversations: int


def summed(rows: Iterable[UsageRow], group: str) -> UsageRow:
    """The total of ``rows`` (groups of distinct runs) as one row."""
    rows = list(rows)
    return UsageRow(
        group=group, runs=sum(r.runs for r in rows), requests=sum(r.requests for r in rows),
        input_tokens=sum(r.input_tokens for r in rows), cache_read_tokens=sum(r.cache_read_tokens for r in rows),
        cache_write_tokens=sum(r.cache_write_tokens for r in rows), output_tokens=sum(r.output_tokens for r in rows),
        reasoning_tokens=sum(r.reasoning_tokens for r in rows), cost=sum(r.cost for r in rows),
        unpriced=sum(r.unpriced for r in rows), conversations=sum(r.conversations for r in rows),
    )  # fmt: skip


def by_model(runs: Iterable[Run]) -> list[UsageRow]:
    """One conversation's runs (``/cost``) as ``UsageIndex.totals`` groups them by model."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.model or "(unknown model)", []).append(run)
    rows = []
    for model, of_model in groups.items():
        t = totals(of_model)
        rows.append(UsageRow(group=model, runs=t.runs, requests=t.requests, input_tokens=t.usage.input_tokens,
                             cache_read_tokens=t.usage.cache_read_tokens, cache_write_tokens=t.usage.cache_write_tokens,
                             output_tokens=t.usage.output_tokens, reasoning_tokens=t.usage.reasoning_tokens,
                             cost=t.cost, unpriced=t.unpriced, conversations=1))  # fmt: skip
    return sorted(rows, key=lambda r: (-r.cost, -(r.input_tokens + r.output_tokens), r.group))


class UsageIndex:
    def __init__(self, path: Path, conversations: Path) -> None:
        self.path = path
        self.conversations = conversations

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection to the index; one that is corrupt or not a regular file is deleted and
        made again, and one that cannot be made is an index for this command only."""
        try:
            db = self._open(str(self.path))
        except sqlite3.DatabaseError:
            self._drop_files()
            try:
                db = self._open(str(self.path))
            except sqlite3.DatabaseError:
                db = self._open(":memory:")
        with closing(db):
            yield db

    def _open(self, target: str) -> sqlite3.Connection:
        if target != ":memory:":
            self._refuse_special()
        db = sqlite3.connect(target, timeout=10, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a power cut may lose the newest change
            if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                db.executescript("DROP TABLE IF EXISTS state; DROP TABLE IF EXISTS logs; DROP TABLE IF EXISTS runs;")
                db.executescript(SCHEMA)
                db.execute(f"PRAGMA user_version = {VERSION}")
        except BaseException:
            db.close()
            raise
        return db

    def _refuse_special(self) -> None:
        """Something planted at the index's path that is not a regular file (a FIFO would block
        SQLite's read, a link points elsewhere) is removed: the index is golem's cache."""
        for suffix in ("", "-wal", "-shm"):
            path = f"{self.path}{suffix}"
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                try:
                    os.unlink(path)
                except OSError:
                    raise sqlite3.DatabaseError(f"{path} is not a regular file") from None

    def _drop_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except OSError:
                pass

    def totals(self, *, by: str, since: float = 0.0) -> list[UsageRow]:
        """Totals grouped ``by`` model, day or conversation, of the runs started at or after
        ``since`` (a POSIX time), largest cost first; the index brought up to date first."""
        try:
            return self._totals(by, since)
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
                raise
            self._drop_files()  # corrupt: rebuilt from the logs
            return self._totals(by, since)

    def _totals(self, by: str, since: float) -> list[UsageRow]:
        group = BY[by]
        with self._db() as db:
            self._refresh(db)
            sql = f"""
                SELECT {group} AS g, COUNT(*), SUM(requests), SUM(input), SUM(cache_read), SUM(cache_write),
                       SUM(output), SUM(reasoning), TOTAL(cost),
                       SUM(cost IS NULL AND input + output > 0), COUNT(DISTINCT cid)
                FROM runs WHERE first = 1 AND started >= ?
                GROUP BY g ORDER BY TOTAL(cost) DESC, SUM(input + output) DESC, g
            """  # ``group`` is one of BY's fixed expressions, never the user's text
            return [UsageRow(group=str(r[0]), runs=r[1], requests=r[2], input_tokens=r[3], cache_read_tokens=r[4],
                             cache_write_tokens=r[5], output_tokens=r[6], reasoning_tokens=r[7], cost=r[8],
                             unpriced=r[9], conversations=r[10]) for r in db.execute(sql, (since,))]  # fmt: skip

    def _refresh(self, db: sqlite3.Connection) -> None:
        """Bring the copy up to date with the logs on disk (module docstring)."""
        try:
            mtime = os.stat(self.conversations).st_mtime_ns
        except FileNotFoundError:
            mtime = -1
        rows = dict(db.execute("SELECT key, value FROM state").fetchall())
        if rows.get("dir_mtime_ns") == mtime and not rows.get("racy", 1):
            return
        scan_started = time.time_ns()
        on_disk = dict(_logs(self.conversations))
        known = dict(db.execute("SELECT cid, sig FROM logs").fetchall())
        db.execute("BEGIN IMMEDIATE")
        try:
            touched: set[str] = set()
            for cid in known.keys() - on_disk.keys():
                touched.update(self._forget(db, cid))
            for cid, sig in on_disk.items():
                if known.get(cid) != sig:
                    touched.update(self._forget(db, cid))
                    touched.update(self._put(db, cid, sig))
            _mark_first(db, touched)
            racy = int(scan_started - mtime < RACY_NS)
            db.executemany("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)",
                           [("dir_mtime_ns", mtime), ("racy", racy)])  # fmt: skip
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _forget(self, db: sqlite3.Connection, cid: str) -> list[str]:
        """Remove a conversation's rows; returns their run IDs."""
        ids = [rid for (rid,) in db.execute("SELECT run_id FROM runs WHERE cid = ?", (cid,))]
        db.execute("DELETE FROM runs WHERE cid = ?", (cid,))
        db.execute("DELETE FROM logs WHERE cid = ?", (cid,))
        return ids

    def _put(self, db: sqlite3.Connection, cid: str, sig: str) -> list[str]:
        """A conversation's rows from its log; returns their run IDs."""
        runs = read_runs(self.conversations / f"{cid}{SUFFIX}")
        db.executemany("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                       [_row(cid, run) for run in runs.values()])  # fmt: skip
        db.execute("INSERT OR REPLACE INTO logs (cid, sig) VALUES (?, ?)", (cid, sig))
        return list(runs)


def _mark_first(db: sqlite3.Connection, run_ids: set[str]) -> None:
    """Count each of ``run_ids`` once again, under the oldest conversation holding it."""
    if len(run_ids) > MARK_ALL:
        db.execute(MARK_FIRST)
    elif run_ids:
        db.executemany(MARK_FIRST + " WHERE run_id = ?", [(rid,) for rid in run_ids])


def _row(cid: str, run: Run) -> tuple[object, ...]:
    u = run.usage
    started = run.started if run.started is not None else (run.ended or 0.0)
    return (run.run_id, cid, run.kind, run.model, started, run.requests, u.input_tokens, u.output_tokens,
            u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens, run.cost)  # fmt: skip


def _logs(directory: Path) -> Iterator[tuple[str, str]]:
    """Each ``<id>.runs.jsonl`` of ``directory`` (regular files only) with its signature."""
    try:
        entries = os.scandir(directory)
    except FileNotFoundError:
        return
    with entries:
        for entry in entries:
            if not entry.name.endswith(SUFFIX):
                continue
            name = SIDECAR_NAME.match(entry.name)
            if name is None or name["kind"] != "runs":
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_file(follow_symlinks=False):
                yield name["id"], f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
