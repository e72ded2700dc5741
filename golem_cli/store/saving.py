"""A save that costs what writing the file costs: the file this process knows (``Persisted``),
and the two ways to replace it (ADR 0025).

A history file is replaced whole, tmp + rename, so every reader (Go golem, a sync tool) sees
the old file or the new one, never a torn one. What is already on disk and known good is not
encoded or decoded again:

- ``Persisted`` is what the store keeps of a conversation it loaded, created or saved: an open
  descriptor of **that** file (the inode as read or as written; every writer that matters
  replaces files by rename, so the descriptor still reads exactly the bytes this process knows
  after another program replaced the path), its signature, where its closing ``]`` is, and how
  many messages it holds. No bytes, no messages: the session holds the messages.
- An **append** (``write_appended``) copies bytes ``[0, close)`` from that descriptor into the
  temporary file in the kernel (``os.copy_file_range``, a reflink where the file system has
  them; else ``os.sendfile``; else a bounded read/write loop), then writes ``,`` + the new
  messages + ``]``. The new messages are encoded once and checked to load back alone
  (``encode_new``): a history is a JSON array whose elements are read independently, so if
  ``[X]`` loads and ``[Y]`` loads with an element, ``[X,Y]`` loads (ADR 0014's argument; ``X`` is
  known good because golem loaded it or wrote and checked it).
- A **rewrite** (``write_whole``) encodes every message a batch at a time, checks each batch
  loads alone, and writes each as it is made: the file's bytes are never held whole.

Bytes loaded through the tolerant reader (other whitespace, key case, nulls) are valid for Go
and golem alike, so an append copies them as they are; only a rewrite spells them as golem
does. A file that does not end in ``]`` after whitespace (``null``) or starts with a byte-order
mark (which Go refuses) is never appended to: its next save rewrites it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from golem_cli.store.atomic import PRIVATE_FILE, fsync_dir, temp_name
from golem_cli.store.files import pread
from golem_cli.store.sidecars import FileSig

if TYPE_CHECKING:
    from golem_cli.core.messages import Message

_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
_COPY_PIECE = 1 << 24  # bytes per copy call (and per read of the last-resort loop: 1 MiB)


class Persisted(Struct, kw_only=True):
    """The file a process knows for one conversation (see the module docstring). ``close`` is
    the offset of the closing ``]`` (None: the file cannot be appended to), ``count`` how many
    messages it holds."""

    fd: int
    sig: FileSig
    close: int | None
    count: int
    #: a window (``Store.load_tail``): how many of the file's messages the caller's list does
    #: not hold, how many it holds before them, and the offset of the comma after those
    skipped: int = 0
    head: int = 0
    cut: int = 0

    @property
    def held(self) -> int:
        """How many of the file's messages the caller's list holds."""
        return self.count - self.skipped

    def release(self) -> None:
        """Close the descriptor, once: a record dropped unreleased (a ``Store`` a program let go
        of) closes it when collected, so descriptors never pile up."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass

    __del__ = release

    def unchanged(self, path: Path) -> bool:
        """Whether ``path`` still names the file this process knows, unchanged."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return False
        return FileSig.of(st) == self.sig

    @property
    def index_sig(self) -> tuple[int, int, int]:
        """The signature the index records of this file (meta.signature)."""
        return (self.sig.mtime_ns, self.sig.size, self.sig.ino)


def persisted(fd: int, count: int) -> Persisted:
    """The record of the file open on ``fd``, which holds ``count`` messages (just read or
    written: the caller owns ``fd`` from now on through the record)."""
    st = os.fstat(fd)
    return Persisted(fd=fd, sig=FileSig.of(st), close=closing_bracket(fd, st.st_size), count=count)


def closing_bracket(fd: int, size: int) -> int | None:
    """The offset of the file's last non-whitespace byte when it is a ``]`` (the array can be
    extended before it), else None. Reads only the file's end (and its first bytes, for a BOM)."""
    if size < 2 or pread(fd, 3, 0).startswith(_BOM) or pread(fd, 1, 0) != b"[":
        return None
    end = size
    while end > 0:
        start = max(0, end - 4096)
        piece = pread(fd, end - start, start).rstrip(_WHITESPACE)
        if piece:
            return start + len(piece) - 1 if piece.endswith(b"]") else None
        end = start
    return None


# --- encoding and checking -----------------------------------------------------------------------


def encode_new(messages: Sequence[Message]) -> bytes:
    """The new messages as Go writes array elements, comma-separated, without brackets, checked
    to load back as those many messages (``HistoryFormatError`` if not)."""
    from golem_cli.core.codec.history import history_chunks, load_history
    from golem_cli.core.errors import HistoryFormatError

    chunks = list(history_chunks(messages))
    items = b"".join(chunks[1:-1])
    if len(load_history(b"[" + items + b"]")) != len(messages):
        raise HistoryFormatError(f"{len(messages)} messages encoded to bytes that hold another number of them")
    return items


