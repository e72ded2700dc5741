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
    assert footer.ids == f"[dim]conversation[/dim] [bold cyan]{CID[-12:]}[/] · [dim]2 stored, 1 sent[/dim] · [dim]run r1[/dim]"


def test_a_refused_save_is_said_under_the_turn():
    footer = chat_footer(outcome(reply="x"), stopped="", unsaved=OSError(28, "No space left on device"),
                         unsaved_before=False, width=200)  # fmt: skip
    assert any(line.startswith("[yellow]Not saved: the disk is full.") for line in footer.lines)
    assert "2 not saved" in footer.ids
    healed = chat_footer(outcome(reply="x"), stopped="", unsaved=None, unsaved_before=True, width=200)
    assert healed.lines == ["[dim]Saved: the turns kept in memory are on disk now.[/dim]"]


RUN = "019ad1c2-7f00-7000-8000-00000000abcd"
SHORT = CID[-12:]  # the handle (issue 27): the footer never shows a whole ID
PRICED = dict(usage=Usage(input_tokens=12_000, output_tokens=340, cache_read_tokens=10_440, cache_write_tokens=800),
              cost=0.0123, total_cost=0.4567)  # fmt: skip


def figures(width: int, **kw: object) -> str:
    from rich.text import Text

    done = TurnOutcome(prompt="q", reply="x", run_id=RUN, conversation_id=CID, stored=14, sent=9, **{**PRICED, **kw})  # type: ignore[arg-type]
    ids = chat_footer(done, stopped="", unsaved=None, unsaved_before=False, width=width).ids
    plain = Text.from_markup(ids).plain
    assert len(plain) <= width, (len(plain), plain)
    return plain


def test_the_figures_line_holds_everything_when_wide():
    assert figures(200) == (f"conversation {SHORT} · 14 stored, 9 sent · $0.0123 (total $0.4567) · cache 87% · "
                            f"12,000 in / 340 out tokens · run {RUN[-12:]}")  # fmt: skip


def test_the_figures_line_fits_80_columns_dropping_in_the_issues_order():
    """Kept in this order: the short conversation ID, stored/sent, cost, cache share, tokens,
    the run ID (issue 22 item 3)."""
    assert figures(80) == f"{SHORT} · 14 stored, 9 sent · $0.0123 (total $0.4567) · cache 87%"
    assert figures(60) == f"{SHORT} · 14 stored, 9 sent · $0.0123 (total $0.4567)"
    assert figures(50) == f"{SHORT} · 14 stored, 9 sent"
    assert figures(30) == f"{SHORT}"
    assert figures(110) == (f"{SHORT} · 14 stored, 9 sent · $0.0123 (total $0.4567) · cache 87% · "
                            "12,000 in / 340 out tokens")  # fmt: skip


def test_an_unknown_price_shows_tokens_only_and_says_it_once():
    shown = figures(200, cost=None, total_cost=0.0)
    assert "$" not in shown and "12,000 in / 340 out tokens" in shown
    hint = 'The price of openai:x is unknown: set it in config.toml: [models."openai:x"] price = ...'
    done = outcome(reply="x", price_hint=hint)
    lines = chat_footer(done, stopped="", unsaved=None, unsaved_before=False, width=200).lines
    assert lines == [f"[dim]{hint.replace('[', chr(92) + '[')}[/dim]"]


def test_a_first_turn_has_no_separate_total_and_a_passed_budget_is_said():
    assert "$0.0123 · cache" in figures(200, total_cost=0.0123)
    done = outcome(reply="x", over_budget="$0.0200 spent, past the budget of $0.0100")
    lines = chat_footer(done, stopped="", unsaved=None, unsaved_before=False, width=200).lines
    assert lines == ["[yellow]Budget: $0.0200 spent, past the budget of $0.0100; the next turn is refused.[/yellow]"]
