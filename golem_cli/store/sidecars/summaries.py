"""The ``summaries`` sidecar of a conversation: read it, place its summaries, write it back.

A summary is kept beside the history, never in it (``sidecars.Summary``). Reading is bounded
(the kind's limit) and never fails: a missing file is no summary, a damaged one is no summary
and a ``problem`` line, so the conversation is sent as if it had never been compacted. Writes
replace the document whole, only over the file that was read, under the conversation's lock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec
from msgspec import Struct

from golem_cli.core.messages import Message
from golem_cli.store.sidecars import (
    SUMMARIES,
    FileSig,
    SidecarChanged,
    Summaries,
    Summary,
    current_sig,
    encode_document,
    read_document,
    write_document,
)

if TYPE_CHECKING:
    from golem_cli.store.store import Store

__all__ = ["Placed", "SummariesRead", "locate", "placed", "read_summaries", "write_summaries"]


class SummariesRead(Struct, frozen=True, kw_only=True):
    """The document as read (None when missing or damaged), the file's signature, and what to
    say when the file is there but unusable ("" otherwise)."""

    doc: Summaries | None
    sig: FileSig | None
    problem: str = ""

    @property
    def summaries(self) -> list[Summary]:
        return list(self.doc.summaries) if self.doc is not None else []


class Placed(Struct, frozen=True, kw_only=True):
    """The summary in force and its point: the index (in the history given to ``placed``) of
    the first message it does not cover."""

    summary: Summary
    point: int


def read_summaries(store: Store, cid: str) -> SummariesRead:
    """The summaries of ``cid``; a file that is there but cannot be used is a ``problem``."""
    path = store.sidecar_path(cid, SUMMARIES)
    doc, sig = read_document(path, SUMMARIES, Summaries)
    if doc is None and sig is not None:
        return SummariesRead(
            doc=None,
            sig=sig,
            problem=f"the summaries of {cid} ({path.name}) cannot be read; the conversation is sent as if it had "
            "never been compacted (golem compact ID makes a new summary)",
        )
    return SummariesRead(doc=doc, sig=sig)


def write_summaries(store: Store, cid: str, summaries: Sequence[Summary], expected: FileSig | None) -> FileSig | None:
    """Replace the document with ``summaries`` (none: the file is removed), only over the file
    that was read; ``SidecarChanged`` otherwise. Durable: a summary is work paid for."""
    path = store.sidecar_path(cid, SUMMARIES)
    if not summaries:
        if current_sig(path) != expected:
            raise SidecarChanged(str(path))
        path.unlink(missing_ok=True)
        return None
    doc = Summaries(changed=time.time(), summaries=list(summaries))
    return write_document(path, encode_document(doc), expected=expected, durable=True)


#: How many summaries the document keeps: each folds in the one before, so older ones are only
#: what ``/compact undo`` goes back to (rolling summaries add one every K messages).
KEPT = 16


def add_summary(store: Store, cid: str, summary: Summary) -> None:
    """Append ``summary`` as the newest (the oldest beyond ``KEPT`` dropped), reading the file
    again if another program changed it."""
    for _ in range(3):
        read = read_summaries(store, cid)
        try:
            write_summaries(store, cid, [*read.summaries, summary][-KEPT:], read.sig)
            return
        except SidecarChanged:
            continue
    raise SidecarChanged(str(store.sidecar_path(cid, SUMMARIES)))


def drop_newest(store: Store, cid: str) -> Summary | None:
    """Remove the newest summary (``/compact undo``); the one it was removed, None when none."""
    read = read_summaries(store, cid)
    if not read.summaries:
        return None
    write_summaries(store, cid, read.summaries[:-1], read.sig)
    return read.summaries[-1]


def replace_text(store: Store, cid: str, text: str) -> Summary | None:
    """The newest summary with ``text`` as written by the user (``/summary edit``)."""
    read = read_summaries(store, cid)
    if not read.summaries:
        return None
    edited = msgspec.structs.replace(read.summaries[-1], text=text, by="edited", created=time.time())
    write_summaries(store, cid, [*read.summaries[:-1], edited], read.sig)
    return edited


def locate(summary: Summary, history: Sequence[Message], offset: int = 0) -> int | None:
    """The point of ``summary`` in ``history`` (whose first message is the file's ``offset``):
    the index after its last covered message, found as the ``nth`` message of its run (so
    messages a merge or a repair put elsewhere do not move it), or, in a history without run
    IDs, by position. None when it cannot be placed (its run is not in the history, or it
    covers past the end). A summary ending before a window read from the file's end (``ask
    -c``) is placed at the window's start; within such a window, by position when the message
    there is of its run."""
    at = summary.through - offset
    if at < 0:
        return 0 if offset > 0 else None
    if not summary.run:
        return _opener_from(history, at + 1) if at < len(history) else None
    if offset and at < len(history) and history[at].run_id == summary.run:
        return _opener_from(history, at + 1)
    ranks = [i for i, m in enumerate(history) if m.run_id == summary.run]
    if not ranks:
        return None
    return _opener_from(history, ranks[min(summary.nth, len(ranks) - 1)] + 1)


def _opener_from(history: Sequence[Message], index: int) -> int:
    """The first message at or after ``index`` that can open a request (``len`` if none): the
    window after a point never starts with a tool result whose call it covers."""
    from golem_cli.core.messages import opens_request

    while index < len(history) and not opens_request(history[index]):
        index += 1
    return index


def placed(summaries: Sequence[Summary], history: Sequence[Message], offset: int = 0) -> Placed | None:
    """The summary in force: the newest that can be placed, with its point."""
    for summary in reversed(summaries):
        point = locate(summary, history, offset)
        if point is not None:
            return Placed(summary=summary, point=point)
    return None


def new_summary(
    history: Sequence[Message], point: int, text: str, *, offset: int = 0, by: str = "compact", **fields: str
) -> Summary:
    """The record of a summary of ``history[:point]`` (the file's first ``offset + point``
    messages), keyed by its last covered message."""
    from golem_cli.core.compaction import last_number

    last = history[point - 1]
    nth = sum(m.run_id == last.run_id for m in history[: point - 1]) if last.run_id else 0
    return Summary(
        run=last.run_id, through=offset + point - 1, text=text, nth=nth, number=last_number(history, point), by=by,
        created=time.time(), **fields,
    )  # fmt: skip
