"""One chat turn over the core, the store and a model: load, run, save. Prints nothing.

The stored file always holds the whole conversation; ``trim_history`` bounds only what a run
sends. The user's prompt is written to the file before the model is asked, so a process
killed mid-answer loses nothing the user typed. When a run fails or is interrupted, whatever
it produced (a partial reply marked as interrupted, a half-received tool call, completed tool
turns) is appended and saved too; the next run's repair closes what was left open.

With tools, each tool round is saved as the run records it: the turn that calls tools is
saved before any of them runs. A process killed mid-tool therefore leaves the calls in
the file without results, exactly as Ctrl-C does, and the next turn (or ``resume``) repairs
them. The chat's ``Toolbox`` decides which tools a run has and approves their calls; a call
of a tool that is not enabled now is answered with a failed result, never a failed run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from golem_cli.compacting import Compactor
from golem_cli.core.cost import Price, cost_of, usd
from golem_cli.core.errors import BudgetError, ContextTooLong, GolemError, HistoryProcessorError, RunError
from golem_cli.core.history.processors import HistoryProcessor, budget_history, trim_history
from golem_cli.core.history.repair import HistoryRepair, normalize_history, repair_history
from golem_cli.core.ids import new_id
from golem_cli.core.layout import ProjectInstructions, RequestLayout
from golem_cli.core.messages import (
    ASSISTANT,
    SYSTEM,
    USER,
    Message,
    Part,
    ToolCall,
    is_interrupted_reply,
    opens_request,
)
from golem_cli.core.model import Model, ModelSettings
from golem_cli.core.usage import Usage
from golem_cli.providers import catalog
from golem_cli.store import Store
from golem_cli.store.errors import StoreError
from golem_cli.store.sidecars import RUNS
from golem_cli.store.sidecars.calls import Closed, close_started
from golem_cli.store.sidecars.ledger import Ledger, Run, read_runs, totals

if TYPE_CHECKING:
    from golem_cli.config.schema import ModelTable
    from golem_cli.core.agent import Agent, RunResult
    from golem_cli.core.runconfig import RunHooks
    from golem_cli.store.locks import FileLock
    from golem_cli.store.meta import ChatSettings
    from golem_cli.store.store import Saved
    from golem_cli.tools.toolbox import Toolbox


class TurnOutcome(Struct, kw_only=True):
    """What a turn did, for the footer and for scripts."""

    prompt: str
    reply: str
    run_id: str
    conversation_id: str
    usage: Usage
    stored: int  # messages in the file after the turn (a system prompt is one of them)
    sent: int  # messages in the turn's request: see ``ChatSession.request_size``
    interrupted: bool = False
    error: GolemError | None = None
    finish_reason: str = ""  # golem's word for how the last reply ended (stop, length, content_filter...)
    stop_reason: str = ""  # the provider's own word for it (max_tokens, length, refusal...)
    refusal: bool = False  # the model declined; ``reply`` holds what it said
    cut: bool = False  # part of the last reply arrived before the turn ended: saved, marked (ADR 0005)
    earlier_replies: bool = False  # replies of earlier tool rounds of this turn came (and are saved)
    model: str = ""  # provider:model that answered
    requests: int = 0  # model calls the run made (failed and retried attempts included)
    last_input_tokens: int = 0  # the provider's count of the input of the run's last request (0: unknown)
    cost: float | None = None  # USD at the model's price; None when the price is unknown
    over_budget: str = ""  # this turn passed the budget (--max-cost): what it spent, in words
    total_cost: float = 0.0  # the conversation's cost so far, this turn included (known prices only)
    price_hint: str = ""  # said once per session: the model's price is unknown, and how to set it

    @property
    def finished(self) -> bool:
        """The model finished its reply (at a token limit too: ``cut_off`` says so); not
        when Ctrl-C or a failure ended the turn first."""
        return not self.interrupted and self.error is None

    @property
    def cut_off(self) -> bool:
        """The reply ended at a limit or a filter, not where the model meant to stop."""
        return self.finish_reason in ("length", "content_filter") and not self.refusal


def context_budget(max_tokens: int, stride: int = 1) -> HistoryProcessor:
    """``budget_history`` with the offline token estimate, for people: a new conversation has
    nothing to bound (the reference fails on an empty history), and a newest turn that alone
    exceeds the budget is said in words, with what to do."""
    from golem_cli.core.tokens import EstimatingCounter

    counter = EstimatingCounter()
    budget = budget_history(counter, max_tokens, stride)

    def process(history: list[Message]) -> list[Message]:
        if not history:
            return []
        try:
            return budget(history)
        except HistoryProcessorError:
            openers = [i for i, m in enumerate(history) if opens_request(m)]
            if not openers:
                raise
            needed = counter.count(history[openers[-1] :])
            raise HistoryProcessorError(
                f"the newest turn of this conversation alone is about {needed} tokens, more than the "
                f"context budget of {max_tokens} tokens",
                hint="raise --context-tokens (/trim N tokens in the chat) or start a new conversation",
            ) from None

    return process


def message_window(max_messages: int, stride: int = 1) -> HistoryProcessor:
    """``trim_history`` for people: when the newest ``max_messages`` are all tool calls and
    results (a prompt that ran into the turn limit, or was stopped among its tools), none of
    them can open a request and the reference fails every later run; the window then reaches
    back to the newest message that can (the prompt that started those calls), sending more
    than ``max_messages`` rather than nothing."""
    trim = trim_history(max_messages, stride)

    def process(history: list[Message]) -> list[Message]:
        if stride > 1 and stride >= max_messages:  # stride 1 is TrimHistory itself, whatever the window
            raise HistoryProcessorError(
                f"a trim stride of {stride} messages does not fit a window of {max_messages}",
                hint=f"use a stride below {max_messages} (--trim-stride, /trim N stride K)",
            )
        try:
            return trim(history)
        except HistoryProcessorError:
            opener = next((i for i in range(len(history) - 1, -1, -1) if opens_request(history[i])), None)
            if opener is None:
                raise
            return list(history[opener:])

    return process


def halved(window: HistoryProcessor) -> HistoryProcessor:
    """``window`` with the newest half of what it keeps, cut by ``TrimHistory``'s boundary rule
    (``message_window``'s): the tighter window of a turn the provider said is too long."""

    def process(history: list[Message]) -> list[Message]:
        kept = [m for m in window(history) if m.role != SYSTEM]
        return message_window(len(kept) // 2)(kept) if len(kept) > 1 else []

    return process


def root_conversation(history: list[Message], conversation_id: str) -> str:
    """The oldest conversation of a fork lineage: a fork's copied messages keep the stamps of
    the conversation they were written in, so the first stamp is the root's (store/meta.py
    reads lineage the same way). Forks and ``/retry`` share it, and so a prompt cache."""
    return next((m.conversation_id for m in history if m.conversation_id), conversation_id)


def system_prompt_of(history: list[Message]) -> str:
    """The instructions a stored conversation was last run with (its leading system message)."""
    for m in history:
        if m.role == SYSTEM:
            return m.content
    return ""


def with_system_prompt(history: list[Message], text: str) -> list[Message]:
    """``history`` with its system messages replaced by one holding ``text`` (none if empty)."""
    rest = [m for m in history if m.role != SYSTEM]
    return ([Message(role=SYSTEM, content=text)] if text else []) + rest


class ChatSession:
    """A conversation this process holds open (its lock is held) with the settings for a turn.

    The settings below are declared with their defaults (each immutable); ``__init__`` sets
    what depends on the conversation."""

    #: When set, what a run sends is bounded by this many tokens (estimated offline)
    #: instead of ``max_messages`` (``--context-tokens``, ``/trim N tokens``).
    context_tokens: int | None = None
    #: The window's cut moves in steps of this many messages (``--trim-stride``, ``/trim N
    #: stride K``): its start stays put between steps, so the provider's cache hits.
    trim_stride: int = 1
    #: Model options for every run (``-o``, ``/option``); the model's configured ones
    #: apply below them.
    options: ModelSettings = ModelSettings()
    #: Where the project instructions of every run are read (``config.project``), read
    #: again for each run and never saved; None: none are sent.
    project_root: Path | None = None
    last_run_id: str = ""
    created_here: bool = False  # set by ``start``: an unused new conversation is not kept
    took_over: str = ""  # set by ``resume``: who held the lock and died
    #: Whether a turn whose save is refused (a full disk, the size limit on history files)
    #: goes on with the turn kept in memory, ``unsaved`` saying why (the REPL: every later
    #: save writes the whole history again), rather than raising (``ask``).
    keep_unsaved: bool = False
    unsaved: StoreError | OSError | None = None
    uncreated: bool = False  # set by ``start``: the file is created by the first save
    skipped: int = 0  # set by ``resume_window``: messages of the file this session does not hold
    #: the chat's settings as last kept beside the conversation (cli/restore.py)
    kept_settings: ChatSettings | None = None
    #: What this process may spend in USD (``--max-cost``, ``max_cost``), None for no bound,
    #: and what its turns spent so far.
    max_cost: float | None = None
    spent: float = 0.0
    #: Whether this session said that its model's price is unknown.
    price_unknown_said: bool = False
    _retrying: bool = False  # the next turn asks again a prompt ``rewind_for_retry`` set aside

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        model: Model,
        *,
        history: list[Message] | None = None,
        system: str | None = None,
        max_messages: int = 20,
        tools: Toolbox | None = None,
    ) -> None:
        self.store = store
        self.toolbox = tools
        self.conversation_id = conversation_id
        self.model = model
        self.history = list(history if history is not None else store.load(conversation_id))
        self.system = system_prompt_of(self.history) if system is None else system
        self.max_messages = max_messages
        #: what the store said of this session's saves (``take_notices``)
        self.notices: list[str] = []
        #: where the system prompt came from ("-s", "/system")
        self.system_source = "-s" if system else ""
        #: set by ``resume``: calls that had started when golem stopped, closed as such
        self.closed: list[Closed] = []
        #: messages from elsewhere merged into the file within a turn: (where, which)
        self._foreign: list[tuple[int, list[Message]]] = []
        #: The config's ``[models."provider:model"]`` tables: prices and context windows that
        #: win over the built-in ones (``providers/catalog.py``).
        self.model_tables: Mapping[str, ModelTable] = {}
        self._open_ledger()
        #: the summaries beside the history, and the compactions this session makes
        self.compactor = Compactor(self)
        if system is not None and system != system_prompt_of(self.history):
            self.history = with_system_prompt(self.history, system)
            self.save()

    def _open_ledger(self) -> None:
        """The conversation's run ledger (store/sidecars/ledger.py): where this session's runs go, and
        what its earlier runs cost and last counted."""
        self.ledger = Ledger(self.store.sidecar_path(self.conversation_id, RUNS))
        earlier = self.runs()
        #: The conversation's cost so far (known prices only), each run counted once.
        self.conversation_cost = totals(earlier.values()).cost
        #: The provider's count of the input of the last run's last request (0: unknown), and that run.
        last = next((r for r in reversed(earlier.values()) if r.last_input_tokens), None)
        self.last_input_tokens, self.last_counted_run = (last.last_input_tokens, last.run_id) if last else (0, "")

    def runs(self) -> dict[str, Run]:
        """The conversation's runs as its ledger tells them (none when it is missing or damaged)."""
        return read_runs(self.ledger.path)

    # --- opening ---------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        store: Store,
        model: Model,
        *,
        system: str = "",
        max_messages: int = 20,
        tools: Toolbox | None = None,
        cid: str | None = None,
        with_prompt: bool = False,
    ) -> ChatSession:
        """A new conversation, held for this process (``cid``: the ID it was given before it
        was created, as a chat's banner shows it before the prompt; a fresh one otherwise).
        ``with_prompt``: its file is created by the first turn's save, holding the prompt (one
        write before the request instead of two: ``ask``); until then only its lock exists."""
        history = with_system_prompt([], system)
        if with_prompt:
            cid = cid or new_id()
            store.lock(cid)
        else:
            cid = store.create(history, cid=cid, model=model.name, hold=True)
        session = cls(store, cid, model, history=history, max_messages=max_messages, tools=tools)
        session.created_here = True
        session.uncreated = with_prompt
        session.system_source = "-s" if system else ""
        return session

    @classmethod
    def resume(
        cls,
        store: Store,
        conversation_id: str,
        model: Model,
        *,
        system: str | None = None,
        max_messages: int = 20,
        tools: Toolbox | None = None,
        lock: FileLock | None = None,
    ) -> tuple[ChatSession, list[Message], HistoryRepair]:
        """Hold a stored conversation, normalize it (saving the repair) and continue it.
        ``lock``: the conversation's lock, already taken (a chat takes it before its prompt
        and loads a long conversation after); released here if the conversation cannot be
        opened.

        Returns the session, the history as it was on disk, and the repair report.
        ``session.took_over`` names a dead process whose lock was taken over, if any."""
        lock = store.lock(conversation_id) if lock is None else lock
        try:
            before, closed = close_started(store.load(conversation_id), store.sidecar_path(conversation_id, RUNS))
            repaired, report = normalize_history(before)
            if report.changed or closed:
                store.save(conversation_id, repaired)
            store.set_model(conversation_id, model.name)
        except BaseException:
            store.release(conversation_id)
            raise
        session = cls(
            store, conversation_id, model, history=repaired, system=system, max_messages=max_messages, tools=tools
        )
        session.took_over = lock.took_over.describe() if lock.took_over else ""
        session.closed = closed
        return session, before, report

    @classmethod
    def resume_window(
        cls,
        store: Store,
        conversation_id: str,
        model: Model,
        *,
        max_messages: int = 20,
        tools: Toolbox | None = None,
        lock: FileLock | None = None,
    ) -> tuple[ChatSession, list[Message], HistoryRepair] | None:
        """``resume`` for a run that sends only the newest ``max_messages`` (``ask -c``): only
        the file's end and its leading system messages are read (``Store.load_tail``), and only
        they are repaired (damage further back is not looked for: ``resume`` and ``normalize``
        read everything). None when the file cannot be read so, or the window's repair would
        change its head: the caller resumes whole. Returns what ``resume`` returns, the
        history being the window. ``lock``: taken by the caller, kept held when None is
        returned (for the whole ``resume`` that follows)."""
        given = lock is not None
        lock = store.lock(conversation_id) if lock is None else lock
        try:
            window = store.load_tail(conversation_id, max_messages + 1)
            if window is None:
                if not given:
                    store.release(conversation_id)
                return None
            before, closed = close_started([*window.head, *window.messages], store.sidecar_path(conversation_id, RUNS))
            repaired, report = normalize_history(before)
            if report.changed and repaired[: len(window.head)] != window.head:
                if not given:
                    store.release(conversation_id)
                return None
            if report.changed or closed:
                store.save(conversation_id, repaired)  # the window's tail rewritten after its head
            store.set_model(conversation_id, model.name)
        except BaseException:
            store.release(conversation_id)
            raise
        session = cls(store, conversation_id, model, history=repaired, max_messages=max_messages, tools=tools)
        session.skipped = window.skipped
        session.took_over = lock.took_over.describe() if lock.took_over else ""
        session.closed = closed
        return session, before, report

    @property
    def stored(self) -> int:
        """How many messages the conversation's file holds as this session knows it (a window
        holds fewer of them: ``skipped``)."""
        return self.skipped + len(self.history)

    @property
    def is_empty(self) -> bool:
        """No prompt was ever sent in this conversation."""
        return not any(m.role == USER for m in self.history)

    def close(self) -> None:
        """Release the conversation; a new one that never got a prompt is removed, so
        opening and leaving a chat leaves no empty conversation behind."""
        try:
            if self.created_here and self.is_empty and not self.uncreated:
                self.store.delete(self.conversation_id)
        finally:
            self.store.release(self.conversation_id)

    # --- a turn ----------------------------------------------------------------------------

    def window(self) -> HistoryProcessor:
        """What a run sends of the history: ``--context-tokens`` or ``--max-messages``, in steps
        of ``trim_stride``."""
        stride = self.trim_stride
        if self.context_tokens:
            return context_budget(self.context_tokens, stride)
        return message_window(self.max_messages, stride)

    def agent(self, window: HistoryProcessor | None = None, *, summary: bool = True) -> Agent:
        """The agent of a run; ``window``: what it sends of the history (``self.window()``),
        after the summary in force (``summary=False``: without it, for the compaction request)."""
        from golem_cli.core.agent import Agent  # the run loop loads while the user types

        window = self.window() if window is None else window
        parts, window = self.compactor.summary_parts(window) if summary else ((), window)
        # The tool servers' instructions follow the chat's own; they are not stored with the
        # history (what a server says is outside input, and may change).
        project = self.project_instructions()
        layout = RequestLayout(
            system=self.system,
            project=(ProjectInstructions(path=str(self.project_root), text=project),) if project else (),
            servers=self.toolbox.server_instructions() if self.toolbox is not None else (),
            tools=self.toolbox.tools() if self.toolbox is not None else (),
            summary=parts,
        )
        return Agent(
            self.model,
            instructions=layout.instructions(),
            history_processor=layout.window(window),
            settings=self.options,
            tools=layout.tools,
            undeclared_tools="answer",
            tool_errors="answer",
            cache_key=root_conversation(self.history, self.conversation_id),
        )

    def project_instructions(self) -> str:
        """The project instructions of one run (``config.project``), "" when there are none."""
        from golem_cli.config.project import read_instructions

        return read_instructions(self.project_root).text if self.project_root is not None else ""

    async def turn(
        self,
        prompt: str,
        *,
        parts: Sequence[Part] = (),
        on_delta: Callable[[str], object] | None = None,
        on_event: Callable[[object], object] | None = None,
        stream: bool = True,
    ) -> TurnOutcome:
        """Run one turn and save it, whatever happens. Interruption (Ctrl-C, task
        cancellation) and failures end in a saved file and an outcome, not an exception.
        ``stream=False`` asks the model for the whole reply at once (no deltas)."""
        self.check_budget(prompt, parts)
        run_id = new_id()
        self.last_run_id = run_id
        asked = Message(
            role=USER, content=prompt, parts=list(parts), run_id=run_id, conversation_id=self.conversation_id
        )
        kind, self._retrying = ("retry" if self._retrying else "turn"), False
        self.ledger.started(run_id, kind=kind, model=self.model.name)  # before the save that follows it
        self._save_turn(self.history + [asked])  # the prompt is safe before the model is asked
        hooks = self._hooks(on_delta if stream else None, on_event if stream else None)
        sent = 0
        try:
            await self.compactor.before_turn(prompt)  # auto-compact, when the request would pass its share
            agent = self.agent()
            self.check_options()  # options the model refuses: refused here, so nothing counts as sent
            sent = self.request_size(agent)
            try:
                result = await self._run(agent, prompt, parts, run_id, hooks, stream=stream)
            except RunError as e:
                shorter = await self.compactor.too_long(e) or self._shorter(e, agent)
                if shorter is None:
                    raise
                agent, sent = shorter, self.request_size(shorter)
                result = await self._run(agent, prompt, parts, run_id, hooks, stream=stream)
        except RunError as e:
            return self._priced(self._failed_run(e, asked, sent))
        except GolemError as e:  # processor or validation errors: nothing was sent
            return self._priced(self._refused(e, asked))
        self.history = self.history + result.new_messages
        self._save_turn()
        last = result.response
        sent = _last_request(result.messages, len(result.new_messages), failed=False)
        return self._priced(TurnOutcome(
            prompt=prompt, reply=_reply_text(result.new_messages), run_id=run_id,
            conversation_id=self.conversation_id, usage=result.usage, stored=self.stored, sent=sent,
            finish_reason=last.finish_reason, stop_reason=last.stop_reason, refusal=last.refusal,
            requests=result.requests, last_input_tokens=last.usage.input_tokens,
        ))  # fmt: skip

    async def _run(
        self, agent: Agent, prompt: str, parts: Sequence[Part], run_id: str, hooks: RunHooks, *, stream: bool
    ) -> RunResult:
        run = agent.run_stream_with_history if stream else agent.run_with_history
        return await run(
            self.history, prompt, parts=parts, run_id=run_id, conversation_id=self.conversation_id, hooks=hooks
        )

    def _shorter(self, e: RunError, agent: Agent) -> Agent | None:
        """The agent of the one retry of a turn whose request the provider said is too long
        before anything came of it: half the window, with a notice saying so. None for any
        other failure, or when half the window is not shorter (only the prompt was sent)."""
        added = e.partial.new_messages if e.partial is not None else []
        if not isinstance(e.cause, ContextTooLong) or e.interrupted or len(added) > 1:  # more than the prompt
            return None
        was = [m for m in agent.process_history(self.history) if m.role != SYSTEM]
        window = halved(self.window())
        try:
            now = window(list(self.history))
        except HistoryProcessorError:
            return None
        if len(now) >= len(was):
            return None
        self.notices.append(
            f"{self.model.name} said the request was too long: sent it again with the newest {len(now)} "
            f"of the {len(was)} history messages it carried (all are kept)"
        )
        return self.agent(window)

    def _hooks(self, on_delta: Callable[[str], object] | None, on_event: Callable[[object], object] | None) -> RunHooks:
        """The run's hooks: deltas and events for the screen, approvals by the toolbox, and a
        save of each tool round as the run records it."""
        from golem_cli.core.runconfig import RunHooks

        before = self.history

        def record(new: list[Message]) -> None:
            # The calls of a tool round, saved before any tool runs (their results are saved
            # with the next round or at the end of the turn). Not fsynced: a killed process
            # loses nothing (the OS has the data), and the end of the turn saves durably.
            if new and new[-1].role == "assistant":
                self._save_turn(before + new, durable=False)

        approve = self.toolbox.approvals if self.toolbox is not None else None
        return RunHooks(on_delta=on_delta, on_event=self._calls_heard(on_event), approve=approve, on_record=record,
                        before_change=self._checkpoint)  # fmt: skip

    def _checkpoint(self, call: ToolCall, path: Path, before: bytes | None, after: bytes) -> None:
        """A file a tool is about to change, its previous bytes kept for ``/undo`` first."""
        self.store.checkpoints.keep(self.conversation_id, run=self.last_run_id, call=call.id, path=path,
                                    before=before, after=after)  # fmt: skip

    def _calls_heard(self, on_event: Callable[[object], object] | None) -> Callable[[object], object]:
        """``on_event`` after each call's start and end is recorded beside the conversation
        (store/sidecars/calls.py): the start before the call runs, so a ``resume`` after the process was
        killed knows it started."""
        from golem_cli.core.events import ToolCallFinished, ToolCallStarted
        from golem_cli.store.sidecars import RUNS
        from golem_cli.store.sidecars.calls import CallLog

        logs: dict[str, CallLog] = {}

        def hear(event: object) -> object:
            if isinstance(event, ToolCallStarted | ToolCallFinished):
                cid = self.conversation_id
                log = logs.get(cid) or logs.setdefault(cid, CallLog(self.store.sidecar_path(cid, RUNS)))
                try:
                    if isinstance(event, ToolCallStarted):
                        log.started(event.call.id, self.last_run_id, event.call.name)
                    else:
                        log.ended(event.call.id, self.last_run_id)
                except OSError:
                    pass  # less to say after a crash, never a failed call
            return on_event(event) if on_event is not None else None

        return hear

    def _failed_run(self, e: RunError, asked: Message, sent: int) -> TurnOutcome:
        """A run that failed or was interrupted: what it produced is kept and saved (at least
        the prompt), and the outcome says how it ended."""
        _uncancel()
        partial = e.partial
        added = partial.new_messages if partial else []
        self.history = self.history + (added or [asked])
        self._save_turn()
        cut = bool(added) and is_interrupted_reply(added[-1])
        if partial is not None:
            sent = _last_request(partial.messages, len(added), failed=e.stage == "model" and not cut)
        return TurnOutcome(
            prompt=asked.content, reply=_reply_text(added), run_id=asked.run_id, conversation_id=self.conversation_id,
            usage=partial.usage if partial else Usage(), stored=self.stored, sent=sent,
            interrupted=e.interrupted, error=None if e.interrupted else e, cut=cut,
            earlier_replies=any(m.role == "assistant" for m in added[: -1 if cut else None]),
            requests=e.requests,
        )  # fmt: skip

    def _refused(self, e: GolemError, asked: Message) -> TurnOutcome:
        """A turn refused before anything was sent (a history processor or validation): the
        prompt is kept. A processor's own error says it for people; the agent's wrapper adds
        Go's prefix."""
        self.history = self.history + [asked]
        self._save_turn()
        error = e.__cause__ if isinstance(e.__cause__, HistoryProcessorError) else e
        return TurnOutcome(
            prompt=asked.content, reply="", run_id=asked.run_id, conversation_id=self.conversation_id,
            usage=Usage(), stored=self.stored, sent=0, error=error,
        )  # fmt: skip

    def check_options(self, model: Model | None = None) -> None:
        """Raise the provider's ``ModelError`` when ``model`` (the chat's) refuses this chat's
        options, before anything is sent."""
        check = getattr(self.model if model is None else model, "check_settings", None)
        if check is not None:
            check(self.options)

    def refused_options(self, model: Model) -> list[tuple[str, str]]:
        """Each option of this chat ``model`` refuses on its own, with the provider's words."""
        import msgspec

        from golem_cli.core.model import ModelSettings

        refused = []
        for item in msgspec.structs.fields(self.options):
            value = getattr(self.options, item.name)
            if value is None or value == ():
                continue
            try:
                check = getattr(model, "check_settings", None)
                if check is not None:
                    check(msgspec.structs.replace(ModelSettings(), **{item.name: value}))
            except GolemError as e:
                refused.append((item.name, str(e)))
        return refused

    # --- cost ------------------------------------------------------------------------------

    @property
    def price(self) -> Price | None:
        """The price of the session's model now (it may change with ``/model``)."""
        return catalog.known(self.model.name, self.model_tables).price

    def _priced(self, outcome: TurnOutcome) -> TurnOutcome:
        """``outcome`` with the model that answered and what its usage cost, added to what
        this process spent, and the run's end in the ledger."""
        outcome.model = self.model.name
        if outcome.last_input_tokens:
            self.last_input_tokens, self.last_counted_run = outcome.last_input_tokens, outcome.run_id
        price = self.price
        if price is not None:
            outcome.cost = cost_of(outcome.usage, price)
            self.spent += outcome.cost
        elif not self.price_unknown_said and not outcome.usage.is_zero():
            self.price_unknown_said = True
            outcome.price_hint = f"The price of {self.model.name} is unknown: {catalog.price_hint(self.model.name)}."
        self.conversation_cost += outcome.cost or 0.0
        outcome.total_cost = self.conversation_cost
        if self.max_cost is not None and self.spent > self.max_cost:
            outcome.over_budget = f"{usd(self.spent)} spent, past the budget of {usd(self.max_cost)}"
        self.ledger.ended(
            outcome.run_id,
            usage=outcome.usage,
            requests=outcome.requests,
            finish_reason=outcome.finish_reason,
            failed=outcome.error is not None,
            stopped=outcome.interrupted,
            cost=outcome.cost,
            last_input_tokens=outcome.last_input_tokens,
        )
        return outcome

    def estimate_tokens(self, prompt: str, parts: Sequence[Part] = ()) -> int:
        """The offline estimate of the input of the next request with ``prompt``: the
        instructions, the history the window sends, the prompt and the tool definitions."""
        from golem_cli.core.tokens import EstimatingCounter, estimate_text

        try:
            window = self.agent().process_history(self.history)
        except GolemError:
            window = list(self.history)
        sent = [m for m in repair_history(window) if m.role != SYSTEM]
        asked = Message(role=USER, content=prompt, parts=list(parts))
        instructions = [Message(role=SYSTEM, content=self.system)] if self.system else []
        tools = self.toolbox.tools() if self.toolbox is not None else ()
        schema = sum(estimate_text(f"{t.name} {t.description} {t.parameters}") for t in tools)
        return EstimatingCounter().count([*instructions, *sent, asked]) + schema

    def context_warning(self, prompt: str, parts: Sequence[Part] = ()) -> str:
        """A sentence when the offline estimate says the next request will not fit the model's
        context window, else ""."""
        window = catalog.known(self.model.name, self.model_tables).context_window
        if not window:
            return ""
        estimate = self.estimate_tokens(prompt, parts)
        if estimate <= window:
            return ""
        return (f"this request is about {estimate:,} tokens, more than the {window:,} of {self.model.name}'s context "
                "window; /trim N (--max-messages N) sends fewer messages, /context shows what it carries")  # fmt: skip

    def check_budget(self, prompt: str, parts: Sequence[Part] = ()) -> None:
        """Refuse the turn before anything is sent (``BudgetError``) when a budget is set and
        the model's price is unknown, the budget is spent, or the request's input alone, at
        the input price, would pass what is left of it."""
        if self.max_cost is None:
            return
        price = self.price
        name = self.model.name
        if price is None:
            raise BudgetError(f"the price of {name} is unknown, so the budget of {usd(self.max_cost)} cannot be kept",
                              hint=catalog.price_hint(name))  # fmt: skip
        left = self.max_cost - self.spent
        if left <= 0:
            raise BudgetError(f"the budget of {usd(self.max_cost)} is spent ({usd(self.spent)} so far)",
                              hint="raise --max-cost (max_cost in config.toml) to go on")  # fmt: skip
        estimate = price.input_cost(self.estimate_tokens(prompt, parts))
        if estimate > left:
            raise BudgetError(
                f"this turn's input alone would cost about {usd(estimate)}, more than the {usd(left)} left of the "
                f"budget of {usd(self.max_cost)}",
                hint="raise --max-cost, or send less (/trim, a shorter prompt)",
            )

    def request_size(self, agent: Agent) -> int:
        """How many messages a turn's first request carries, what the footer shows as "sent"
        until a tool round makes the turn's last request longer (``_last_request``): the system
        prompt (if any), the stored history the agent lets through (after ``--max-messages``
        trimming and repair, system messages aside), and the prompt. A turn whose request
        failed (a 401, a dropped connection) still counts what it carried; a turn refused
        before any request (invalid input) counts 0."""
        history = [m for m in repair_history(agent.process_history(self.history)) if m.role != SYSTEM]
        return (1 if self.system else 0) + len(history) + 1

    # --- changes between turns -------------------------------------------------------------

    def save(self, history: list[Message] | None = None) -> None:
        """Write the whole history again (it changed other than at its end)."""
        self._persist(history, whole=True)
        self.unsaved = None  # the whole history is on disk

    def _persist(self, history: list[Message] | None = None, *, whole: bool = False, durable: bool = True) -> None:
        """Save ``history`` (None: ``self.history``): its new messages appended to what this
        session last saved or loaded (which it starts with: a turn only adds), or, ``whole``,
        all of it. Messages another program added meanwhile go where the store put them."""
        spliced = _spliced(self.history if history is None else history, self._foreign)
        if self.uncreated:
            self.store.create(spliced, cid=self.conversation_id, model=self.model.name)
            self.uncreated = False
            return
        save = self.store.save if whole else self.store.append
        saved = save(self.conversation_id, spliced, durable=durable)
        if history is None:
            self.history, self._foreign = spliced, []
        self._follow(saved)

    def _follow(self, saved: Saved) -> None:
        """What a save found on disk (ADR 0025): messages from elsewhere, now before this
        session's (in ``history`` at once when they come before all of it, else when the turn
        ends), or a fork this session now continues in; ``notices`` says it."""
        if saved.notice:
            self.notices.append(saved.notice)
        if saved.merged:
            if saved.at <= len(self.history) and not self._foreign:
                self.history = _spliced(self.history, [(saved.at, saved.merged)])
            else:  # within a turn: the run's messages are spliced when the turn ends
                self._foreign.append((saved.at, saved.merged))
        if saved.fork:
            self.store.release(self.conversation_id)
            self.conversation_id = saved.fork
            self.created_here = False

    def take_notices(self) -> list[str]:
        """What the store found while saving and what compaction has to say, one line each
        (without ``golem:``), once."""
        lines = [*self.notices, *self.store.notices, *self.compactor.take_notices()]
        self.notices.clear()
        self.store.notices.clear()
        return lines

    def _save_turn(self, history: list[Message] | None = None, *, durable: bool = True) -> None:
        """A save within a turn: with ``keep_unsaved``, a refused save is noted in ``unsaved``
        and the turn goes on (its messages are in ``history``, written by the next save)."""
        try:
            self._persist(history, durable=durable)
        except (StoreError, OSError) as e:
            if not self.keep_unsaved:
                raise
            self.unsaved = e
        else:
            self.unsaved = None

    def set_system(self, text: str) -> None:
        self.system = text
        self.system_source = "/system" if text else ""
        self.history = with_system_prompt(self.history, text)
        self.save()

    def set_model(self, model: Model) -> None:
        self.model = model
        self.store.set_model(self.conversation_id, model.name)

    def needs_repair(self) -> bool:
        """Whether a call is left without a result (a tool round that was interrupted)."""
        return bool(self.open_calls())

    def open_calls(self) -> set[str]:
        """The IDs of the calls that have no result."""
        answered = {m.tool_call_id for m in self.history if m.role == "tool"}
        return {c.id for m in self.history for c in m.tool_calls if c.id and c.id not in answered}

    def normalize(self) -> tuple[list[Message], HistoryRepair]:
        """Repair this conversation now; returns the history before and the report."""
        before = self.history
        self.history, report = normalize_history(before)
        if report.changed:
            self.save()
        return before, report

    def fork(self, at: int | None = None) -> str:
        """Continue in a copy (lineage recorded); this process now holds the copy instead."""
        new_cid = self.store.fork(self.conversation_id, at, hold=True)
        self.store.release(self.conversation_id)
        self.conversation_id = new_cid
        self.created_here = False
        self.history = self.store.load(new_cid)
        self._open_ledger()  # the fork's: the runs of what it copied
        return new_cid

    def turns(self) -> list[int]:
        """Where each prompt of this conversation sits, oldest first (``/rewind``)."""
        return [i for i, m in enumerate(self.history) if m.role == USER]

    def rewind(self, index: int) -> str:
        """Go back to just before message ``index``, the whole conversation first copied into a
        fork (nothing is lost, as ``/retry`` does); the fork's ID."""
        kept = self.store.fork(self.conversation_id)
        self.history = self.history[:index]
        self.save()
        return kept

    def last_prompt_index(self) -> int | None:
        """Where the newest user prompt sits, for ``/retry``."""
        for i in range(len(self.history) - 1, -1, -1):
            if self.history[i].role == USER and self.history[i].run_id:
                return i
        return None

    def rewind_for_retry(self) -> tuple[Message, str] | None:
        """Set the newest turn aside for a retry: this conversation goes back to just before
        that prompt. When the turn got any reply (even a partial one), the whole conversation
        is first copied into a fork, so nothing is lost; a turn that failed before any reply
        (a 401, a refused connection) has nothing to keep, and makes no fork.
        Returns (prompt message, fork ID or "")."""
        index = self.last_prompt_index()
        if index is None:
            return None
        prompt = self.history[index]
        kept = self.store.fork(self.conversation_id) if index + 1 < len(self.history) else ""
        self.history = self.history[:index]
        self.save()
        self._retrying = True
        return prompt, kept


def _spliced(history: list[Message], foreign: list[tuple[int, list[Message]]]) -> list[Message]:
    """``history`` with each of ``foreign``'s messages inserted where it says, in order."""
    for at, messages in foreign:
        history = [*history[:at], *messages, *history[at:]]
    return history


def _last_request(messages: list[Message], added: int, *, failed: bool) -> int:
    """How many messages a run's last request carried, from the run's request conversation
    (its instructions first; the run ``added`` the last messages): all of them when that
    request ``failed`` (nothing answered it), else those before the assistant message that
    answered it (a tool turn's requests grow by each round's calls and results; the footer
    says what the last one carried)."""
    start = len(messages) - added
    if failed:
        return len(messages)
    return max((i for i in range(start, len(messages)) if messages[i].role == ASSISTANT), default=len(messages))


def _reply_text(added: list[Message]) -> str:
    return "\n\n".join(m.content for m in added if m.role == "assistant" and m.content)


def _uncancel() -> None:
    """The run turned a cancellation into ``RunError``; clear the task's cancel request so
    the rest of this task (saving, the next prompt) runs normally."""
    task = asyncio.current_task()
    if task is not None:
        while task.cancelling():
            task.uncancel()