def checked_chunks(messages: Iterable[Message]) -> Iterable[bytes]:
    """``history_chunks(messages)`` with each batch checked to load back alone before it is
    handed on (``HistoryFormatError``): batches that each load with a message join into an
    array that loads (the argument above), so the whole file is proven a batch at a time."""
    from golem_cli.core.codec.history import history_chunks, load_history

    for i, chunk in enumerate(history_chunks(messages)):
        if i % 2 and len(chunk) > 1:  # "[", batch, ",", batch, ..., "]"
            load_history(b"[" + chunk + b"]")
        yield chunk


# --- writing -------------------------------------------------------------------------------------


def write_appended(
    path: Path, known: Persisted, items: bytes, *, durable: bool, still: Callable[[], None]
) -> tuple[int, FileSig]:
    """Replace ``path`` with the file ``known`` describes plus ``items`` (``encode_new``'s bytes):
    its bytes up to the closing bracket copied from the held descriptor, then ``,`` (unless the
    array was empty), the items and ``]``. ``still`` is called just before the rename and raises
    to stop it (the file changed meanwhile). Returns the new file's descriptor (the caller's
    from now on) and signature."""
    assert known.close is not None
    empty = _is_empty_array(known.fd, known.close)
    return write_copied(path, known.fd, known.close, (b"" if empty else b",") + items + b"]", durable, still)


def write_copied(
    path: Path, source: int, upto: int, tail: bytes, durable: bool, still: Callable[[], None]
) -> tuple[int, FileSig]:
    """Replace ``path`` with bytes ``[0, upto)`` of ``source`` and then ``tail``."""

    def fill(fd: int) -> None:
        copy_range(source, fd, upto)
        _write_all(fd, tail)

    return _replace(path, fill, durable, still)


def write_whole(
    path: Path, chunks: Iterable[bytes], *, durable: bool, still: Callable[[], None]
) -> tuple[int, FileSig]:
    """Replace ``path`` with ``chunks`` (``checked_chunks``), each written as it is made."""

    def write(fd: int) -> None:
        for chunk in chunks:
            _write_all(fd, chunk)

    return _replace(path, write, durable, still)


def _replace(path: Path, fill: Callable[[int], None], durable: bool, still: Callable[[], None]) -> tuple[int, FileSig]:
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)  # O_CREAT's mode is filtered by the umask
        fill(fd)
        if durable:
            os.fsync(fd)
        still()
        os.replace(tmp, path)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)
    return fd, FileSig.of(os.fstat(fd))


def copy_range(source: int, target: int, count: int) -> None:
    """Copy bytes ``[0, count)`` of ``source`` to the start of ``target``, in the kernel where it
    can (``copy_file_range``: a reflink on file systems that have them; ``sendfile``), else by
    reading and writing a piece at a time."""
    done = 0
    for copy in (_copy_file_range, _sendfile):
        try:
            while done < count:
                n = copy(source, target, done, count - done)
                if n <= 0:
                    break
                done += n
            if done == count:
                os.lseek(target, count, os.SEEK_SET)  # copy_file_range leaves the position where it was
                return
        except OSError:
            os.lseek(target, done, os.SEEK_SET)  # what was copied stays; the next way goes on from there
    while done < count:
        piece = pread(source, min(1 << 20, count - done), done)
        if not piece:
            raise OSError(f"the known file ended at {done} bytes of {count}")
        _write_all(target, piece)
        done += len(piece)


def _copy_file_range(source: int, target: int, offset: int, count: int) -> int:
    if not hasattr(os, "copy_file_range"):
        raise OSError("no copy_file_range here")
    return os.copy_file_range(source, target, min(count, _COPY_PIECE), offset, offset)


def _sendfile(source: int, target: int, offset: int, count: int) -> int:
    if not hasattr(os, "sendfile"):
        raise OSError("no sendfile here")
    os.lseek(target, offset, os.SEEK_SET)
    return os.sendfile(target, source, offset, min(count, _COPY_PIECE))


def _is_empty_array(fd: int, close: int) -> bool:
    """Whether the bytes before the closing bracket are ``[`` and whitespace only."""
    head = pread(fd, min(close, 4096), 0)
    return len(head) == close and head[:1] == b"[" and not head[1:].strip(_WHITESPACE)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_known(fd: int, close: int) -> bytes:
    """Bytes ``[0, close)`` of the known file (for an error's position in the file, a rare path)."""
    return pread(fd, close, 0)
