"""Where each item of a repair or sanitize report is, so a person can find it.

The core's reports hold call IDs only (as Go's do). People need the message index, the role
and the tool name, so this module looks each ID up in the input and output histories. Reports
list IDs in history order, which lets a single forward walk match the k-th report entry to the
k-th fitting message, even when an ID repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from golem_cli.core.messages import ASSISTANT, INTERRUPTED, SYSTEM, TOOL, Message

if TYPE_CHECKING:
    from golem_cli.core.history.repair import HistoryRepair
    from golem_cli.core.history.sanitize import SanitizeReport

SYNTHESIZED = "synthesized"
DROPPED = "dropped"
TRUNCATED = "truncated"
SYSTEM_PROMPT = "system_prompt"
UNSAFE_PART = "unsafe_part"


class Finding(msgspec.Struct, frozen=True, gc=False):  # built in C; scalars only, so never in a cycle
    """One reported change. ``message_index`` and ``role`` refer to the input history;
    ``output_index`` is where a synthesized result sits in the output. Indexes count from 0
    in the file's array (for programs); ``number`` and ``output_number`` are the numbers
    ``golem show`` gives the same messages (for people: from 1, the system prompt aside)."""

    kind: str
    message_index: int | None
    role: str
    call_id: str = ""
    tool_name: str = ""
    output_index: int | None = None
    part_kind: str = ""
    scheme: str = ""
    number: int | None = None
    output_number: int | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "messageIndex": self.message_index, "role": self.role}
        if self.kind in (SYNTHESIZED, DROPPED, TRUNCATED):
            out["callId"] = self.call_id
            out["toolName"] = self.tool_name
        if self.kind == SYNTHESIZED:
            out["outputIndex"] = self.output_index
        if self.kind == UNSAFE_PART:
            out["partKind"] = self.part_kind
            out["scheme"] = self.scheme
        return out


def _calls(history: Sequence[Message]) -> list[tuple[int, str, str]]:
    """(message index, call ID, tool name) of every call of every assistant message."""
    return [(i, c.id, c.name) for i, m in enumerate(history) if m.role == ASSISTANT for c in m.tool_calls]


def _match_in_order(wanted: Sequence[str], items: Sequence[tuple[int, str, str]]) -> list[tuple[int | None, str]]:
    """For each wanted ID, the next item (in order) with that ID: (index, name)."""
    found: list[tuple[int | None, str]] = []
    pos = 0
    for cid in wanted:
        j = pos
        while j < len(items) and items[j][1] != cid:
            j += 1
        if j < len(items):
            found.append((items[j][0], items[j][2]))
            pos = j + 1
        else:  # not in order (cannot happen with the core's reports): look anywhere
            match = next((it for it in items if it[1] == cid), None)
            found.append((match[0], match[2]) if match else (None, ""))
    return found


def _dropped_candidates(
    history: Sequence[Message], output: Sequence[Message], dropped: list[str]
) -> list[tuple[int, str, str]]:
    """The input tool messages that were removed, found the most exact way that agrees with the
    report: messages absent from the output (the core keeps the very same objects), then the
    spec §2.1 pairing walk, then every tool message. Each way is tried only if the one before
    it disagrees."""
    kept = {id(m) for m in output}
    absent = [(i, m.tool_call_id, m.tool_name) for i, m in enumerate(history) if m.role == TOOL and id(m) not in kept]
    if [c[1] for c in absent] == dropped:
        return absent
    unpaired = _unpaired_results(history)
    if [c[1] for c in unpaired] == dropped:
        return unpaired
    return [(i, m.tool_call_id, m.tool_name) for i, m in enumerate(history) if m.role == TOOL]


def _unpaired_results(history: Sequence[Message]) -> list[tuple[int, str, str]]:
    """The tool messages that answer no earlier call still open (spec §2.1's pairing walk)."""
    pending: set[str] = set()
    unpaired = []
    for i, m in enumerate(history):
        if m.role == ASSISTANT:
            pending.update(c.id for c in m.tool_calls if c.id)
        elif m.role == TOOL and m.tool_call_id in pending:
            pending.discard(m.tool_call_id)
        elif m.role == TOOL:
            unpaired.append((i, m.tool_call_id, m.tool_name))
    return unpaired


def repair_findings(
    history: Sequence[Message], output: Sequence[Message], repair: HistoryRepair, *, numbered: bool = True
) -> list[Finding]:
    """Findings for a ``HistoryRepair`` of ``history`` that produced ``output``, numbered for
    people unless ``numbered`` is False (JSON has only the indexes: a million findings are
    then not built twice)."""
    found = _repair_findings(history, output, repair)
    return _numbered(found, history, output) if numbered else found


def _repair_findings(history: Sequence[Message], output: Sequence[Message], repair: HistoryRepair) -> list[Finding]:
    """Findings for a ``HistoryRepair`` of ``history`` that produced ``output``. Each kind of
    finding walks the histories only when the report has some: a history that needed no
    repair (the common case on resume) is not walked at all."""
    found: list[Finding] = []
    calls = _calls(history) if repair.synthesized or repair.truncated else []
    if repair.synthesized:
        synthesized_out = [
            (j, m.tool_call_id, m.tool_name)
            for j, m in enumerate(output)
            if m.role == TOOL and m.content == INTERRUPTED and not m.run_id
        ]
        placed = _match_in_order(repair.synthesized, synthesized_out)
        made = _match_in_order(repair.synthesized, calls)
        for cid, (out_index, _), (in_index, name) in zip(repair.synthesized, placed, made, strict=True):
            found.append(Finding(SYNTHESIZED, in_index, ASSISTANT, cid, name, out_index))
    if repair.dropped:
        dropped_from = _dropped_candidates(history, output, list(repair.dropped))
        for cid, (index, name) in zip(repair.dropped, _match_in_order(repair.dropped, dropped_from), strict=True):
            found.append(Finding(DROPPED, index, TOOL, cid, name))
    for cid, (index, name) in zip(repair.truncated, _match_in_order(repair.truncated, calls), strict=True):
        found.append(Finding(TRUNCATED, index, ASSISTANT, cid, name))
    return found


def _numbered(found: list[Finding], history: Sequence[Message], output: Sequence[Message]) -> list[Finding]:
    """The findings with the numbers people see (walks the histories only when there are some)."""
    if not found:
        return found
    from golem_cli.core.history.numbering import numbers

    before, after = numbers(history), numbers(output)

    def at(table: list[int | None], index: int | None) -> int | None:
        return table[index] if index is not None and 0 <= index < len(table) else None

    replace = msgspec.structs.replace
    return [replace(f, number=at(before, f.message_index), output_number=at(after, f.output_index)) for f in found]


def sanitize_findings(
    history: Sequence[Message], output: Sequence[Message], report: SanitizeReport, *, numbered: bool = True
) -> list[Finding]:
    """Findings for a ``SanitizeReport``: removed system prompts, unsafe parts, then the
    repair of what remained (located in the input history); ``numbered`` as for
    ``repair_findings``."""
    found = [Finding(SYSTEM_PROMPT, i, SYSTEM) for i, m in enumerate(history) if m.role == SYSTEM]
    for part in report.unsafe_parts:
        i = part.message_index
        role = history[i].role if 0 <= i < len(history) else ""
        found.append(Finding(UNSAFE_PART, i, role, part_kind=part.kind, scheme=part.scheme))
    found.extend(_repair_findings(history, output, report.repair))
    return _numbered(found, history, output) if numbered else found
