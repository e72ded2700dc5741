"""That a tool call started, recorded beside the conversation before it runs (issue 24 bug 1).

A process killed while a tool runs (SIGKILL, a power cut, the OOM killer) leaves the call in
the history file without a result, and repair would close it with the text for calls that
never ran, inviting the model to run a migration or a push again. So each call's start, and
its end, are records in the conversation's ``runs`` log (the sidecars scheme), keyed by the call ID and
tagged ``call-start`` / ``call-end``: the run ledger's records in the same log have other tags,
and each reader skips the other's. On ``resume`` a call the history leaves without a result but
the log says started is closed with its own failed result (``close_started``) before repair
runs, so repair's never-ran text is left for the calls that truly never started.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import msgspec

from golem_cli.core.messages import ASSISTANT, TOOL, Message
from golem_cli.store.sidecars import RUNS, VERSION, Appender, decode_records, encode_record, read_log

#: The result of a call that started and whose process ended before it finished.
STARTED = (
    "Tool call started, but golem stopped before it finished; its outcome is unknown. "
    "Check what it did before calling it again."
)
#: The result of a call that finished but whose result the process did not save.
FINISHED = (
    "Tool call finished, but golem stopped before its result was saved; its outcome is unknown. "
    "Check what it did before calling it again."
)


class CallStarted(msgspec.Struct, kw_only=True, tag_field="event", tag="call-start"):
    v: int = VERSION
    key: str  # the call ID
    run: str  # the run it belongs to (a fork copies the records of the runs it copies)
    tool: str = ""
    at: float = 0.0


class CallEnded(msgspec.Struct, kw_only=True, tag_field="event", tag="call-end"):
    v: int = VERSION
    key: str
    run: str
    at: float = 0.0


class CallLog:
    """The call records of one conversation, appended as its calls start and end. Not fsynced:
    what a killed process wrote is in the OS's cache (only a power cut can lose it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._log = Appender(path, RUNS)

    def started(self, call_id: str, run: str, tool: str) -> None:
        if call_id:
            self._log.append([encode_record(CallStarted(key=call_id, run=run, tool=tool, at=time.time()))])

    def ended(self, call_id: str, run: str) -> None:
        if call_id:
            self._log.append([encode_record(CallEnded(key=call_id, run=run, at=time.time()))])


def recorded_calls(path: Path) -> dict[str, bool]:
    """Each call the log at ``path`` says started, and whether it also says it ended."""
    lines = read_log(path, RUNS).lines
    records: list[CallStarted | CallEnded] = decode_records(lines, CallStarted | CallEnded)  # type: ignore[arg-type]
    calls: dict[str, bool] = {}
    for record in records:
        if isinstance(record, CallStarted):
            calls.setdefault(record.key, False)
        elif record.key in calls:
            calls[record.key] = True
    return calls


class Closed(NamedTuple):
    """A call ``close_started`` gave a result: its ID, its tool, and whether it had finished."""

    call_id: str
    tool: str
    finished: bool


def unanswered(history: Sequence[Message]) -> bool:
    """Whether a call in ``history`` has no result (only then is the log worth reading)."""
    answered = {m.tool_call_id for m in history if m.role == TOOL}
    return any(c.id and c.id not in answered for m in history if m.role == ASSISTANT for c in m.tool_calls)


def close_started(history: Sequence[Message], path: Path) -> tuple[list[Message], list[Closed]]:
    """``history`` with a failed result, placed after the results of its round, for each call
    without one that the log at ``path`` says started; and which calls those were."""
    if not unanswered(history):
        return list(history), []
    calls = recorded_calls(path)
    answered = {m.tool_call_id for m in history if m.role == TOOL}
    out: list[Message] = []
    closing: list[Message] = []
    closed: list[Closed] = []
    for m in history:
        if closing and m.role != TOOL:
            out.extend(closing)
            closing = []
        out.append(m)
        for call in m.tool_calls if m.role == ASSISTANT else ():
            if call.id in calls and call.id not in answered:
                finished = calls[call.id]
                closing.append(Message(role=TOOL, content=FINISHED if finished else STARTED, tool_call_id=call.id,
                                       tool_name=call.name, failed=True, run_id=m.run_id,
                                       conversation_id=m.conversation_id))  # fmt: skip
                closed.append(Closed(call.id, call.name, finished))
                answered.add(call.id)
    out.extend(closing)
    return out, closed
