"""The compaction side of a chat session (ADR 0032): the summary in force, ``/compact`` and its
undo, rolling folds and auto-compact. Prints nothing; what a person should hear is in
``notices``, one line each, said once.

The session asks ``summary_parts`` for what a run carries before the window; everything else
here changes only the ``summaries`` sidecar, never the history file.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct

from golem_cli.core.compaction import (
    DEFAULT_KEEP,
    Compaction,
    CompactionError,
    after_point,
    compaction_messages,
    request_summary,
    summary_message,
    tail_start,
)
from golem_cli.core.errors import GolemError
from golem_cli.core.history.processors import HistoryProcessor
from golem_cli.core.ids import new_id
from golem_cli.core.messages import Message
from golem_cli.core.usage import Usage
from golem_cli.store.sidecars import SUMMARIES, Summary, current_sig
from golem_cli.store.sidecars.summaries import (
    Placed,
    SummariesRead,
    add_summary,
    drop_newest,
    new_summary,
    placed,
    read_summaries,
    replace_text,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from golem_cli.config.schema import ModelTable
    from golem_cli.core.agent import Agent
    from golem_cli.core.model import Model
    from golem_cli.store import Store
    from golem_cli.store.sidecars.ledger import Ledger

__all__ = ["Compacted", "Compactor"]

#: Auto-compact stops trying after this many failures in a row (said once).
BREAKER = 2


class Compacted(Struct, frozen=True, kw_only=True):
    """A compaction made: the summary stored, the call that wrote it, how many messages it
    covers and how many stay verbatim."""

    summary: Summary
    call: Compaction
    covered: int
    kept: int
    cost: float | None = None  # USD, None when the price is unknown


class Session(Protocol):
    """What compaction uses of its chat session (``session.ChatSession``)."""

    store: Store
    conversation_id: str
    history: list[Message]
    skipped: int
    model: Model
    ledger: Ledger
    model_tables: Mapping[str, ModelTable]
    spent: float
    conversation_cost: float

    @property
    def stored(self) -> int: ...

    def window(self) -> HistoryProcessor: ...

    def estimate_tokens(self, prompt: str) -> int: ...

    def agent(self, *, summary: bool = True) -> Agent: ...


class Compactor:
    """What a chat session knows of its summaries, and the compactions it makes."""

    def __init__(self, session: Session) -> None:
        self.session = session
        #: ``summarize_trimmed``: fold what leaves the window into the summary after each turn
        self.rolling = False
        #: ``auto_compact``: compact before a request past this share of the context window
        self.auto: float | None = None
        #: the context window in tokens auto-compact measures against (None: the model's, as known)
        self.context_window: int | None = None
        #: ``compact_model``: the model that writes summaries (None: the conversation's)
        self.model: Model | None = None
        self.keep = DEFAULT_KEEP
        self.notices: list[str] = []
        self.failures = 0  # auto-compact's, in a row
        self._read: SummariesRead | None = None
        self._said: set[str] = set()

    # --- the summary in force ------------------------------------------------------------------

    def summaries(self) -> list[Summary]:
        """The stored summaries, oldest first (read again when the file changed)."""
        s = self.session
        path = s.store.sidecar_path(s.conversation_id, SUMMARIES)
        if self._read is None or current_sig(path) != self._read.sig:
            self._read = read_summaries(s.store, s.conversation_id)
            if self._read.problem:
                self._say(self._read.problem)
        return self._read.summaries

    def in_force(self) -> Placed | None:
        """The newest summary that can be placed in the session's history, with its point."""
        stored = self.summaries()
        if not stored:
            return None
        found = placed(stored, self.session.history, self.session.skipped)
        if found is None:
            self._say(
                f"the summaries of {self.session.conversation_id} cover messages this conversation no longer holds; "
                "it is sent as if it had never been compacted"
            )
        return found

    def summary_parts(self, window: HistoryProcessor) -> tuple[tuple[Message, ...], HistoryProcessor]:
        """What a run carries before the window (the summary message, or nothing) and the trim
        over the messages after the summary's point."""
        found = self.in_force()
        if found is None:
            return (), window
        return (summary_message(found.summary.text, found.summary.number),), after_point(found.point, window)

    # --- compacting ------------------------------------------------------------------------------

    async def compact(self, *, focus: str = "", keep: int | None = None, by: str = "compact") -> Compacted:
        """Summarise every stored message before the newest ``keep`` (read from the file, not
        only the window this session holds) into a new summary, which folds in the one in force."""
        history = self.whole_history()
        point = tail_start(history, self.keep if keep is None else keep)
        return await self._summarise(history, point, focus=focus, by=by)

    def planned_tokens(self, *, focus: str = "", keep: int | None = None) -> int:
        """About how many input tokens ``compact`` would send (golem's offline estimate), to say
        what it costs before it runs; ``CompactionError`` when there is nothing to compact."""
        from golem_cli.core.tokens import EstimatingCounter

        history = self.whole_history()
        messages, _ = self._request(history, tail_start(history, self.keep if keep is None else keep), focus, "compact")
        return EstimatingCounter().count(messages) + self.tool_tokens()

    def tool_tokens(self) -> int:
        """The offline estimate of the tool definitions a request carries."""
        import msgspec

        from golem_cli.core.tokens import estimate_text

        definitions = self.session.agent(summary=False).config.tool_definitions()
        return estimate_text(msgspec.json.encode([(t.name, t.description, t.parameters) for t in definitions]).decode())

    def _request(self, history: list[Message], point: int | None, focus: str, by: str) -> tuple[list[Message], int]:
        """The compaction request's messages for a summary of ``history[:point]``, and the point."""
        current = placed(self.summaries(), history)
        start = current.point if current is not None else 0
        if point is None or point <= start:
            raise CompactionError(
                "nothing to compact: every message before the newest ones is already summarised"
                if current is not None
                else "nothing to compact yet: the conversation is shorter than the messages kept verbatim",
                hint="compacting works once there are more messages (--keep N keeps fewer verbatim)",
            )
        previous = summary_message(current.summary.text, current.summary.number) if current is not None else None
        instructions = self.session.agent(summary=False).config.instructions
        covered = history[start:point]
        return compaction_messages(instructions, previous, covered, focus=focus, shrink=by == "rolling"), point

    async def _summarise(self, history: list[Message], point: int | None, *, focus: str, by: str) -> Compacted:
        messages, point = self._request(history, point, focus, by)
        config = self.session.agent(summary=False).config
        model = self.model or self.session.model
        run_id = new_id()
        ledger = self.session.ledger
        ledger.started(run_id, kind="compact", model=model.name)
        try:
            call = await request_summary(
                model, messages, tools=config.tool_definitions(), settings=config.settings, cache_key=config.cache_key
            )
        except BaseException as e:
            stopped = isinstance(e, asyncio.CancelledError | KeyboardInterrupt)
            ledger.ended(run_id, usage=Usage(), requests=1, finish_reason="", failed=not stopped, stopped=stopped,
                         cost=None)  # fmt: skip
            raise
        cost = self.cost(model.name, call.usage)
        ledger.ended(run_id, usage=call.usage, requests=1, finish_reason="stop", failed=False, stopped=False, cost=cost)
        self.session.spent += cost or 0.0  # a budget counts compactions too
        self.session.conversation_cost += cost or 0.0
        summary = new_summary(history, point, call.text, by=by, model=call.model, focus=focus, compact_run=run_id)
        add_summary(self.session.store, self.session.conversation_id, summary)
        self._read = None
        return Compacted(summary=summary, call=call, covered=point, kept=len(history) - point, cost=cost)

    def cost(self, model: str, usage: Usage) -> float | None:
        """What a compaction call cost at the price of the model that made it (None: unknown)."""
        from golem_cli.core.cost import cost_of
        from golem_cli.providers import catalog

        price = catalog.known(model, self.session.model_tables).price
        return cost_of(usage, price) if price is not None else None

    def planned_cost(self, *, focus: str = "", keep: int | None = None) -> tuple[int, float | None]:
        """The input tokens ``compact`` would send and what they cost at most (every token at
        the input price: before the provider's cache reads), None when the price is unknown."""
        from golem_cli.providers import catalog

        tokens = self.planned_tokens(focus=focus, keep=keep)
        price = catalog.known((self.model or self.session.model).name, self.session.model_tables).price
        return tokens, price.input_cost(tokens) if price is not None else None

    def whole_history(self) -> list[Message]:
        """Every message the file holds up to the end of the session's history."""
        s = self.session
        if not s.skipped:
            return list(s.history)
        return s.store.load(s.conversation_id)[: s.stored]

    def undo(self) -> Summary | None:
        """Remove the newest summary; the one removed (None when there was none)."""
        s = self.session
        gone = drop_newest(s.store, s.conversation_id)
        self._read = None
        return gone

    def edit(self, text: str) -> Summary | None:
        """The newest summary's text replaced by the user's."""
        s = self.session
        edited = replace_text(s.store, s.conversation_id, text)
        self._read = None
        return edited

    # --- after and before a turn -----------------------------------------------------------------

    def fold_due(self) -> int | None:
        """With rolling summaries on: the point a fold would move the summary to, when the
        window's start has moved past the summary's point (None: nothing to fold)."""
        if not self.rolling:
            return None
        s = self.session
        current = self.in_force()
        start = current.point if current is not None else 0
        after = s.history[start:]
        try:
            window = s.window()(after)
        except GolemError:
            return None
        cut = start + len(after) - len(window)
        return cut if cut > start and cut < len(s.history) else None

    async def fold(self) -> Compacted | None:
        """Fold what left the window into the summary; a failure keeps the previous summary and
        is said once (until a fold succeeds again)."""
        point = self.fold_due()
        if point is None:
            return None
        try:
            done = await self._summarise(self.whole_history(), point + self.session.skipped, focus="", by="rolling")
        except GolemError as e:
            self._say(f"the rolling summary could not be updated ({e}); the previous one is kept", key="fold")
            return None
        self._said.discard("fold")
        return done

    async def before_turn(self, prompt: str) -> Compacted | None:
        """Auto-compact: when the next request would pass ``auto`` of the context window,
        compact first and say so; after ``BREAKER`` failures in a row, stop trying (said once)."""
        window = self.window_size()
        if self.auto is None or not window or self.failures >= BREAKER:
            return None
        try:
            estimate = self.session.estimate_tokens(prompt)
        except GolemError:
            return None  # the turn itself says what is wrong with the window
        if estimate < self.auto * window:
            return None
        try:
            done = await self.compact(by="auto")
        except asyncio.CancelledError:  # Ctrl-C stops the compaction, not the turn: said, and it goes on
            _uncancel()
            self.notices.append("auto-compact stopped; the turn was sent without it")
            return None
        except GolemError as e:
            self.failures += 1
            stop = "; auto-compact is off for this session" if self.failures >= BREAKER else ""
            self._say(f"auto-compact failed ({e}){stop}", key=f"auto{self.failures}")
            return None
        self.failures = 0
        share = round(100 * estimate / window)
        self.notices.append(
            f"the next request was about {share}% of the context window: compacted messages 1-{done.summary.number} "
            f"first (/summary shows it, /compact undo removes it)"
        )
        return done

    async def too_long(self, e: BaseException) -> Agent | None:
        """With auto-compact on, a turn whose request the provider said is too long (before
        anything came of it) is compacted first and sent again: the agent of that retry, with a
        notice; None when it is not that, or the compaction failed (the caller halves the window)."""
        from golem_cli.core.errors import ContextTooLong, RunError

        if self.auto is None or not isinstance(e, RunError) or not isinstance(e.cause, ContextTooLong):
            return None
        if e.interrupted or (e.partial is not None and len(e.partial.new_messages) > 1):  # more than the prompt
            return None
        try:
            done = await self.compact(by="auto")
        except GolemError:
            return None
        self.notices.append(
            f"{self.session.model.name} said the request was too long: compacted messages 1-{done.summary.number} "
            "first and sent it again (all are kept)"
        )
        return self.session.agent()

    def window_size(self) -> int | None:
        """The context window auto-compact measures against: ``context_window`` when set, else
        what golem knows of the session's model (built in, or ``context_window`` in its table)."""
        if self.context_window:
            return self.context_window
        from golem_cli.providers import catalog

        return catalog.known(self.session.model.name, self.session.model_tables).context_window

    def _say(self, line: str, key: str | None = None) -> None:
        key = key or line
        if key not in self._said:
            self._said.add(key)
            self.notices.append(line)

    def take_notices(self) -> list[str]:
        lines, self.notices = self.notices, []
        return lines


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        while task.cancelling():
            task.uncancel()
