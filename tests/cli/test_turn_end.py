"""One decision for how a finished turn ends (cli/render/turn.py), said by the REPL's footer and
by ``golem ask``: for each way a turn can end, both surfaces say the same thing in their own
words, and ``ask`` exits with the code that goes with it."""

from __future__ import annotations

import pytest
from golem_cli.cli.render.turn import Ending, ask_lines, chat_footer, turn_end
from golem_cli.core.errors import ModelError, RunCanceledError, RunError
from golem_cli.core.tools import STOPPED_AT_QUESTION
from golem_cli.core.usage import Usage
from golem_cli.session import TurnOutcome

CID = "01a0cf9e-0000-7000-8000-000000000001"
FAILED = RunError("model", ModelError("the server closed the connection"))
AT_QUESTION = RunError("canceled", RunCanceledError("run_command", "c1", STOPPED_AT_QUESTION))


def outcome(**kw: object) -> TurnOutcome:
    return TurnOutcome(prompt="q", reply=str(kw.pop("reply", "")), run_id="r1", conversation_id=CID, usage=Usage(),
                       stored=2, sent=1, **kw)  # type: ignore[arg-type]  # fmt: skip


CASES = [
    # (outcome, stopped tools, ending, ask's exit code, words the REPL says, words ask says)
    (outcome(reply="done"), "", Ending.FINISHED, 0, [], []),
    (outcome(reply="part", finish_reason="length", stop_reason="max_tokens"), "", Ending.FINISHED, 0,
     ["output token limit (max_tokens)"], ["golem: The reply was cut off: the model reached its output token limit"]),
    (outcome(interrupted=True), "", Ending.INTERRUPTED, 130,
     ["Interrupted: nothing of the reply arrived; your prompt is saved."],
     [f"golem: interrupted; nothing of the reply arrived; your prompt is saved in conversation {CID}"]),
    (outcome(reply="par", interrupted=True, cut=True), "", Ending.INTERRUPTED, 130,
     ["Interrupted: the partial reply is saved."], [f"golem: interrupted; the partial reply is saved in conversation {CID}"]),
    (outcome(interrupted=True), "Stopped run_command; its call is closed.", Ending.TOOLS_STOPPED, 130,
     ["Stopped run_command; its call is closed."], [f"golem: stopped run_command; its call is closed (conversation {CID})"]),
    (outcome(error=AT_QUESTION), "", Ending.STOPPED_AT_QUESTION, 130,
     ["Stopped: the tool calls of that turn are closed; nothing else ran."],
     ["golem: stopped at the approval question; the tool calls of that turn are closed, nothing else ran"]),
    (outcome(error=FAILED), "", Ending.FAILED, 1,
     ["error:", "the server closed the connection", "Nothing of the reply arrived; your prompt is saved. /retry"],
     ["golem: the server closed the connection; nothing of the reply arrived"]),
    (outcome(reply="par", error=FAILED, cut=True), "", Ending.FAILED, 1,
     ["The partial reply is saved, marked interrupted. /retry asks again."],
     [f"golem: the server closed the connection; the partial reply is saved in conversation {CID}"]),
]  # fmt: skip


@pytest.mark.parametrize(("done", "stopped", "ending", "code", "chat_words", "ask_words"), CASES,
                         ids=[f"{c[2].value}-{i}" for i, c in enumerate(CASES)])  # fmt: skip
def test_the_repl_and_ask_say_one_ending(done, stopped, ending, code, chat_words, ask_words):
    end = turn_end(done, stopped=stopped)
    assert (end.ending, end.exit_code) == (ending, code)
    footer = chat_footer(done, stopped=stopped, unsaved=None, unsaved_before=False, width=200)
    said = "\n".join(footer.lines)
    assert all(words in said for words in chat_words), said
    assert bool(footer.lines) == bool(chat_words)
    lines = ask_lines(end, CID)
    assert all(any(line.startswith(words) for line in lines) for words in ask_words), lines
    assert len(lines) == len(ask_words)
    assert f"run r1 · conversation[/dim] [bold cyan]{CID[-12:]}[/]" in footer.ids and "2 stored, 1 sent" in footer.ids


def test_a_refused_save_is_said_under_the_turn():
    footer = chat_footer(outcome(reply="x"), stopped="", unsaved=OSError(28, "No space left on device"),
                         unsaved_before=False, width=200)  # fmt: skip
    assert any(line.startswith("[yellow]Not saved: the disk is full.") for line in footer.lines)
    assert "2 not saved" in footer.ids
    healed = chat_footer(outcome(reply="x"), stopped="", unsaved=None, unsaved_before=True, width=200)
    assert healed.lines == ["[dim]Saved: the turns kept in memory are on disk now.[/dim]"]


def test_the_ids_line_breaks_before_the_counts_when_narrow():
    assert "\n" in chat_footer(outcome(), stopped="", unsaved=None, unsaved_before=False, width=40).ids
