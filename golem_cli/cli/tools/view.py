"""Tool calls as a person sees them: the call, a live line while it runs, the result in a few
lines, and the approval question.

Everything golem prints about a tool call goes through this module, so text golem did not
write (arguments the model chose, what a command printed, a web page) passes through one
door, ``terminal_text.visible``, which shows control characters, escape sequences and bidi
overrides instead of letting the terminal obey them (``ls #<U+202E>…`` in a question is the
command that runs).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from golem_cli.cli.render.terminal_text import visible

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live

    from golem_cli.cli.render.streaming import ReplyRenderer
    from golem_cli.cli.tools.typeahead import KeysAfterAnswer
    from golem_cli.core.messages import Message, ToolCall
    from golem_cli.tools.approval import Answer, Question
    from golem_cli.tools.mcp.hooks import Elicitation, Reply

RESULT_LINES = 4  # lines of a result shown under it
WAIVED_LINES = 20  # lines of the diff of an edit that runs without a question
SUMMARY_WIDTH = 90
_KEYS = ("command", "pattern", "query", "path", "url", "file", "name")  # the most telling first


def summarize_args(args: str) -> str:
    """A call's arguments in one short line: the telling value (command, path, URL,
    pattern) when there is one, else compact JSON."""
    try:
        value = json.loads(args) if args.strip() else {}
    except ValueError:
        return _clip(args.replace("\n", " "))
    if isinstance(value, dict):
        for key in _KEYS:
            if isinstance(value.get(key), str):
                rest = [k for k in value if k != key]
                more = f"  (+{', '.join(rest)})" if rest else ""
                return _clip(value[key].replace("\n", "⏎") + more)
        if not value:
            return ""
    return _clip(json.dumps(value, ensure_ascii=False))


def _clip(text: str, width: int = SUMMARY_WIDTH) -> str:
    text = visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"


_EXIT = re.compile(r"(?:exit status (\d+)|killed by signal (\d+)) \(\d+(?:\.\d+)?s\)(?:\n|$)")
STYLES = {"ok": "green", "failed": "red", "denied": "yellow", "rejected": "yellow", "no result": "yellow",
          "stopped": "yellow"}  # fmt: skip
STOPPED = "The call was stopped by "


def result_status(message: Message) -> str:
    """One word for how a call went: ``ok``, ``failed``, ``denied`` (by the person or a rule),
    ``rejected`` (bad arguments, sent back to the model), ``stopped`` (it ran and was stopped
    before it finished), ``no result``, or for a command that ran but did not succeed
    ``exit N`` / ``signal N``."""
    from golem_cli.core.messages import INTERRUPTED

    content = message.content
    if content == INTERRUPTED and not message.run_id:
        return "no result"
    if content.startswith("Your tool call was denied"):
        return "denied"
    if content.startswith("Your tool call was rejected"):
        return "rejected"
    if message.failed and content.startswith(STOPPED):
        return "stopped"
    if message.failed:
        return "failed"
    if message.tool_name == "run_command" and (exit := _EXIT.match(content)):
        if exit.group(2):
            return f"signal {exit.group(2)}"
        if exit.group(1) != "0":
            return f"exit {exit.group(1)}"
    return "ok"


def result_preview(text: str, lines: int = RESULT_LINES) -> tuple[list[str], int]:
    """The first ``lines`` lines of a result (each clipped) and how many more there are."""
    all_lines = visible(text).splitlines()
    shown = [_clip(line, 160) for line in all_lines[:lines]]
    return shown, max(0, len(all_lines) - lines)


#: Lines of a running call's latest output shown under the live line, and the characters of
#: it kept for them.
LIVE_LINES = 6
LIVE_KEEP = 4_000


def media_lines(result: Message) -> list[str]:
    """What a result carries besides its text (a tool server's images), one line each: the
    model sees them, so the person is told they went."""
    from golem_cli.cli.attach import size_words

    out = []
    for part in result.parts:
        article = "an" if part.kind[:1] in "aeiou" else "a"
        details = ", ".join(x for x in (part.media_type, size_words(len(part.data)) if part.data else "") if x)
        out.append(
            f"the tool returned {article} {part.kind}" + (f" ({details})" if details else "") + ", sent to the model"
        )
    return out


class _Running:
    """The live line under the output while tools run: the names of those still running and
    the time since the first of them started, and under it the last lines the running calls
    printed (``LIVE_LINES``, each cut to the width, shown as ``visible`` text). One spinner
    for the whole line, so it spins."""

    def __init__(self, clock: Callable[[], float]) -> None:
        from rich.spinner import Spinner

        self.clock = clock
        self.calls: dict[str, tuple[str, float]] = {}  # call ID -> (name, when it started)
        self.progress: dict[str, str] = {}  # call ID -> what its tool server last said of it
        self.output: dict[str, str] = {}  # call ID -> the end of what it printed
        self.spinner = Spinner("dots", style="dim")

    def add_output(self, call_id: str, text: str) -> None:
        if call_id in self.calls:
            self.output[call_id] = (self.output.get(call_id, "") + text)[-LIVE_KEEP:]

    def forget(self, call_id: str) -> None:
        self.calls.pop(call_id, None)
        self.output.pop(call_id, None)
        self.progress.pop(call_id, None)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        since = min((started for _, started in self.calls.values()), default=self.clock())
        names = ", ".join(f"{name} ({self.progress[cid]})" if cid in self.progress else name
                          for cid, (name, _) in self.calls.items())  # fmt: skip
        self.spinner.update(text=f" running {names} · {self.clock() - since:.1f}s")
        yield self.spinner
        width = max(options.max_width - 4, 10)
        for text in self.output.values():
            for line in visible(text.replace("\r", "\n")).splitlines()[-LIVE_LINES:]:
                yield Text("  │ " + (line if len(line) <= width else line[: width - 1] + "…"), style="dim")


def progress_text(done: float, total: float | None, message: str | None) -> str:
    """A tool server's progress report in a few words: ``2/5 copying``, ``40%``, ``3``."""
    if total:
        amount = f"{done:g}/{total:g}" if float(done).is_integer() and float(total).is_integer() else \
            f"{100 * done / total:.0f}%"  # fmt: skip
    else:
        amount = f"{done:g}"
    text = f"{amount} {message}" if message else amount
    return _clip(" ".join(text.split()), 60)


class ToolView:
    """Hooks for one turn in the REPL: ``on_event`` shows calls and results, ``ask`` asks."""

    def __init__(
        self,
        console: Console,
        renderer: ReplyRenderer | None = None,
        *,
        live: bool = True,
        clock: Callable[[], float] = time.monotonic,
        full_hint: str = "/history --full",
        after_answer: KeysAfterAnswer | None = None,
    ) -> None:
        from golem_cli.cli.tools.typeahead import KeysAfterAnswer

        self.console = console
        #: Reads the keys typed just after a one-key answer (shared with the REPL's prompt).
        self.after_answer = after_answer if after_answer is not None else KeysAfterAnswer()
        #: What shows a result whole, where this view is (the REPL's command, or ``golem show``).
        self.full_hint = full_hint
        self.renderer = renderer
        self.live = live and console.is_terminal
        self.clock = clock
        self._running = _Running(clock)
        self._live: Live | None = None
        self._shown_calls: set[str] = set()
        #: Calls that run without a question, with why and what they do, shown under the call.
        self._waived: dict[str, tuple[str, str]] = {}
        #: The calls that were still running when the view closed (Ctrl-C): name, seconds.
        self.stopped: list[tuple[str, float]] = []

    # --- events --------------------------------------------------------------------------

    def on_event(self, event: object) -> None:
        from golem_cli.core.events import ToolCallFinished, ToolCallOutput, ToolCallStarted

        if isinstance(event, ToolCallStarted):
            self._started(event.call)
        elif isinstance(event, ToolCallOutput):
            self._running.add_output(event.call.id, event.text)
            if self._live is not None:
                self._live.refresh()
        elif isinstance(event, ToolCallFinished):
            self._finished(event.call, event.result)

    def _pause_reply(self) -> None:
        if self.renderer is not None:
            self.renderer.finish()

    def _started(self, call: ToolCall) -> None:
        self._pause_reply()
        self._stop_live()
        self.print_call(call)
        if call.id in self._waived:
            self._print_waived(*self._waived.pop(call.id))
        self._shown_calls.add(call.id)
        self._running.calls[call.id] = (visible(call.name), self.clock())
        self._start_live()

    def progress(self, call_id: str, done: float, total: float | None, message: str | None) -> None:
        """A tool server's progress on a running call: shown on the running line."""
        if call_id in self._running.calls:
            self._running.progress[call_id] = progress_text(done, total, message)

    async def elicit(self, request: Elicitation) -> Reply:
        """A tool server's question for the person, asked with the running line paused."""
        from golem_cli.cli.tools.elicit import ask_form

        self._pause_reply()
        self._stop_live()
        try:
            return await ask_form(self.console, request)
        finally:
            if self._running.calls:
                self._start_live()

    def _finished(self, call: ToolCall, result: Message) -> None:
        self._pause_reply()
        self._stop_live()
        self._running.forget(call.id)
        if call.id not in self._shown_calls:  # never ran: denied, bad arguments, not enabled
            self.print_call(call)
        self.print_result(call, result)
        if self._running.calls:
            self._start_live()  # the others of the batch still run
        elif self.renderer is not None:
            self.renderer.waiting()  # the model answers the results next

    def _start_live(self) -> None:
        if self.live and self._live is None:
            from rich.live import Live

            self._live = Live(self._running, console=self.console, refresh_per_second=8, transient=True)
            self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def close(self) -> None:
        self._stop_live()
        now = self.clock()
        self.stopped = [(name, now - started) for name, started in self._running.calls.values()]
        self._running.calls.clear()
        self._running.output.clear()

    def stopped_line(self) -> str:
        """What Ctrl-C stopped, when it stopped running tools ("" when none ran): they are
        named with their time; the model reads that they were stopped and what they printed."""
        if not self.stopped:
            return ""
        names = ", ".join(f"{name} after {seconds:.1f}s" for name, seconds in self.stopped)
        one = len(self.stopped) == 1
        return f"Stopped {names}; the model is told {'it was' if one else 'they were'} stopped and what it printed."

    def waived(self, question: Question, why: str) -> None:
        """``Approvals.shown``: a call runs without a question (``why``: the rule, ``--yes``);
        what it does is shown under its call line when it starts."""
        self._waived[question.call_id] = (why, question.preview)

    def _print_waived(self, why: str, preview: str) -> None:
        from rich.text import Text

        self.console.print(Text(f"  ✓ runs without asking: {visible(why)}", style="dim"), soft_wrap=True)
        if preview.startswith(("--- ", "(no change")):  # a diff: what the edit changes
            shown, more = result_preview(preview, WAIVED_LINES)
            for line in shown:
                self.console.print(Text("    " + line, style="dim"), soft_wrap=True)
            if more:
                self.console.print(Text(f"    … {more} more line{'s' if more != 1 else ''} of the diff", style="dim"))

    # --- printing --------------------------------------------------------------------------

    def print_call(self, call: ToolCall) -> None:
        from rich.text import Text

        line = Text("→ ", style="cyan")
        line.append(visible(call.name), style="bold cyan")
        summary = summarize_args(call.args)
        if summary:
            line.append("  " + summary, style="cyan")
        self.console.print(line, no_wrap=True, overflow="ellipsis")  # one line, cut to the width

    def print_result(self, call: ToolCall, result: Message) -> None:
        from rich.text import Text

        status = result_status(result)
        style = STYLES.get(status, "red")  # exit N, signal N: the command did not succeed
        shown, more = result_preview(result.content)
        head = Text("  ← ", style=style)
        head.append(f"{visible(call.name)} {status}", style=f"bold {style}")
        if more:
            head.append(f" · {len(shown) + more} lines, {self.full_hint} shows all", style="dim")
        self.console.print(head, soft_wrap=True)
        for line in shown:  # a preview: each line cut to the width, never wrapped mid-word
            self.console.print(Text("    " + line, style="dim"), no_wrap=True, overflow="ellipsis")
        if more:
            self.console.print(Text(f"    … {more} more line{'s' if more != 1 else ''}", style="dim"))
        for line in media_lines(result):
            self.console.print(Text("    " + line, style="dim"), no_wrap=True, overflow="ellipsis")

    # --- the approval question ---------------------------------------------------------------

    async def ask(self, question: Question) -> Answer:
        """Ask on the terminal; a lone key of ``keys.KEYS`` answers at a keypress, a typed word
        (``yes``, ``always``, ``n`` with an optional reason) with Enter. An empty Enter is
        ignored. ``v`` shows the whole call in a pager, then asks again; ``a`` asks which calls
        to stop asking about when there is a choice (``choose``). Ctrl-C raises
        ``KeyboardInterrupt`` (the run stops with the batch closed); Ctrl-D denies. After a
        one-key answer the rest of its word is not left for the next prompt (``typeahead``)."""
        from golem_cli.cli.tools.keys import ONE_KEY, explained, hint
        from golem_cli.tools.approval import Answer

        self._pause_reply()
        self._stop_live()
        cut = self.print_question(question)
        while True:
            try:
                line, by_key = await _read_answer(self.after_answer, hint(cut=cut), ONE_KEY)
            except EOFError:
                return Answer("no", "the user gave no answer")
            answer = parse_answer(line)
            if answer is not None and by_key:
                self.after_answer.start(line)
            if answer == "view":
                self.page(question)
                cut = self.print_question(question)
            elif answer is not None and answer.choice == "always" and len(question.offers) > 1:
                chosen = await self.choose(question)
                if chosen is not None:
                    return chosen
            elif answer is not None:
                return answer
            else:
                self.console.print(f"[dim]{explained(cut=cut)}[/dim]")

    async def choose(self, question: Question) -> Answer | None:
        """What ``a`` stops asking about, for this chat: a number of ``question.offers``
        (None, back to the question, for anything else); the choice is said in one line."""
        from rich.padding import Padding
        from rich.table import Table
        from rich.text import Text

        from golem_cli.tools.approval import Answer

        self.console.print(Text("  Stop asking, for this chat, about:", style="yellow"))
        offers = Table.grid(padding=(0, 2))  # wrapped at words, beside its number
        offers.add_column(justify="right")
        offers.add_column()
        for n, (label, rules) in enumerate(question.offers, 1):
            row = Text(visible(label), style="bold")
            if rules != (question.tool,):
                row.append("  " + ", ".join(visible(r) for r in rules), style="dim")
            offers.add_row(Text(str(n), style="bold"), row)
        self.console.print(Padding(offers, (0, 0, 0, 4)))
        numbers = {str(n): str(n) for n in range(1, len(question.offers) + 1)}
        hint = f"1-{len(numbers)}; 2p: also for this project; other: back"
        line, by_key = await _read_answer(self.after_answer, hint, numbers, "Which?")
        picked = line.strip().lower()
        remember = picked.endswith("p")
        picked = picked.removesuffix("p").strip()
        if picked not in numbers:
            return None
        if by_key:
            self.after_answer.start(picked)
        rules = question.offers[int(picked) - 1][1]
        where = "this chat and this project (.golem/config.toml)" if remember else "this chat"
        said = f"Allowed for {where}: {', '.join(visible(r) for r in rules)} (/tools rules lists them)"
        self.console.print(Padding(Text(said, style="dim"), (0, 0, 0, 2)))
        return Answer("always", rules=rules, remember=remember)

    def page(self, question: Question) -> None:
        """The whole call in the pager (``$PAGER``, else ``less``), shown as ``visible`` text;
        printed whole when no pager runs."""
        import os
        import shlex
        import subprocess

        whole = visible(question.preview or question.arguments)
        if question.preview and question.arguments:
            whole += "\n\n--- the arguments as the model sent them ---\n" + visible(question.arguments)
        command = shlex.split(os.environ.get("PAGER") or "less") or ["less"]
        try:
            out = self.console.file.fileno()
            subprocess.run(command, input=whole.encode("utf-8", "replace"), stdout=out, check=False)
        except (OSError, ValueError):
            from rich.text import Text

            self.console.print(Text(whole), soft_wrap=True)

    def print_question(self, question: Question) -> bool:
        """The call as the person decides on it: the tool, then its diff, command or
        arguments, each line at most ``QUESTION_ROWS_PER_LINE`` rows of the terminal and
        at most ``QUESTION_LINES`` lines. When that is not all of it, a line says so plainly,
        with its size and the key that shows it all (True is returned). When it is taller
        than the screen, the tool is named again just above the prompt."""
        from rich.padding import Padding
        from rich.syntax import Syntax
        from rich.text import Text

        head = Text("? ", style="bold yellow")
        head.append(visible(question.tool), style="bold")
        head.append(f" ({visible(question.source)}) wants to run:", style="yellow")
        self.console.print(head, soft_wrap=True)
        width = max(self.console.width - 2, 20)
        whole = visible(question.preview or question.arguments)
        body, cut = bound_lines(whole, QUESTION_ROWS_PER_LINE * width)
        if question.preview.startswith(("--- ", "(no change")):
            self.console.print(Padding(Syntax(body, "diff", theme="ansi_dark", word_wrap=True), (0, 0, 0, 2)))
        else:
            self.console.print(Padding(Text(body), (0, 0, 0, 2)))
        rows = sum(max(1, -(-len(line) // width)) for line in body.splitlines())
        if rows + 2 > self.console.height:
            again = Text("? ", style="bold yellow")
            again.append(visible(question.tool), style="bold")
            again.append(" wants to run the call above", style="yellow")
            self.console.print(again, soft_wrap=True)
        if cut:
            lines = len(whole.splitlines())
            self.console.print(Text(
                f"⚠ Not all of it is shown above ({lines:,} lines, {len(whole):,} characters in all); "
                "y runs all of it: press v to see it whole first.", style="bold yellow"), soft_wrap=True)  # fmt: skip
        return cut


QUESTION_LINES = 400
QUESTION_ROWS_PER_LINE = 3


def bound_lines(text: str, width: int, lines: int = QUESTION_LINES) -> tuple[str, bool]:
    """At most ``lines`` lines of at most ``width`` characters, each cut saying how much; and
    whether anything was cut."""
    all_lines = text.splitlines()
    out = [line if len(line) <= width else line[: width - 30] + f"… ({len(line) - width + 30:,} more characters)"
           for line in all_lines[:lines]]  # fmt: skip
    if len(all_lines) > lines:
        out.append(f"… {len(all_lines) - lines:,} more lines")
    cut = len(all_lines) > lines or any(len(line) > width for line in all_lines[:lines])
    return "\n".join(out), cut


#: How long a lone key (``keys.ONE_KEY``) waits for more typing before it is the answer. A word
#: typed on (``yes``, ``always``, ``n reason``) is a line and ends with Enter, so nothing typed
#: at the question is left over for the next prompt.
KEY_PAUSE = 0.5


async def _read_answer(
    after_answer: KeysAfterAnswer, hint: str, one_key: dict[str, str], ask: str = "Allow?"
) -> tuple[str, bool]:
    """One answer from the keyboard, and whether it was a single key: a lone key of
    ``one_key`` (nothing typed after it within ``KEY_PAUSE``) ends it; anything longer is a
    line that Enter ends. The question line then shows the answer as a word. What
    ``after_answer`` kept of the keys typed after the previous answer is typed here; the rest of
    that answer's word, typed within its window and ended by Enter, is ignored as a stray Enter is."""
    import asyncio
    from html import escape

    from prompt_toolkit import PromptSession
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import HTML
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    kept = after_answer.take()
    keys = KeyBindings()

    @keys.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        typed = buffer.text
        if after_answer.finishes(typed):  # the end of the previous answer's word ("y", a pause, "es⏎")
            after_answer.finished()
            buffer.reset()
            return
        if typed.strip():  # an empty Enter is not an answer
            buffer.text = one_key.get(typed.strip().lower(), typed)
            event.app.exit(result=(typed, False))

    session: PromptSession[tuple[str, bool]] = PromptSession(key_bindings=keys)
    edits = 0

    def changed(buffer: Buffer) -> None:
        nonlocal edits
        edits += 1
        seen, key = edits, buffer.text.lower()
        if key not in one_key:
            return

        def settle() -> None:
            if seen == edits and session.app.is_running and not session.app.is_done:
                buffer.text = one_key[key]  # shown on the question line as the answer
                session.app.exit(result=(key, True))

        asyncio.get_running_loop().call_later(KEY_PAUSE, settle)

    session.default_buffer.on_text_changed += changed
    prompt = HTML(f"<b>{escape(ask)}</b> <style fg='ansigray'>{escape(hint)}</style> › ")
    # handle_sigint: the REPL keeps its own SIGINT handler
    return await session.prompt_async(prompt, default=kept, handle_sigint=False)


def parse_answer(line: str) -> Answer | Literal["view"] | None:
    """A key or word of ``keys.KEYS``; ``n``/``no`` optionally followed by a reason."""
    from golem_cli.cli.tools.keys import BY_WORD
    from golem_cli.tools.approval import Answer

    word, _, rest = line.strip().partition(" ")
    word = word.lower().rstrip(":,.")
    if word.startswith(("n:", "n,")):
        return Answer("no", line.strip()[2:].strip())
    key = BY_WORD.get(word)
    if key is None:
        return None
    if key.key == "n":
        return Answer("no", rest.strip(" :,-"))
    if key.key == "v":
        return "view"
    return Answer("yes" if key.key == "y" else "always")
