"""Tool calls' starts and ends in the ``runs`` log (store/sidecars/calls.py): a call the history leaves
without a result is closed as started (or finished) with its outcome unknown when the log says
so, placed in its round, and left to repair's never-ran text when the log does not."""

from __future__ import annotations

from pathlib import Path

from golem_cli.core.history.repair import normalize_history
from golem_cli.core.messages import INTERRUPTED, Message, ToolCall
from golem_cli.store.sidecars.calls import FINISHED, STARTED, CallLog, Closed, close_started, recorded_calls


def round_of(*ids: str) -> list[Message]:
    calls = [ToolCall(i, "run_command", "{}") for i in ids]
    return [Message("user", "go", run_id="r1"), Message("assistant", "", tool_calls=calls, run_id="r1", conversation_id="c")]


def test_calls_the_log_says_started_are_closed_as_such_in_their_round(tmp_path: Path):
    log_path = tmp_path / "x.runs.jsonl"
    log = CallLog(log_path)
    log.started("a", "r1", "run_command")
    log.started("b", "r1", "run_command")
    log.ended("b", "r1")
    # another record kind in the same log (the run ledger's), a torn last line: both skipped
    with open(log_path, "ab") as f:
        f.write(b'{"event":"run-start","v":1,"key":"r1","run":"r1"}\n{"event":"call-start","v":1,"key":"c"')
    assert recorded_calls(log_path) == {"a": False, "b": True}
    history = round_of("a", "b", "c") + [Message("tool", "done", tool_call_id="x")] + [Message("user", "next")]
    closed, which = close_started(history, log_path)
    assert which == [Closed("a", "run_command", False), Closed("b", "run_command", True)]
    assert [(m.role, m.tool_call_id, m.content) for m in closed[2:5]] == [
        ("tool", "x", "done"), ("tool", "a", STARTED), ("tool", "b", FINISHED)
    ]  # fmt: skip
    assert closed[3].failed and closed[3].run_id == "r1" and closed[3].conversation_id == "c"
    repaired, report = normalize_history(closed)
    assert report.synthesized == ["c"]  # never started: the never-ran text, as before
    assert [m.content for m in repaired if m.tool_call_id == "c"] == [INTERRUPTED]


def test_no_log_or_nothing_unanswered_changes_nothing(tmp_path: Path):
    history = round_of("a")
    assert close_started(history, tmp_path / "missing.runs.jsonl") == (history, [])
    answered = history + [Message("tool", "ok", tool_call_id="a")]
    CallLog(tmp_path / "x.runs.jsonl").started("a", "r1", "run_command")
    assert close_started(answered, tmp_path / "x.runs.jsonl") == (answered, [])
