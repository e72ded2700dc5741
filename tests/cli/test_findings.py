"""The repair report locates findings, and walks a history only for the kinds it has."""

from __future__ import annotations

from golem_cli.cli.render.findings import DROPPED, SYNTHESIZED, TRUNCATED, repair_findings
from golem_cli.core.history.repair import HistoryRepair, normalize_history
from golem_cli.core.messages import Message, ToolCall


class Walks(list):
    """A history that counts how often it is walked."""

    walks = 0

    def __iter__(self):
        Walks.walks += 1
        return super().__iter__()


def test_a_history_needing_no_repair_is_not_walked():
    history = Walks([Message("user", "hi"), Message("assistant", tool_calls=[ToolCall("c1", "f", "{}")]),
                     Message("tool", "ok", tool_call_id="c1", tool_name="f")] * 1000)  # fmt: skip
    Walks.walks = 0
    assert repair_findings(history, history, HistoryRepair()) == []
    assert Walks.walks == 0


def test_findings_are_located():
    history = [
        Message("assistant", tool_calls=[ToolCall("a", "read", "{}"), ToolCall("b", "grep", '{"cut')]),
        Message("tool", "orphan", tool_call_id="zz", tool_name="ls"),
    ]
    out, repair = normalize_history(history)
    found = {(f.kind, f.call_id): (f.message_index, f.tool_name) for f in repair_findings(history, out, repair)}
    assert found == {(SYNTHESIZED, "a"): (0, "read"), (SYNTHESIZED, "b"): (0, "grep"),
                     (DROPPED, "zz"): (1, "ls"), (TRUNCATED, "b"): (0, "grep")}  # fmt: skip
