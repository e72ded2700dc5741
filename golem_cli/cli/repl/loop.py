"""The interactive chat loop: read a prompt, stream the reply, save, repeat.

Everything runs in one event loop so the provider's connection pool survives between turns.
Ctrl-C while a reply streams cancels only that turn (a SIGINT handler cancels the turn's task;
the session saves the partial reply); Ctrl-C at the prompt clears the line; Ctrl-D exits and
prints the command that resumes the conversation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from golem_cli.cli.repl import slash
from golem_cli.cli.repl.opening import Opening

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyPressEvent
    from rich.console import Console

    from golem_cli.cli.attach import Attachment
    from golem_cli.cli.repl.instant_prompt import InstantPrompt
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.cli.tools.typeahead import AnswerTail
    from golem_cli.core.messages import Part
    from golem_cli.session import ChatSession, TurnOutcome
    from golem_cli.tools.toolbox import Toolbox

PROMPT = "<b>you&gt;</b> "  # (instant_prompt.PROMPT draws the same before prompt_toolkit loads)


class Repl:
    def __init__(
        self, session: ChatSession | Opening, console: Console | None, *, markdown: bool, plain_input: bool
    ) -> None:
        self._session = None if isinstance(session, Opening) else session
        self._opening = session if isinstance(session, Opening) else None
        self._opened: asyncio.Future[None] | None = None  # set when the opening ran (or failed)
        self._work: concurrent.futures.Future[tuple[ChatSession, list[str]]] | None = None
        self._console = console  # made on first use: rich loads after the prompt is shown
        self.markdown = markdown
        self.plain_input = plain_input
        self.attachments: list[Attachment] = []  # for the next prompt (/attach)
        self.tools: ToolChoice | None = None  # how /tools builds the toolbox when none is enabled yet
        self._servers: asyncio.Future[None] | None = None  # tool servers starting in the background
        self._tail: AnswerTail | None = None  # keys typed after a one-key answer to a tool question
        self.instant: InstantPrompt | None = None  # the prompt drawn before prompt_toolkit loaded

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
        return self._opening.toolbox if self._opening is not None else None

    # --- opening ---------------------------------------------------------------------------

    def _open(self) -> None:
        """Start the opening (once) in a worker thread; ``_opened_with`` takes its result in
        the event loop."""
        opening = self._opening
        if opening is None or self._work is not None:
            return
        work: concurrent.futures.Future[tuple[ChatSession, list[str]]] = concurrent.futures.Future()
        self._work = work

        def run() -> None:
            try:
                work.set_result(opening.open())
            except BaseException as e:  # kept whole for ``ready``, which raises it
                work.set_exception(e)

        threading.Thread(target=run, name="golem-opening").start()  # not a daemon: a save may be under way
        asyncio.wrap_future(work).add_done_callback(self._opened_with)

    def _opened_with(self, work: asyncio.Future[tuple[ChatSession, list[str]]]) -> None:
        """The opening's result: the session, its lines above the prompt, then the warm-up
        of what the first reply needs; an error is kept for ``ready`` and closes the prompt."""
        opened = self._opened
        if opened is None or opened.done():
            return
        error = work.exception()
        if error is not None:
            opened.set_exception(error)
            opened.exception()  # raised by the prompt it closes, or by ``ready``: not "never retrieved"
            from prompt_toolkit.application import get_app_or_none

            app = get_app_or_none()
            if app is not None and app.is_running and not app.is_done:
                app.exit(exception=error)
            return
        self._session, lines = work.result()
        opened.set_result(None)
        if lines:
            self._above_prompt(lambda: self._print_lines(lines))
        # Load what the first reply needs once the prompt is on screen, not before it.
        asyncio.get_running_loop().call_later(WARM_UP_DELAY, _start_warm_up, self.session.model)

    def settle(self) -> None:
        """When the chat ends: wait for an opening under way (it may be saving a repair) and
        keep its session to close; give back what an opening that never ran had taken."""
        if self._opening is None or self._session is not None:
            return
        if self._work is None:
            if self._opening.abandon is not None:
                self._opening.abandon()
            return
        with contextlib.suppress(BaseException):  # a failed one released what it held; its error is reported
            self._session = self._work.result()[0]

    def _open_after_drawing(self) -> None:
        """A ``pre_run`` of the first prompt: open once the prompt has been drawn."""
        from prompt_toolkit.application import get_app

        app = get_app()
        loop = asyncio.get_running_loop()

        def drawn(_: object) -> None:
            app.after_render -= drawn
            loop.call_soon(self._open)

        app.after_render += drawn

    async def ready(self) -> None:
        """Wait for the opening; raises its error (a bad model, a store that cannot be written)."""
        if self._opened is not None:
            await self._opened

    # --- input -----------------------------------------------------------------------------

    def _prompt_session(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.application import get_app
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        from golem_cli.config.paths import input_history_file
        from golem_cli.store.atomic import ensure_private_dir

        path = input_history_file()
        ensure_private_dir(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # prompts are private
        os.chmod(path, 0o600)
        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        def answer_rest() -> bool:
            return self._tail is not None and self._tail.finishes(get_app().current_buffer.text)

        @keys.add("enter", filter=Condition(answer_rest))
        def _answer_rest(event: KeyPressEvent) -> None:
            # "y", a pause that made it the answer to a tool's question, then "es⏎": the
            # rest of that word is not a prompt.
            assert self._tail is not None
            self._tail.finished()
            event.current_buffer.reset()

        completer = WordCompleter(slash.NAMES, sentence=True, match_middle=False)
        return PromptSession(
            history=FileHistory(str(path)),
            completer=completer,
            complete_while_typing=True,
            key_bindings=keys,
            enable_history_search=False,  # Ctrl-R searches the history
        )

    async def _read(
        self, prompt_session: PromptSession[str] | None, pre_run: Callable[[], None] | None = None
    ) -> str | None:
        """The next prompt; None at end of input (Ctrl-D). Ctrl-C clears the line. What was
        typed on after a one-key answer to a tool's question, other than the rest of its word,
        starts the line. ``pre_run`` runs as the prompt starts (``Opening``)."""
        if prompt_session is None:
            line = await asyncio.to_thread(sys.stdin.readline)
            return None if line == "" else line.rstrip("\n")
        from prompt_toolkit.formatted_text import HTML

        kept = self._tail.take() if self._tail is not None else ""
        while True:
            try:
                return await prompt_session.prompt_async(HTML(PROMPT), multiline=False, default=kept, pre_run=pre_run)
            except KeyboardInterrupt:
                kept = ""
                continue
            except EOFError:
                return None

    # --- the loop --------------------------------------------------------------------------

    @property
    def console(self) -> Console:
        if self._console is None:
            from golem_cli.cli.render.console import rich_console

            self._console = rich_console()
        return self._console

    async def run(self) -> int:
        prompt_session = None if self.plain_input else self._prompt_session()
        starts: list[Callable[[], None]] = [self.instant.hand_over] if self.instant is not None else []
        if self._opening is not None:
            self._opened = asyncio.get_running_loop().create_future()
            if prompt_session is None:  # no prompt to draw first: open now
                self._open()
            else:
                starts.append(self._open_after_drawing)
        else:
            asyncio.get_running_loop().call_later(WARM_UP_DELAY, _start_warm_up, self.session.model)

        def start_first() -> None:
            for start in starts:
                start()

        first: Callable[[], None] | None = start_first if starts else None
        while True:
            text = await self._read(prompt_session, first)
            first = None
            self._open()  # if the prompt ended before it was drawn (no-op once opened)
            await self.ready()  # every line waits for the session: a turn goes to the checked model
            if text is None:
                return self.goodbye()
            if not text.strip():
                continue
            if text.startswith("/"):
                if await slash.dispatch(self, text) == slash.EXIT:
                    return self.goodbye()
                continue
            await self.ask(text)

    async def ask(self, text: str, parts: Sequence[Part] | None = None) -> TurnOutcome | None:
        """One turn with the reply streamed, Ctrl-C cancelling just this turn. Pending
        attachments go with the prompt unless ``parts`` are given. The turn first waits for
        tool servers still starting; None when Ctrl-C stopped that wait (nothing was sent)."""
        from golem_cli.cli.render.streaming import ReplyRenderer

        if not await self.tool_servers_ready():
            return None
        if parts is None:
            from golem_cli.cli.attach import split, with_files

            pending, self.attachments = self.attachments, []
            parts, files = split(pending)
            text = with_files(text, files)  # text files travel in the prompt, with their names
        if self.session.needs_repair():  # an interrupted tool round: closed before the next run
            before, repair = self.session.normalize()
            for line in slash.report_lines(before, self.session.history, repair):
                self.console.print(line, markup=False, highlight=False)
        self.tool_notices()
        renderer = ReplyRenderer(self.console if self.markdown else None, markdown=self.markdown)
        view = None
        if self.session.toolbox is not None:
            from golem_cli.cli.tools.typeahead import AnswerTail
            from golem_cli.cli.tools.view import ToolView

            self._tail = self._tail or AnswerTail()
            view = ToolView(self.console, renderer, tail=self._tail)
            self.session.toolbox.approvals.ask = None if self.plain_input else view.ask
        renderer.waiting()
        from golem_cli.core.model import ThinkingDelta

        def on_event(event: object) -> None:
            if isinstance(event, ThinkingDelta):
                renderer.thinking()
            elif view is not None:
                view.on_event(event)

        self.session.keep_unsaved = True  # a refused save keeps the turn in memory: ``footer`` says so
        unsaved_before = self.session.unsaved is not None
        task = asyncio.ensure_future(self.session.turn(text, parts=parts, on_delta=renderer.feed, on_event=on_event))
        stopping = False

        def stop() -> None:
            # Only the first Ctrl-C cancels: a second one while the partial reply is being
            # saved would otherwise end the task as cancelled after it already returned.
            nonlocal stopping
            if not stopping:
                stopping = True
                task.cancel()

        try:
            with on_ctrl_c(stop):
                outcome = await task
        finally:
            if view is not None:
                view.close()
            renderer.finish()
        self.footer(outcome, view.stopped_line() if view is not None else "", unsaved_before=unsaved_before)
        self.tool_notices()
        return outcome

    # --- tool servers ----------------------------------------------------------------------

    def tool_line(self, text: str, problem: bool) -> None:
        from rich.text import Text

        from golem_cli.cli.render.terminal_text import visible

        self.console.print(Text(visible(text), style="yellow" if problem else "dim"), soft_wrap=True)

    def begin_tool_servers(self) -> None:
        """Start the tool servers the chat's names need (``announce_tool_servers`` said which),
        in the background: the prompt does not wait for them (a server takes a second or more),
        the first turn does. What they report is printed above the prompt."""
        box = self.toolbox
        if box is None or not box.to_start():
            return
        from golem_cli.cli.tools import servers as tool_servers

        self._servers = asyncio.ensure_future(tool_servers.start(box, self._line_above_prompt))

    def _line_above_prompt(self, text: str, problem: bool) -> None:
        self._above_prompt(lambda: self.tool_line(text, problem))

    def _above_prompt(self, show: Callable[[], None]) -> None:
        """Print with ``show`` above the prompt when one is on screen (it is drawn again
        below: ``above_prompt``), else at once."""
        from prompt_toolkit.application import get_app_or_none

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
        from golem_cli.cli.tools import servers as tool_servers

        names = ", ".join(s.group for s in box.to_start())
        status = self.console.status(f"Starting tool servers: {names}", spinner="dots") if names else None
        with status if status is not None and self.console.is_terminal else contextlib.nullcontext():
            await tool_servers.start(box, self.tool_line)

    def tool_notices(self) -> None:
        from golem_cli.cli.tools import servers as tool_servers

        tool_servers.show_notices(self.session.toolbox, self.tool_line)

    # --- a save refused ----------------------------------------------------------------------

    def keep_unsaved(self) -> bool:
        """When the chat ends with turns the store refused: save once more; if it still
        refuses, write the whole conversation elsewhere (``unsaved.py``) and say where in one
        line, or say that nothing took it. True when the store has it all after all."""
        from rich.markup import escape

        from golem_cli.cli.errors import describe
        from golem_cli.cli.render.terminal_text import visible

        session = self.session
        if session.unsaved is None:
            return True
        try:
            session.save()
        except Exception as e:  # the store's refusal (or a file system's): as the turn's was
            why = describe(e)
        else:
            return True
        from golem_cli.cli.repl.unsaved import write_elsewhere

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
        from golem_cli.cli.render.turn import chat_footer

        footer = chat_footer(outcome, stopped=stopped, unsaved=self.session.unsaved, unsaved_before=unsaved_before,
                             cid_markup=self.id_markup(outcome.conversation_id), width=self.console.width)  # fmt: skip
        for line in footer.lines:
            self.console.print(line)
        self.console.print(footer.ids, soft_wrap=True)

    def id_markup(self, cid: str, *, hint: bool = False) -> str:
        """A conversation ID with the part that is enough to type highlighted; as a hint,
        only that part (at least a few characters)."""
        from golem_cli.cli.render import short_ids

        unique = self.session.store.unique_prefixes([cid])[cid]
        return short_ids.markup(cid, unique, len(short_ids.hint(cid, unique)) if hint else None)

    def goodbye(self) -> int:
        """The chat's last line; the exit code: 1 when the store refused the conversation to
        the end (``keep_unsaved``), else 0."""
        if self._session is None or (self.session.created_here and self.session.is_empty):
            self.console.print("[dim]Nothing said, nothing saved.[/dim]")
            return 0
        if self.session.unsaved is not None and not self.keep_unsaved():
            return 1
        cid = self.session.conversation_id
        self.console.print(
            f"[dim]Saved. Resume with:[/dim] golem resume {self.id_markup(cid, hint=True)}", soft_wrap=True
        )
        return 0


def run_chat(
    session: ChatSession | Opening,
    *,
    markdown: bool,
    plain_input: bool,
    tools: ToolChoice | None = None,
    instant: InstantPrompt | None = None,
) -> int:
    """Run the REPL until the user leaves, under the banner ``repl_start.run_repl`` drew (and
    its instant prompt); always releases the conversation's lock."""
    repl = Repl(session, None, markdown=markdown, plain_input=plain_input)
    repl.tools = tools
    repl.instant = instant
    try:
        return asyncio.run(_main(repl))
    except KeyboardInterrupt:
        if instant is not None:
            instant.withdraw()
        repl.goodbye()
        return 130
    finally:
        repl.settle()
        if repl.is_open:
            try:
                repl.keep_unsaved()  # an error ended the chat: what the store refused still goes somewhere
            finally:
                repl.session.close()


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


WARM_UP_DELAY = 0.05  # seconds after the first prompt is requested


def _start_warm_up(model: object) -> None:
    threading.Thread(target=_warm_up, args=(model,), name="golem-warm-up", daemon=True).start()


def _warm_up(model: object) -> None:
    """Import what the first reply needs while the person types it, so the prompt appears
    without waiting for the run loop, the markdown renderer and the provider's HTTP stack
    (a ``DeferredModel`` builds its adapter here)."""
    import importlib

    for name in (
        "golem_cli.core.agent",
        "rich.console",
        "rich.markdown",
        "rich.live",
        "golem_cli.cli.render.streaming",
    ):
        try:
            importlib.import_module(name)
        except Exception:
            return
    prepare = getattr(model, "prepare", None)
    if callable(prepare):
        with contextlib.suppress(Exception):  # the first request builds it again and says why
            prepare()


async def _main(repl: Repl) -> int:
    try:
        repl.begin_tool_servers()
        return await repl.run()
    finally:
        from golem_cli.cli.model_choice import close_model

        await repl.stop_tool_servers()  # tool servers stop with the chat
        if repl.is_open:
            await close_model(repl.session.model)
