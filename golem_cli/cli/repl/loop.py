"""The interactive chat loop: read a prompt, stream the reply, save, repeat.

Everything runs in one event loop so the provider's connection pool survives between turns.
Ctrl-C while a reply streams cancels only that turn (a SIGINT handler cancels the turn's task;
the session saves the partial reply); Ctrl-C at the prompt clears the line; Ctrl-D exits and
prints the command that resumes the conversation.

Three things load after the prompt is drawn, not before it (ADR 0020): the session and the core
behind it, opened in a worker thread (``opening.py``, ADR 0015), so the core's types are
imported where a line is acted on; rich, at the REPL's first output (``Repl.console``); and
what a turn needs (the reply's renderer, the tool view, attachments, resource mentions), at
the first line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, get_app, get_app_or_none
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import HTML
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from golem_cli.cli.errors import describe
from golem_cli.cli.model_choice import close_model
from golem_cli.cli.render import short_ids
from golem_cli.cli.render.console import rich_console
from golem_cli.cli.render.terminal_text import visible
from golem_cli.cli.repl import slash
from golem_cli.cli.repl.completer import SlashCompleter
from golem_cli.cli.repl.opening import Opened, PendingSession, SessionOpener
from golem_cli.cli.signals import Termination, ending_like_ctrl_c
from golem_cli.cli.tools import servers as tool_servers
from golem_cli.cli.tools.typeahead import KeysAfterAnswer
from golem_cli.config.paths import input_history_file
from golem_cli.store.atomic import ensure_private_dir

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.cli.attach import Attachment
    from golem_cli.cli.render.streaming import ReplyRenderer
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.cli.tools.view import ToolView
    from golem_cli.core.history.repair import HistoryRepair
    from golem_cli.core.messages import Message, Part
    from golem_cli.session import ChatSession, TurnOutcome
    from golem_cli.tools.toolbox import Toolbox

PROMPT = "<b>you&gt;</b> "


class Repl:
    """One chat at the terminal: its session (or the session still opening), the prompt, the
    turns, the tool servers."""

    def __init__(
        self, chat: ChatSession | PendingSession, *, markdown: bool, plain_input: bool, tools: ToolChoice | None = None
    ) -> None:
        self._session: ChatSession | None = None
        self._opener: SessionOpener | None = None  # while the session opens behind the prompt
        if isinstance(chat, PendingSession):
            self._opener = SessionOpener(chat, self._opened)
        else:
            self._session = chat
        self._console: Console | None = None  # made at the first output
        self.markdown = markdown
        self.plain_input = plain_input
        self.attachments: list[Attachment] = []  # for the next prompt (/attach)
        self.tools = tools  # how /tools builds the toolbox when none is enabled yet
        self._servers: asyncio.Future[None] | None = None  # tool servers starting in the background
        self._after_answer: KeysAfterAnswer | None = None  # keys typed after a one-key answer to a tool question
        self._turn_task: asyncio.Future[TurnOutcome] | None = None  # the turn running, if one is
        self._fold: asyncio.Future[None] | None = None  # a rolling summary's fold under way
        #: The SIGTERM or SIGHUP that ended the chat (``signals.py``), once one did.
        self.ended_by: int | None = None
        self._stopped_calls: set[str] = set()  # calls this chat's Ctrl-C left open, closed at the next turn

    @property
    def session(self) -> ChatSession:
        """The chat's session (open: the REPL acts on no line before ``ready``)."""
        if self._session is None:
            raise RuntimeError("the chat's session is not open yet")
        return self._session

    @session.setter
    def session(self, session: ChatSession) -> None:
        self._session = session

    @property
    def is_open(self) -> bool:
        return self._session is not None

    @property
    def toolbox(self) -> Toolbox | None:
        """The chat's toolbox, also before the session is open (tool servers start at once)."""
        if self._session is not None:
            return self._session.toolbox
        return self._opener.pending.toolbox if self._opener is not None else None

    @property
    def console(self) -> Console:
        if self._console is None:
            self._console = rich_console()  # rich loads here, at the first output after the prompt
        return self._console

    # --- the session, opened behind the prompt ------------------------------------------------

    def _opened(self, opened: asyncio.Future[Opened]) -> None:
        """The opening's end: the session, and its lines printed above the prompt; or its
        error, which closes the prompt (``ready`` raises it). Runs once per opening, from the
        future's callback or from ``ready``, whichever comes first."""
        if self._session is not None:
            return
        error = opened.exception()
        if error is not None:
            app = get_app_or_none()
            if app is not None and app.is_running and not app.is_done:
                app.exit(exception=error)
            return
        self._session, lines = opened.result()
        if lines:
            self._above_prompt(lambda: self._print_lines(lines))

    def _open_once_drawn(self) -> None:
        """A ``pre_run`` of the first prompt: the session starts opening once the prompt is on
        screen (the worker would slow its first drawing), and a new chat's session itself once
        a render shows what the person typed (it would slow that first echo)."""
        app = get_app()
        loop = asyncio.get_running_loop()
        opener = self._opener
        if opener is None:
            return

        def drawn(_: object) -> None:
            typed = bool(app.current_buffer.text)
            if typed or opener.pending.check is None:
                app.after_render -= drawn
            loop.call_soon(opener.start)  # the first render's call starts it; later ones change nothing
            if typed:
                loop.call_soon(opener.go)

        app.after_render += drawn

    async def ready(self) -> None:
        """Wait for the session to be open (its opening starts now if the prompt ended before
        it was drawn or before anything typed was shown); raises the opening's error (a bad
        model, a store that cannot be written)."""
        if self._opener is not None and self._session is None:
            opened = self._opener.start()
            self._opener.go()
            await opened
            # A future already done when awaited returns at once, before its callbacks run:
            # the session is taken here too, not left to ``_opened``'s turn in the loop.
            self._opened(opened)

    def close(self) -> None:
        """When the chat ends, however it ends: what the store refused still goes somewhere,
        the session is closed (its lock released), once an opening under way has finished."""
        if self._opener is not None and self._session is None:
            self._session = self._opener.session_at_end()
        if self._session is not None:
            try:
                self.keep_unsaved()
            finally:
                self._session.close()

    # --- input -----------------------------------------------------------------------------

    def _prompt_session(self) -> PromptSession[str]:
        path = input_history_file()
        ensure_private_dir(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # prompts are private
        os.chmod(path, 0o600)
        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        def answer_rest() -> bool:
            after = self._after_answer
            return after is not None and after.finishes(get_app().current_buffer.text)

        @keys.add("enter", filter=Condition(answer_rest))
        def _answer_rest(event: KeyPressEvent) -> None:
            # "y", a pause that made it the answer to a tool's question, then "es⏎": the
            # rest of that word is not a prompt.
            assert self._after_answer is not None
            self._after_answer.finished()
            event.current_buffer.reset()

        return PromptSession(
            history=FileHistory(str(path)),
            completer=SlashCompleter(slash.NAMES, self._tool_names, lambda: self.toolbox),
            complete_while_typing=True,
            key_bindings=keys,
            enable_history_search=False,  # Ctrl-R searches the history
            enable_open_in_editor=True,  # Ctrl-X Ctrl-E: the prompt in $VISUAL or $EDITOR
        )

    def _tool_names(self) -> list[str]:
        """What ``/tools enable|disable|allow`` takes in this chat: its tools, their groups and
        servers, ``all``; without a toolbox yet, what ``-T`` takes."""
        box = self.toolbox
        if box is None:
            from golem_cli.cli.completion import tool_names

            return [name for name, _ in tool_names("")]
        entries = box.registry.entries()
        return [*(e.name for e in entries), *box.registry.groups(), "all", *(s.group for s in box.servers())]

    async def _read(
        self, prompt_session: PromptSession[str] | None, pre_run: Callable[[], None] | None = None
    ) -> str | None:
        """The next prompt; None at end of input (Ctrl-D). Ctrl-C clears the line. What was
        typed on after a one-key answer to a tool's question, other than the rest of its word,
        starts the line. ``pre_run`` runs as the prompt starts."""
        if prompt_session is None:
            line = await asyncio.to_thread(sys.stdin.readline)
            return None if line == "" else line.rstrip("\n")
        kept = self._after_answer.take() if self._after_answer is not None else ""
        while True:
            try:
                return await prompt_session.prompt_async(HTML(PROMPT), multiline=False, default=kept, pre_run=pre_run)
            except KeyboardInterrupt:
                kept = ""
                continue
            except EOFError:
                return None

    # --- the loop --------------------------------------------------------------------------

    async def main(self) -> int:
        """The chat, from its first prompt to the person leaving (or SIGTERM or SIGHUP ending
        it: ``signals.py``); the tool servers and the model's connections close with it."""
        main = asyncio.current_task()
        assert main is not None

        def stop(message: str) -> None:
            running = self._turn_task
            (running if running is not None and not running.done() else main).cancel(message)

        try:
            with ending_like_ctrl_c(stop) as termination:
                self.begin_tool_servers()
                try:
                    return await self._until_ended(termination)
                except asyncio.CancelledError:
                    if termination.signum is None:
                        raise
                    while main.cancelling():  # the chat goes on to save what it kept
                        main.uncancel()
                    return self.end_by_signal(termination.signum)
        finally:
            await self.stop_tool_servers()
            if self.is_open:
                await close_model(self.session.model)

    async def _until_ended(self, termination: Termination) -> int:
        code = await self.run(termination)
        return self.end_by_signal(termination.signum) if termination.signum is not None else code

    def end_by_signal(self, signum: int) -> int:
        """The chat ended by a signal: what the store refused is written elsewhere, as leaving
        writes it; the caller then ends golem by the signal (``ended_by``)."""
        self.ended_by = signum
        if self.is_open and self.session.unsaved is not None:
            self.keep_unsaved()
        return 128 + signum

    async def run(self, termination: Termination | None = None) -> int:
        prompt_session = None if self.plain_input else self._prompt_session()
        first: Callable[[], None] | None = None
        if self._opener is not None:
            if prompt_session is None:  # no prompt to draw first: open now
                self._opener.start()
            else:
                first = self._open_once_drawn
        while True:
            text = await self._read(prompt_session, first)
            first = None
            await self.ready()  # every line waits for the session: a turn goes to the checked model
            await self.folded()
            if text is None:
                return self.goodbye()
            if not text.strip():
                continue
            if text.startswith("/"):
                if await slash.dispatch(self, text) == slash.EXIT:
                    return self.goodbye()
                self.keep_settings()
                continue
            from golem_cli.cli.repl import resources  # what a turn needs loads at the first line

            if await resources.attach_mentions(self, text):  # @SERVER:URI: a tool server's resource
                await self.ask(text)
                self.keep_settings()
            if termination is not None and termination.signum is not None:
                return 128 + termination.signum

    def keep_settings(self) -> None:
        """The chat's settings (/option, /trim, /tools, /system) kept with the conversation as
        they change, for ``resume`` to restore (cli/restore.py)."""
        from golem_cli.cli.restore import keep

        keep(self.session, self.tools)

    async def ask(self, text: str, parts: Sequence[Part] | None = None) -> TurnOutcome | None:
        """One turn with the reply streamed, Ctrl-C cancelling just this turn. Pending
        attachments go with the prompt unless ``parts`` are given. The turn first waits for
        tool servers still starting; None when Ctrl-C stopped that wait (nothing was sent)."""
        from golem_cli.cli.attach import split, with_files  # what a turn needs loads at the first line
        from golem_cli.cli.render.streaming import ReplyRenderer

        if not await self.tool_servers_ready():
            return None
        if parts is None:
            pending, self.attachments = self.attachments, []
            parts, files = split(pending)
            text = with_files(text, files)  # text files travel in the prompt, with their names
        self._repair_before_the_turn()
        await self.refresh_tool_servers()
        self.tool_notices()
        if not self._within_budget(text, parts):
            return None
        renderer = ReplyRenderer(self.console if self.markdown else None, markdown=self.markdown)
        view = self._tool_view(renderer)
        renderer.waiting()
        self.session.keep_unsaved = True  # a refused save keeps the turn in memory: ``footer`` says so
        unsaved_before = self.session.unsaved is not None
        try:
            outcome = await self._turn(text, parts, renderer, view)
        finally:
            if view is not None:
                view.close()
            renderer.finish()
        self.footer(outcome, view.stopped_line() if view is not None else "", unsaved_before=unsaved_before)
        self.tool_notices()
        if outcome.interrupted:
            self._stopped_calls = self.session.open_calls()
        self.begin_fold()
        return outcome

    def _within_budget(self, text: str, parts: Sequence[Part]) -> bool:
        """Whether the turn may be sent under ``--max-cost``; if not, the one line why. A
        request the estimate says will not fit the context window is sent after a warning."""
        from rich.markup import escape

        from golem_cli.core.errors import BudgetError

        try:
            self.session.check_budget(text, parts)
        except BudgetError as e:
            self.console.print(f"[red]error:[/red] {escape(describe(e))}", soft_wrap=True)
            return False
        warning = self.session.context_warning(text, parts)
        if warning:
            self.console.print(f"[yellow]Warning: {escape(warning)}.[/yellow]", soft_wrap=True)
        return True

    # --- rolling summaries: folded while the person types -------------------------------------

    def begin_fold(self) -> None:
        """With rolling summaries, what left the window is folded into the summary in the
        background, after the reply is shown; the next line waits for it (``folded``)."""
        if self.session.compactor.fold_due() is not None:
            self._fold = asyncio.ensure_future(self._fold_now())

    async def _fold_now(self) -> None:
        done = await self.session.compactor.fold()
        lines = [f"golem: {line}" for line in self.session.compactor.take_notices()]
        if done is not None:
            lines.append(f"golem: folded the messages that left the window into the summary (now messages "
                         f"1-{done.summary.number})")  # fmt: skip

        def show() -> None:
            for line in lines:
                self.tool_line(line, line.startswith("golem: the"))

        if lines:
            self._above_prompt(show)

    async def folded(self) -> None:
        """Wait for a fold under way (the next turn's request carries its summary)."""
        fold, self._fold = self._fold, None
        if fold is not None:
            await fold

    def _repair_before_the_turn(self) -> None:
        """An interrupted tool round is closed before the next run: in one quiet line when all
        it closes is what this chat's own Ctrl-C left open, else with the whole report (damage
        golem did not cause, or did not see happen)."""
        if not self.session.needs_repair():
            return
        before, repair = self.session.normalize()
        names = self._only_stopped_calls(before, repair)
        if names is None:
            self._print_lines(slash.report_lines(before, self.session.history, repair))
            return
        from rich.markup import escape

        calls = "call" if len(names) == 1 else "calls"
        self.console.print(f"[dim]Closed the {calls} Ctrl-C stopped ({escape(visible(', '.join(names)))}).[/dim]",
                           highlight=False)  # fmt: skip

    def _only_stopped_calls(self, before: list[Message], repair: HistoryRepair) -> list[str] | None:
        """The tools of the calls ``repair`` closed when that is all it did and each was one
        this chat's Ctrl-C left open; else None."""
        from golem_cli.cli.render.findings import SYNTHESIZED, repair_findings

        stopped, self._stopped_calls = self._stopped_calls, set()
        found = repair_findings(before, self.session.history, repair)
        if not found or any(f.kind != SYNTHESIZED or f.call_id not in stopped for f in found):
            return None
        return list(dict.fromkeys(f.tool_name for f in found))

    def _tool_view(self, renderer: ReplyRenderer) -> ToolView | None:
        """The view of the turn's tool calls and their questions, when the chat has tools."""
        from golem_cli.cli.tools.view import ToolView

        box = self.session.toolbox
        if box is None:
            return None
        self._after_answer = self._after_answer or KeysAfterAnswer()
        view = ToolView(self.console, renderer, after_answer=self._after_answer)
        box.approvals.ask = None if self.plain_input else view.ask
        box.hooks.elicit = None if self.plain_input else view.elicit
        box.hooks.progress = view.progress
        box.approvals.shown = view.waived
        return view

    async def _turn(
        self, text: str, parts: Sequence[Part], renderer: ReplyRenderer, view: ToolView | None
    ) -> TurnOutcome:
        """The session's turn, its deltas and events shown as they come; the first Ctrl-C
        cancels it (the session saves what arrived)."""
        from golem_cli.core.model import ThinkingDelta  # the core loads with the session, after the prompt

        def on_event(event: object) -> None:
            if isinstance(event, ThinkingDelta):
                renderer.thinking()
            elif view is not None:
                view.on_event(event)

        task = asyncio.ensure_future(self.session.turn(text, parts=parts, on_delta=renderer.feed, on_event=on_event))
        stopping = False

        def stop() -> None:
            # Only the first Ctrl-C cancels: a second one while the partial reply is being
            # saved would otherwise end the task as cancelled after it already returned.
            nonlocal stopping
            if not stopping:
                stopping = True
                task.cancel()

        self._turn_task = task
        try:
            with on_ctrl_c(stop):
                return await task
        finally:
            self._turn_task = None

    # --- tool servers ----------------------------------------------------------------------

    def tool_line(self, text: str, problem: bool) -> None:
        self.console.print(visible(text), style="yellow" if problem else "dim", soft_wrap=True,
                           markup=False, highlight=False, emoji=False)  # fmt: skip

    def begin_tool_servers(self) -> None:
        """Start the tool servers the chat's names need (the banner said which), in the
        background: the prompt does not wait for them (a server takes a second or more), the
        first turn does. What they report is printed above the prompt."""
        box = self.toolbox
        if box is None or not box.to_start():
            return
        tool_servers.hear(box, self._line_above_prompt)
        self._servers = asyncio.ensure_future(tool_servers.start(box, self._line_above_prompt))

    def _line_above_prompt(self, text: str, problem: bool) -> None:
        self._above_prompt(lambda: self.tool_line(text, problem))

    def _above_prompt(self, show: Callable[[], None]) -> None:
        """Print with ``show`` above the prompt when one is on screen (it is drawn again
        below: ``above_prompt``), else at once."""
        app = get_app_or_none()
        if app is not None and app.is_running:
            above_prompt(app, show)
        else:
            show()

    def _print_lines(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.console.print(line, markup=False, highlight=False)

    async def tool_servers_ready(self) -> bool:
        """Wait for the servers started in the background (with a spinner when it takes).
        Ctrl-C stops the wait, not the servers: False then, and nothing else happens."""
        task = self._servers
        if task is None:
            return True
        if not task.done():
            waiter = asyncio.ensure_future(asyncio.wait({task}))  # cancelling it leaves the task be
            stopped = False

            def stop() -> None:
                nonlocal stopped
                stopped = True
                waiter.cancel()

            box = self.toolbox
            names = ", ".join(s.group for s in box.to_start()) if box is not None else ""
            waiting = self.console.status(f"Waiting for tool servers: {names} (Ctrl-C stops waiting)", spinner="dots")
            with on_ctrl_c(stop):
                try:
                    with waiting if self.console.is_terminal else contextlib.nullcontext():
                        await waiter
                except asyncio.CancelledError:
                    if not stopped:
                        raise
                    self.console.print("[yellow]Stopped waiting for the tool servers; nothing was sent.[/yellow]")
                    return False
        self._servers = None
        task.result()
        return True

    async def stop_tool_servers(self) -> None:
        """Stop the servers (those still starting too) when the chat ends."""
        if self._servers is not None and not self._servers.done():
            self._servers.cancel()
            with contextlib.suppress(BaseException):
                await self._servers
        if self.toolbox is not None:
            await self.toolbox.close()

    async def start_tool_servers(self) -> None:
        """Start the tool servers names added during the chat need (``/tools enable``)."""
        if not await self.tool_servers_ready():
            return
        box = self.session.toolbox
        if box is None or not (box.to_start() or box.waiting or box.approvals.waiting):
            return
        names = ", ".join(s.group for s in box.to_start())
        tool_servers.hear(box, self._line_above_prompt)
        status = self.console.status(f"Starting tool servers: {names}", spinner="dots") if names else None
        with status if status is not None and self.console.is_terminal else contextlib.nullcontext():
            await tool_servers.start(box, self.tool_line)

    def tool_notices(self) -> None:
        tool_servers.show_notices(self.session.toolbox, self.tool_line)

    async def refresh_tool_servers(self) -> None:
        """Between turns: the tools of servers that said they changed, listed again."""
        box = self.session.toolbox
        if box is not None:
            for line in await box.refresh_servers():
                self.tool_line(line, False)

    # --- a save refused ----------------------------------------------------------------------

    def keep_unsaved(self) -> bool:
        """When the chat ends with turns the store refused: save once more; if it still
        refuses, write the whole conversation elsewhere (``unsaved.py``) and say where in one
        line, or say that nothing took it. True when the store has it all after all."""
        from rich.markup import escape  # rich loads at the first output after the prompt

        from golem_cli.cli.repl.unsaved import write_elsewhere  # the codec loads with the session

        session = self.session
        if session.unsaved is None:
            return True
        try:
            session.save()
        except Exception as e:  # the store's refusal (or a file system's): as the turn's was
            why = describe(e)
        else:
            return True
        session.unsaved = None  # handled: said once, whichever way the chat ends
        path, problems = write_elsewhere(session.conversation_id, session.history)
        n = len(session.history)
        if path is not None:
            self.console.print(
                f"[yellow]Not saved in golem's store ({escape(visible(why))}): the whole conversation ({n} messages) "
                f"is in[/yellow] {escape(visible(str(path)))} [yellow](golem import FILE brings it back).[/yellow]",
                soft_wrap=True, highlight=False,
            )  # fmt: skip
        else:
            elsewhere = "; ".join(problems)
            self.console.print(
                f"[red]Could not save the conversation anywhere: {escape(visible(why))}; {escape(visible(elsewhere))}. "
                f"Its last unsaved turns are lost; the store has it as of its last save.[/red]",
                soft_wrap=True, highlight=False,
            )  # fmt: skip
        return False

    # --- output ----------------------------------------------------------------------------

    def footer(self, outcome: TurnOutcome, stopped: str = "", *, unsaved_before: bool = False) -> None:
        """The turn's last lines (``turn.chat_footer``); ``stopped``: the tools Ctrl-C stopped,
        in words."""
        from rich.markup import escape

        from golem_cli.cli.render.turn import chat_footer

        for line in self.session.take_notices():  # what the store found on disk while saving
            self.console.print(f"[yellow]golem: {escape(visible(line))}[/yellow]", soft_wrap=True, highlight=False)
        footer = chat_footer(outcome, stopped=stopped, unsaved=self.session.unsaved, unsaved_before=unsaved_before,
                             width=self.console.width)  # fmt: skip
        for line in footer.lines:
            self.console.print(line)
        self.console.print(footer.ids, soft_wrap=True)

    def id_markup(self, cid: str, *, hint: bool = False) -> str:
        """A conversation ID with the part that is enough to type highlighted; as a hint,
        only that part (at least a few characters)."""
        if hint:
            return short_ids.handle_markup(cid)
        return short_ids.markup(cid, self.session.store.unique_prefixes([cid])[cid])

    def goodbye(self) -> int:
        """The chat's last line; the exit code: 1 when the store refused the conversation to
        the end (``keep_unsaved``), else 0."""
        if self._session is None or (self.session.created_here and self.session.is_empty):
            self.console.print("[dim]Nothing said, nothing saved.[/dim]")
            return 0
        if self._stopped_calls and self.session.unsaved is None and self.session.needs_repair():
            self._repair_before_the_turn()  # closed now: a resume later has nothing to report
        if self.session.unsaved is not None and not self.keep_unsaved():
            return 1
        cid = self.session.conversation_id
        self.console.print(
            f"[dim]Saved. Resume with:[/dim] golem resume {self.id_markup(cid, hint=True)}", soft_wrap=True
        )
        return 0


@contextlib.contextmanager
def on_ctrl_c(callback: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C calls ``callback`` (instead of raising ``KeyboardInterrupt`` somewhere in the
    loop) while the block runs, where the running loop can take a signal handler."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
        installed = True
    except (NotImplementedError, RuntimeError):
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


def above_prompt(app: Application[Any], write: Callable[[], None]) -> None:
    """Print with ``write`` above the running prompt: erase the prompt, write, draw it again
    below. prompt_toolkit's ``run_in_terminal`` does this too, but puts the terminal in
    cooked mode meanwhile, so a key typed at that instant meets the line discipline instead
    of the prompt: Ctrl-D is taken as end of file (and arrives as a NUL), Backspace, Ctrl-U and
    Ctrl-W edit an empty line, Ctrl-C, Ctrl-Z and Ctrl-\\ become signals, and letters are
    echoed where the cursor happens to be. Here the terminal stays raw: writing is all that
    happens, at once, and every key waits, untouched, for the prompt."""
    app.renderer.erase()
    try:
        write()
    finally:
        app.renderer.reset()
        app.renderer.request_absolute_cursor_position()
        app.invalidate()
