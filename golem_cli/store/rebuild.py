"""Reading the conversations directory for the index's rows, at the speed of reading the files.

A listing after a change stats every messages file (``scan``); the first command after the
index is deleted also reads every sidecar (``rows``). Both are measured against a loop that
reads every file of the directory (issue 13: a rebuild within 1.2x of it), so the common case
costs as few system calls and as little Python as it can:

- each sidecar is opened relative to the directory's descriptor, ``fstat``-ed (its signature)
  and read in one ``read``; its bytes, once decoded and found to describe the current messages
  file, are stored as they are (no second encoding);
- anything unusual (no sidecar, a stale or unreadable one, a symlink, a large file, a file
  that says it is empty) goes through ``entry.build_entry``, the careful reader, which gives
  the same row a rebuild always gave.

Rows come out one at a time, so a rebuild holds the directory's names and signatures but
never every row at once.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path

from golem_cli.store.atomic import is_temp_file
from golem_cli.store.files import META_SUFFIX
from golem_cli.store.meta import Entry, Signature, build_entry, decode_meta, encode_meta, sig_text

#: One row of the ``conversations`` table: (id, updated, meta, msig, ssig, problem).
Row = tuple[str, float, bytes, str, "str | None", str]

#: A sidecar larger than this (golem's are about 250 bytes) is read carefully.
QUICK_SIDECAR_BYTES = 1 << 14


class _Stopped(Exception):
    """A rebuild was asked to stop (its transaction is rolled back)."""


# One match per directory entry: a conversation's messages file or its sidecar. Compiled by the
# first scan: a listing of a fresh index (and every search) never scans.
_NAME = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.meta)?\.json\Z"


def scan(directory: Path) -> tuple[dict[str, Signature], set[str], list[str], list[str]]:
    """Stat every messages file of the conversations directory; sidecars are only noted.
    Returns (messages signatures, IDs with a sidecar, foreign names, temporary names).
    This loop is what a listing pays after a change, so it does one regex match per name."""
    messages: dict[str, Signature] = {}
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
            else:
                try:
                    if item.is_file(follow_symlinks=False):
                        st = item.stat(follow_symlinks=False)
                        messages[name[:36]] = (st.st_mtime_ns, st.st_size, st.st_ino)
                    else:
                        foreign.append(name)
                except OSError:
                    continue  # removed while we looked
    return messages, sidecars, foreign, temps


def entry_row(entry: Entry) -> Row:
    """The row of an entry built by the careful reader."""
    m = entry.meta
    return (m.id, m.updated, encode_meta(m), *_sigs(entry), entry.problem)


def _sigs(entry: Entry) -> tuple[str, str | None]:
    msig = sig_text(entry.messages_sig)
    assert msig is not None
    return msig, sig_text(entry.sidecar_sig)


def rows(
    directory: Path,
    conversations: Iterable[tuple[str, Signature]],
    sidecars: Container[str],
    *,
    limit: int,
    stop: Callable[[], bool] | None = None,
) -> Iterator[Row]:
    """The row of each (ID, messages signature), in the order given: from the sidecar when
    it describes the messages file (the quick way, see the module docstring), else as
    ``build_entry`` makes it. ``stop()`` is asked every 256 rows; ``_Stopped`` when it says so."""
    from golem_cli.store.files import opener

    try:
        open_name, done = opener(str(directory))
    except OSError:  # the directory went away: every file is missing, as the careful reader says
        open_name, done = None, None
    try:
        for n, (cid, msig) in enumerate(conversations):
            if stop is not None and n % 256 == 255 and stop():
                raise _Stopped
            row = _quick_row(open_name, cid, msig) if open_name is not None and cid in sidecars else None
            yield row or entry_row(build_entry(directory, cid, msig, limit=limit))
    finally:
        if done is not None:
            done()


def _quick_row(open_name: Callable[[str], int], cid: str, msig: Signature) -> Row | None:
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
