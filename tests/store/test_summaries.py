"""The summaries sidecar and what a run sends after a compaction point (issue 23, ADR 0032)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from golem_cli.core.compaction import SUMMARY_MARK, tail_start
from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.history.repair import repair_history
from golem_cli.core.messages import ASSISTANT, SYSTEM, TOOL, USER, Message, ToolCall, opens_request
from golem_cli.core.offline import EchoModel
from golem_cli.session import ChatSession, message_window
from golem_cli.store import Store
from golem_cli.store.sidecars import SUMMARIES, Summary
from golem_cli.store.sidecars.summaries import add_summary, locate, new_summary, read_summaries
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES


def turns(n: int, *, tools: bool = False) -> list[Message]:
    """``n`` turns, each its own run: a prompt, (a tool round,) a reply."""
    out = [Message(role=SYSTEM, content="be brief")]
    for i in range(n):
        run = f"run-{i}"
        out.append(Message(role=USER, content=f"prompt {i}", run_id=run))
        if tools and i % 2:
            call = ToolCall(id=f"c{i}", name="read_file", args='{"path":"a.txt"}')
            out.append(Message(role=ASSISTANT, tool_calls=[call], run_id=run))
            out.append(
                Message(role=TOOL, content=f"result {i}", tool_call_id=f"c{i}", tool_name="read_file", run_id=run)
            )
        out.append(Message(role=ASSISTANT, content=f"reply {i}", run_id=run))
    return out


def sent(session: ChatSession) -> list[Message]:
    """The history a run sends (as the agent builds it: processed, repaired, no system messages)."""
    return without_system(session.agent().process_history(session.history))


def without_system(history: list[Message]) -> list[Message]:
    return [m for m in repair_history(history) if m.role != SYSTEM]


def leading_system(history: list[Message]) -> list[Message]:
    """``history`` with its system messages only where golem writes them, first (one later in
    the history counts as a message that can open a request, and the window's own rule then
    lets a call turn open it: not compaction's to change)."""
    head = next((i for i, m in enumerate(history) if m.role != SYSTEM), len(history))
    return history[:head] + [m for m in history[head:] if m.role != SYSTEM]


@st.composite
def histories_with_points(draw: st.DrawFn) -> tuple[list[Message], int]:
    history = draw(st.one_of(HISTORIES.map(leading_system), st.integers(1, 12).map(lambda n: turns(n, tools=True))))
    points = [i for i, m in enumerate(history) if i > 0 and m.role != SYSTEM and opens_request(m)]
    assume(points)
    return history, draw(st.sampled_from(points))


@given(histories_with_points(), st.integers(1, 8))
def test_any_history_any_point_sends_the_summary_then_a_suffix_that_opens_a_request(case, n) -> None:
    """The stored file is unchanged byte for byte, and what a run sends is the summary message
    and then the window of the messages at and after the point (the summary outside N)."""
    history, point = case
    with tempfile.TemporaryDirectory() as root:
        store = Store(Path(root))
        cid = store.create(history)
        before = store.messages_path(cid).read_bytes()
        add_summary(store, cid, new_summary(history, point, "the gist"))
        assert store.messages_path(cid).read_bytes() == before
        session = ChatSession(store, cid, EchoModel(), history=store.load(cid), max_messages=n)
        try:
            expected = message_window(n)(session.history[point:])
        except HistoryProcessorError:
            assume(False)
        out = sent(session)
        assert out[0].role == USER and out[0].content.startswith(SUMMARY_MARK) and out[0].content.endswith("the gist")
        suffix = out[1:]
        assert suffix == without_system(expected)
        assert not suffix or opens_request(suffix[0])
        assert store.messages_path(cid).read_bytes() == before


def test_a_compaction_writes_only_the_sidecar_and_the_next_run_sends_summary_and_tail(store: Store) -> None:
    history = turns(10, tools=True)
    cid = store.create(history, hold=True)
    before = store.messages_path(cid).read_bytes()
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid))
    done = asyncio.run(session.compactor.compact(keep=6))
    assert store.messages_path(cid).read_bytes() == before
    point = tail_start(history, 6)
    assert done.covered == point and done.kept == len(history) - point
    out = sent(session)
    assert out[1:] == history[point:]
    assert "the user said: prompt 0" in out[0].content and "read_file x" in out[0].content
    (stored,) = read_summaries(store, cid).summaries
    assert stored.run == history[point - 1].run_id and stored.through == point - 1


def test_a_damaged_summaries_file_is_sent_as_never_compacted_with_one_line(store: Store) -> None:
    history = turns(8)
    cid = store.create(history)
    add_summary(store, cid, new_summary(history, 9, "gist"))
    store.sidecar_path(cid, SUMMARIES).write_bytes(b'{"v":1,"summaries":[{"run":')  # torn
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid), max_messages=40)
    assert sent(session) == history[1:]
    (line,) = session.take_notices()
    assert "cannot be read" in line and "as if it had never been compacted" in line
    sent(session)
    assert session.take_notices() == []  # said once


def test_a_missing_summaries_file_is_no_summary(store: Store) -> None:
    history = turns(4)
    cid = store.create(history)
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid), max_messages=40)
    assert sent(session) == history[1:] and session.take_notices() == []


