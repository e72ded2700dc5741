"""Property tests for the history algorithms: determinism, idempotence, purity, and agreement
with a literal transcription of the Go reference (spec §2.1)."""

from __future__ import annotations

import copy

from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.history.processors import trim_history
from golem_cli.core.history.repair import normalize_history, repair_history
from golem_cli.core.history.sanitize import sanitize_history
from golem_cli.core.messages import INTERRUPTED, Message
from hypothesis import given

from tests.core.strategies import HISTORIES


def reference_repair(history: list[Message]) -> list[Message]:
    """Spec §2.1 pseudocode, transcribed independently of golem's implementation."""
    pending: set[str] = set()
    kept: list[Message] = []
    dropped_any = False
    for m in history:
        if m.role == "assistant":
            kept.append(m)
            pending.update(c.id for c in m.tool_calls if c.id != "")
        elif m.role == "tool":
            if m.tool_call_id in pending:
                pending.remove(m.tool_call_id)
                kept.append(m)
            else:
                dropped_any = True
        else:
            kept.append(m)
    if not pending and not dropped_any:
        return list(history)
    if not pending:
        return kept
    out = []
    for m in kept:
        out.append(m)
        for c in m.tool_calls:
            if c.id in pending:
                out.append(Message(role="tool", content=INTERRUPTED, tool_call_id=c.id, tool_name=c.name))
    return out


@given(HISTORIES)
def test_normalize_is_the_reference_fixed_point(history):
    out, _ = normalize_history(history)
    assert out == reference_repair(reference_repair(history))
    assert reference_repair(out) == out  # a Go program repairing golem's output changes nothing


@given(HISTORIES)
def test_normalize_matches_reference_when_ids_are_unique(history):
    ids = [c.id for m in history for c in m.tool_calls if c.id]  # synthesis looks at every role
    if len(ids) == len(set(ids)):
        assert normalize_history(history)[0] == reference_repair(history)


@given(HISTORIES)
def test_normalize_deterministic_idempotent_pure(history):
    before = copy.deepcopy(history)
    out, report = normalize_history(history)
    assert history == before
    out2, report2 = normalize_history(history)
    assert (out2, report2.to_json()) == (out, report.to_json())
    again, report3 = normalize_history(out)
    assert again == out
    assert report3.synthesized == [] and report3.dropped == []
    assert report3.truncated == report.truncated  # detection repeats: args are never rewritten
    assert repair_history(history) == out


@given(HISTORIES)
def test_normalize_report_accounts_for_every_change(history):
    out, report = normalize_history(history)
    synthesized = [m for m in out if m.role == "tool" and m.content == INTERRUPTED and not m.run_id
                   and not any(m is h for h in history)]  # fmt: skip
    assert [m.tool_call_id for m in synthesized] == report.synthesized
    kept_tools = sum(1 for m in out if m.role == "tool") - len(synthesized)
    assert kept_tools + len(report.dropped) == sum(1 for m in history if m.role == "tool")


@given(HISTORIES)
def test_repaired_history_pairs_every_call(history):
    out = repair_history(history)
    pending: set[str] = set()
    for m in out:
        if m.role == "assistant":
            pending.update(c.id for c in m.tool_calls if c.id)
        elif m.role == "tool":
            assert m.tool_call_id in pending
            pending.discard(m.tool_call_id)
    assert not pending


@given(HISTORIES)
def test_sanitize_deterministic_idempotent_pure(history):
    before = copy.deepcopy(history)
    out, report = sanitize_history(history)
    assert history == before
    assert sanitize_history(history)[0] == out
    again, report2 = sanitize_history(out)
    assert again == out
    assert report2.system_prompts == 0 and report2.unsafe_parts == []
    assert report2.repair.synthesized == [] and report2.repair.dropped == []
    assert all(m.role != "system" for m in out)
    for m in out:
        assert all(p.url == "" or p.url.lower().startswith("http") for p in m.parts)


@given(HISTORIES)
def test_trim_is_a_suffix_that_opens(history):
    for n in (1, 3, 20):
        try:
            out = trim_history(n)(history)
        except HistoryProcessorError:
            continue
        assert out == history[len(history) - len(out):]
        assert len(out) <= max(n, 0) or len(history) <= n
        assert trim_history(n)(history) == out


@given(HISTORIES)
def test_dump_load_is_a_fixed_point(history):
    once = dump_history(history)
    loaded = load_history(once)
    assert dump_history(loaded) == once
    assert load_history(dump_history(loaded)) == loaded
    # Operations agree before and after persistence (args detection survives the file).
    assert normalize_history(loaded)[1].truncated == normalize_history(history)[1].truncated


@given(HISTORIES)
def test_skipping_the_second_pass_when_no_call_id_repeats_changes_nothing(history):
    """_repair runs the reference's second pass only when a call ID repeats (the only way it
    can change anything); forcing it must give the same history and report."""
    from golem_cli.core.history.repair import _repair, _scan

    needed = _scan(history, truncation=False)[0]
    assert _repair(history, needed) == _repair(history, needed, always_twice=True)
