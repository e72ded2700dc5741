"""What a finished turn shows after its reply, decided once for the REPL and for ``golem ask``:
the notice for a reply cut off or refused, how the turn ended when it did not end normally
(Ctrl-C, the tools Ctrl-C stopped, a stop at the approval question, a failure) with what it
kept, the REPL's footer (whether it is saved, its IDs and counts) and ``ask``'s exit code.

``turn_end`` decides; ``chat_footer`` and ``ask_lines`` say it in each surface's words (the REPL
in sentences under the reply, ``ask`` in ``golem:`` lines on stderr, naming the conversation
to continue).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from msgspec import Struct

from golem_cli.cli.errors import EXIT_INTERRUPTED, EXIT_OK, describe, exit_code_for, stopped_at_question
from golem_cli.cli.render.notices import ending_notice, what_is_saved
from golem_cli.cli.render.short_ids import handle, handle_markup
from golem_cli.core.cost import usd

if TYPE_CHECKING:
    from golem_cli.session import TurnOutcome


class Ending(enum.Enum):
    FINISHED = "finished"  # normally, or cut off / refused (the notice says so)
    TOOLS_STOPPED = "tools stopped"  # Ctrl-C while tools ran: which ones, in words
    INTERRUPTED = "interrupted"  # Ctrl-C otherwise
    STOPPED_AT_QUESTION = "stopped at the question"  # Ctrl-C at an approval question
    FAILED = "failed"  # the model or a tool failed


class TurnEnd(Struct, frozen=True, kw_only=True):
    """How one turn ended, and what of it is kept."""

    ending: Ending
    notice: str  # the reply was cut off or refused, else ""
    saved: str  # what an interrupted or failed turn kept of the reply, in words, else ""
    stopped: str  # the tools Ctrl-C stopped, as the tool view says it, else ""
    error: BaseException | None
    cut: bool  # a partial reply is saved

    @property
    def exit_code(self) -> int:
        if self.ending is Ending.FAILED:
            assert self.error is not None
            return exit_code_for(self.error)
        return EXIT_OK if self.ending is Ending.FINISHED else EXIT_INTERRUPTED


def turn_end(outcome: TurnOutcome, *, stopped: str = "", streamed: bool = True) -> TurnEnd:
    """How ``outcome`` ended; ``stopped``: the tool view's line for the tools Ctrl-C stopped;
    ``streamed``: whether the reply was streamed (a reply asked for whole keeps nothing of a
    body cut short)."""
    if outcome.interrupted:
        ending = Ending.TOOLS_STOPPED if stopped else Ending.INTERRUPTED
    elif stopped_at_question(outcome.error):
        ending = Ending.STOPPED_AT_QUESTION
    elif outcome.error is not None:
        ending = Ending.FAILED
    else:
        ending = Ending.FINISHED
    saved = what_is_saved(outcome, streamed=streamed)
    return TurnEnd(ending=ending, notice=ending_notice(outcome), saved=saved, stopped=stopped, error=outcome.error,
                   cut=outcome.cut)  # fmt: skip


# --- the REPL ----------------------------------------------------------------------------------


class Footer(Struct, frozen=True, kw_only=True):
    """Rich markup: ``lines`` wrap at words; ``ids`` (the run and conversation) is printed as it is."""

    lines: list[str]
    ids: str


def chat_footer(
    outcome: TurnOutcome, *, stopped: str, unsaved: BaseException | None, unsaved_before: bool, width: int
) -> Footer:
    """The turn's last lines in the REPL: how it ended when not normally, whether it is saved
    when a save was refused (``unsaved``: this turn's refusal; ``unsaved_before``: an earlier
    one's that this turn's save made good), a budget passed, an unknown price, then its
    figures on one line of at most ``width`` (``footer_fields``)."""
    from rich.markup import escape

    from golem_cli.cli.render.terminal_text import visible

    end = turn_end(outcome, stopped=stopped)
    lines = [f"[yellow]{escape(end.notice)}[/yellow]"] if end.notice else []
    lines += _chat_ending(end)
    if unsaved is not None:
        why = escape(visible(describe(unsaved)))
        lines.append(f"[yellow]Not saved: {why}. The turn is kept in memory; the next turn saves the conversation "
                     "again, and leaving writes it elsewhere if that fails too.[/yellow]")  # fmt: skip
    elif unsaved_before:
        lines.append("[dim]Saved: the turns kept in memory are on disk now.[/dim]")
    if outcome.over_budget:
        lines.append(f"[yellow]Budget: {outcome.over_budget}; the next turn is refused.[/yellow]")
    if outcome.price_hint:
        lines.append(f"[dim]{escape(outcome.price_hint)}[/dim]")
    return Footer(lines=lines, ids=footer_fields(outcome, saved=unsaved is None, width=width))


def footer_fields(outcome: TurnOutcome, *, saved: bool, width: int) -> str:
    """The figures of a turn on one line of at most ``width`` columns, as markup, each ID as
    its handle (``/ids`` shows them whole): the conversation, stored and sent counts, the
    turn's cost and the conversation's, the share of the input read from cache, the tokens,
    the run. What does not fit is left out from the end of that list (issue 22's order), after
    the word "conversation" before the handle."""
    fields = [f"{outcome.stored} {'stored' if saved else 'not saved'}, {outcome.sent} sent"]
    if outcome.cost is not None:
        total = f" (total {usd(outcome.total_cost)})" if outcome.total_cost > outcome.cost + 1e-12 else ""
        fields.append(f"{usd(outcome.cost)}{total}")
    u = outcome.usage
    share = u.cache_share
    if share is not None and (u.cache_read_tokens or u.cache_write_tokens):
        fields.append(f"cache {share:.0%}")
    if not u.is_zero():
        fields.append(f"{u.input_tokens:,} in / {u.output_tokens:,} out tokens")
    fields.append(f"run {handle(outcome.run_id)}")
    head = f"[dim]conversation[/dim] {handle_markup(outcome.conversation_id)}"
    kept = _fitting(head, fields, width)
    if len(kept) < len(fields):  # the word "conversation" gives way first
        head = handle_markup(outcome.conversation_id)
        kept = _fitting(head, fields, width)
    return " · ".join([head, *(f"[dim]{field}[/dim]" for field in kept)])


def _fitting(head: str, fields: list[str], width: int) -> list[str]:
    """The first of ``fields`` that fit after ``head`` on ``width`` columns."""
    from rich.text import Text

    kept: list[str] = []
    for field in fields:
        if Text.from_markup(" · ".join([head, *kept, field])).cell_len > width:
            break
        kept.append(field)
    return kept


def _chat_ending(end: TurnEnd) -> list[str]:
    from rich.markup import escape

    from golem_cli.cli.render.terminal_text import visible

    if end.ending is Ending.TOOLS_STOPPED:
        return [f"[yellow]{escape(end.stopped)}[/yellow]"]
    if end.ending is Ending.INTERRUPTED:
        return [f"[yellow]Interrupted: {end.saved if end.cut else f'{end.saved}; your prompt is saved'}.[/yellow]"]
    if end.ending is Ending.STOPPED_AT_QUESTION:
        return ["[yellow]Stopped: the tool calls of that turn are closed; nothing else ran.[/yellow]"]
    if end.ending is Ending.FINISHED:
        return []
    assert end.error is not None
    failed = f"[red]error:[/red] {escape(visible(describe(end.error)))}"
    if end.cut:
        return [failed, "[dim]The partial reply is saved, marked interrupted. /retry asks again.[/dim]"]
    if end.saved:
        saved = f"{end.saved[0].upper()}{end.saved[1:]}"
        return [failed, f"[dim]{saved}; your prompt is saved. /retry sends it again.[/dim]"]
    return [failed, "[dim]Nothing is lost: your prompt is saved. /retry sends it again.[/dim]"]


# --- golem ask -----------------------------------------------------------------------------------


def ask_lines(end: TurnEnd, cid: str) -> list[str]:
    """What ``golem ask`` says on stderr after the reply, each line starting ``golem:``; where
    a turn was cut short it names the conversation to continue (``-c``, ``--cid``)."""
    where = f"conversation {cid}"
    lines = [f"golem: {end.notice}"] if end.notice else []
    saved = f"{end.saved} in {where}" if end.cut else end.saved
    if end.ending is Ending.TOOLS_STOPPED:
        lines.append(f"golem: {end.stopped[0].lower()}{end.stopped[1:-1]} ({where})")
    elif end.ending is Ending.INTERRUPTED:
        lines.append(f"golem: interrupted; {saved}" + ("" if end.cut else f"; your prompt is saved in {where}"))
    elif end.ending is Ending.STOPPED_AT_QUESTION:
        assert end.error is not None
        lines.append(f"golem: {describe(end.error)} ({where})")
    elif end.ending is Ending.FAILED:
        assert end.error is not None
        lines.append("golem: " + describe(end.error, saved=saved).replace("\n", " "))
    return lines