def test_a_planted_summaries_file_is_not_followed(store: Store, tmp_path: Path) -> None:
    history = turns(4)
    cid = store.create(history)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"v":1,"summaries":[{"run":"run-1","through":4,"text":"planted"}]}')
    store.sidecar_path(cid, SUMMARIES).symlink_to(target)
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid), max_messages=40)
    assert sent(session) == history[1:]
    assert "cannot be read" in session.take_notices()[0]


def test_a_repair_that_moves_messages_cannot_misplace_a_summary() -> None:
    """A synthesized result inserted before the covered message shifts positions; the summary
    is found by its run ID, after the last message of that run."""
    history = turns(6, tools=True)
    point = tail_start(history, 4)
    assert point is not None
    summary = new_summary(history, point, "gist")
    shifted = [*history[:3], Message(role=USER, content="merged from elsewhere", run_id="other"), *history[3:]]
    assert locate(summary, history) == point
    assert locate(summary, shifted) == point + 1
    gone = [m for m in history if m.run_id != summary.run]
    assert locate(summary, gone) is None
    # a point inside a run (after its prompt, before its reply): found by its place in the run
    reply = max(i for i, m in enumerate(history) if m.run_id == "run-4")
    inside = new_summary(history, reply, "gist")
    assert locate(inside, history) == reply and locate(inside, shifted) == reply + 1


def test_a_summary_that_cannot_be_placed_is_said_and_left_out(store: Store) -> None:
    history = turns(4)
    cid = store.create(history)
    add_summary(store, cid, Summary(run="not-here", through=2, text="gist"))
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid), max_messages=40)
    assert sent(session) == history[1:]
    assert "no longer holds" in session.take_notices()[0]


@pytest.mark.parametrize("keep", [1, 6, 100])
def test_nothing_to_compact_is_an_error_that_changes_nothing(store: Store, keep: int) -> None:
    from golem_cli.core.compaction import CompactionError

    history = turns(2)
    cid = store.create(history)
    session = ChatSession(store, cid, EchoModel(), history=store.load(cid))
    if keep == 1:
        asyncio.run(session.compactor.compact(keep=keep))
    with pytest.raises(CompactionError):
        asyncio.run(session.compactor.compact(keep=keep))
    assert len(read_summaries(store, cid).summaries) == (1 if keep == 1 else 0)


def test_auto_compact_compacts_before_a_request_past_its_share_and_says_so(store: Store) -> None:
    from tests.scripted import ScriptedModel, reply

    history = turns(12, tools=True)
    cid = store.create(history, hold=True)
    model = ScriptedModel([reply("the summary"), reply("the answer")])
    session = ChatSession(store, cid, model, history=store.load(cid), max_messages=40)
    session.compactor.auto, session.compactor.context_window = 0.8, 200  # the window is far past 80% of it
    outcome = asyncio.run(session.turn("next", stream=False))
    assert outcome.reply == "the answer"
    compaction, turn = model.requests
    assert compaction.messages[-1].content.startswith("[golem: compaction request]")
    assert turn.messages[1].content.startswith(SUMMARY_MARK) and turn.messages[1].content.endswith("the summary")
    (line,) = session.take_notices()
    assert "of the context window: compacted messages 1-" in line
    session.compactor.context_window = 10**6
    asyncio.run(session.turn("small now", stream=False))  # under the threshold: no compaction
    assert len(model.requests) == 3


def test_auto_compact_stops_after_two_failures_in_a_row(store: Store) -> None:
    from tests.scripted import ScriptedModel, fail, reply

    history = turns(12)
    cid = store.create(history, hold=True)
    model = ScriptedModel([reply("one"), reply("two"), reply("three")])
    session = ChatSession(store, cid, model, history=store.load(cid), max_messages=40)
    session.compactor.model = ScriptedModel([fail("no"), fail("no again"), reply("never asked")])
    session.compactor.auto, session.compactor.context_window = 0.5, 100
    said = []
    for prompt in ("a", "b", "c"):
        assert asyncio.run(session.turn(prompt, stream=False)).finished  # the turn goes on without it
        said += session.take_notices()
    assert len(session.compactor.model.requests) == 2  # the breaker: no third try
    assert said[0].startswith("auto-compact failed (no)") and said[1].endswith("auto-compact is off for this session")
    assert len(said) == 2 and read_summaries(store, cid).summaries == []


def test_a_request_the_provider_says_is_too_long_is_compacted_first_with_auto_compact_on(store: Store) -> None:
    from golem_cli.core.errors import ContextTooLong

    from tests.scripted import ScriptedModel, fail, reply

    history = turns(12)
    cid = store.create(history, hold=True)
    model = ScriptedModel([fail(ContextTooLong("prompt is too long", status=400)), reply("the summary"),
                           reply("the answer")])  # fmt: skip
    session = ChatSession(store, cid, model, history=store.load(cid), max_messages=40)
    session.compactor.auto = 0.8  # on; the window is not known, so only the provider's refusal triggers it
    outcome = asyncio.run(session.turn("next", stream=False))
    assert outcome.finished and outcome.reply == "the answer"
    refused, compaction, again = model.requests
    assert compaction.messages[-1].content.startswith("[golem: compaction request]")
    assert again.messages[1].content.startswith(SUMMARY_MARK) and len(again.messages) < len(refused.messages)
    assert any("said the request was too long: compacted messages 1-" in line for line in session.take_notices())
