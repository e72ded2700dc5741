"""Where a transcript says a summary starts (``show``, ``/history``, ``export --format
markdown``): before the first message a summary does not cover, what it covers, how it was made,
and whether it is the one a run sends now (ADR 0032)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from golem_cli.core.messages import Message
    from golem_cli.store import Store
    from golem_cli.store.sidecars import Summary


class Mark(Struct, frozen=True, kw_only=True):
    """A summary placed in a history: the index of the first message it does not cover."""

    index: int
    summary: Summary
    in_force: bool

    def line(self) -> str:
        """The mark in one line."""
        s = self.summary
        how = f"{s.by}, {s.model}" if s.model else s.by
        state = "sent instead of them" if self.in_force else "an earlier one, replaced"
        return f"── summary of messages 1-{s.number} ({how}; {state}) ──"


#: What a transcript is given for each index a mark goes before: (the line, the summary's text).
Marks = dict[int, list[tuple[str, str]]]


def marks(history: Sequence[Message], summaries: Sequence[Summary]) -> Marks:
    """Each summary that can be placed in ``history``, by the index it is marked before (the
    newest last; the newest overall is the one in force)."""
    from golem_cli.store.sidecars.summaries import locate

    out: Marks = {}
    newest = True
    for summary in reversed(summaries):
        point = locate(summary, history)
        if point is None:
            continue
        mark = Mark(index=point, summary=summary, in_force=newest)
        out.setdefault(point, []).insert(0, (mark.line(), summary.text))
        newest = False
    return out


def stored_marks(store: Store, cid: str, history: Sequence[Message]) -> Marks:
    """The marks of a stored conversation (none when its summaries cannot be read)."""
    from golem_cli.store.sidecars.summaries import read_summaries

    return marks(history, read_summaries(store, cid).summaries)
