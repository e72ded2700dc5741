"""History repair: pair every tool call with exactly one result (spec §2, §3).

Providers reject a conversation with a call that has no result or a result without its call.
A crashed or interrupted run, or a hand-edited file, leaves exactly that. Repair closes each
unanswered call with the neutral ``INTERRUPTED`` result right after the message that made it,
and drops results whose call is not pending. Synthesized results carry no identity and no
clock, so repair is deterministic and a repaired history repairs to itself.

The Go reference is not idempotent when a call ID is reused while unanswered (spec §2.2,
vectors 15-18): a second pass drops results the first pass displaced. golem promises
idempotence, so it returns the reference's fixed point, which is always reached by the
second pass (docs/adr/0001-repair-fixed-point.md gives the argument). A Go program that
repairs a history golem repaired therefore finds nothing to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct, field

from golem_cli.core.codec.toolargs import args_are_object
from golem_cli.core.messages import ASSISTANT, INTERRUPTED, TOOL, Message

__all__ = ["HistoryRepair", "normalize_history", "repair_history"]


class HistoryRepair(Struct, kw_only=True):
    """What a repair changed, by call ID (Go ``HistoryRepair``).

    ``synthesized``: calls that received the interrupted result, in message then call order.
    ``dropped``: the ``tool_call_id`` of every removed tool message, in history order.
    ``truncated``: calls whose args are not one JSON object (detection only; args are kept).
    """

    synthesized: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the returned history differs from the input."""
        return bool(self.synthesized or self.dropped)

    def to_json(self) -> dict[str, list[str]]:
        """The Go field names, lists never null."""
        return {
            "Synthesized": list(self.synthesized),
            "Dropped": list(self.dropped),
            "Truncated": list(self.truncated),
        }


# An entry of a repair pass: the index of an input message, or a synthesized result.
_Entry = int | Message


def _synthesized(call_id: str, name: str) -> Message:
    return Message(role=TOOL, content=INTERRUPTED, tool_call_id=call_id, tool_name=name)


def _reference_pass(entries: Sequence[_Entry], history: Sequence[Message]) -> list[_Entry] | None:
    """One pass of Go's ``RepairHistoryWithReport`` over entries; None when nothing changes."""
    pending: set[str] = set()
    kept: list[_Entry] = []
    dropped_any = False
    for entry in entries:
        m = history[entry] if isinstance(entry, int) else entry
        role = m.role
        if role == TOOL:
            if m.tool_call_id in pending:
                pending.remove(m.tool_call_id)
                kept.append(entry)
            else:
                dropped_any = True
        else:
            kept.append(entry)
            if role == ASSISTANT:
                for call in m.tool_calls:
                    if call.id:
                        pending.add(call.id)
    if not pending:
        return kept if dropped_any else None
    out: list[_Entry] = []
    for entry in kept:
        out.append(entry)
        m = history[entry] if isinstance(entry, int) else entry
        for call in m.tool_calls:  # every message's calls, as the reference does
            if call.id in pending:
                out.append(_synthesized(call.id, call.name))
    return out


def _ids_repeat(history: Sequence[Message]) -> bool:
    """Whether any call ID occurs in more than one call (of any message). Only then can the
    reference's second pass change anything: a synthesized result can displace a kept one
    only when it answers an ID that was answered before (ADR 0001)."""
    seen: set[str] = set()
    count = 0
    for m in history:
        if m.tool_calls:
            for call in m.tool_calls:
                if call.id:
                    seen.add(call.id)
                    count += 1
    return len(seen) != count


def _scan(history: Sequence[Message], *, truncation: bool) -> tuple[bool, list[str]]:
    """One cheap pass for the common, healthy case: does the history need repair (the
    reference's first loop), and which calls have arguments that are not a JSON object."""
    pending: set[str] = set()
    broken = False
    truncated: list[str] = []
    for m in history:
        role = m.role
        if role == TOOL:
            if m.tool_call_id in pending:
                pending.remove(m.tool_call_id)
            else:
                broken = True
        elif role == ASSISTANT and m.tool_calls:
            for call in m.tool_calls:
                if call.id:
                    pending.add(call.id)
                    if truncation and not args_are_object(call.args):
                        truncated.append(call.id)
    return broken or bool(pending), truncated


def _repair(
    history: Sequence[Message], needed: bool, *, always_twice: bool = False
) -> tuple[list[Message], list[str], list[str]]:
    if not needed:
        return list(history), [], []
    first = _reference_pass(range(len(history)), history)
    if first is None:
        return list(history), [], []
    second = _reference_pass(first, history) if always_twice or _ids_repeat(history) else None
    final = first if second is None else second
    out: list[Message] = []
    synthesized: list[str] = []
    kept = bytearray(len(history))
    for e in final:
        if isinstance(e, int):
            out.append(history[e])
            kept[e] = 1
        else:
            out.append(e)
            synthesized.append(e.tool_call_id)
    dropped = [m.tool_call_id for i, m in enumerate(history) if not kept[i] and m.role == TOOL]
    return out, synthesized, dropped


def repair_history(history: Sequence[Message]) -> list[Message]:
    """The in-run repair: ``normalize_history`` without the report. Never mutates its input."""
    return _repair(history, _scan(history, truncation=False)[0])[0]


def normalize_history(history: Sequence[Message]) -> tuple[list[Message], HistoryRepair]:
    """Repair a history that crossed a boundary (a stored file, a client) and say what changed.

    Deterministic and idempotent; the input is never mutated. ``truncated`` is reported on
    every pass because arguments are evidence and are never rewritten.
    """
    needed, truncated = _scan(history, truncation=True)
    out, synthesized, dropped = _repair(history, needed)
    return out, HistoryRepair(synthesized=synthesized, dropped=dropped, truncated=truncated)
