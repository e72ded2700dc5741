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
from typing import TYPE_CHECKING

from golem_cli.cli.render.terminal_text import visible

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.live import Live

    from golem_cli.cli.render.streaming import ReplyRenderer
    from golem_cli.cli.tools.typeahead import KeysAfterAnswer
    from golem_cli.core.messages import Message, ToolCall
    from golem_cli.tools.approval import Answer, Question

RESULT_LINES = 4  # lines of a result shown under it
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
STYLES = {"ok": "green", "failed": "red", "denied": "yellow", "rejected": "yellow", "no result": "yellow"}


def result_status(message: Message) -> str:
    """One word for how a call went: ``ok``, ``failed``, ``denied`` (by the person),
    ``rejected`` (bad arguments, sent back to the model), ``no result``, or for a command
    that ran but did not succeed ``exit N`` / ``signal N``."""
    from golem_cli.core.messages import INTERRUPTED

    content = message.content
    if content == INTERRUPTED and not message.run_id:
        return "no result"
    if content.startswith("Your tool call was denied"):
        return "denied"
    if content.startswith("Your tool call was rejected"):
        return "rejected"
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
    the time since the first of them started. One spinner for the whole line, so it spins."""

    def __init__(self, clock: Callable[[], float]) -> None:
        from rich.spinner import Spinner

        self.clock = clock
        self.calls: dict[str, tuple[str, float]] = {}  # call ID -> (name, when it started)
        self.spinner = Spinner("dots", style="dim")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        since = min((started for _, started in self.calls.values()), default=self.clock())
        names = ", ".join(name for name, _ in self.calls.values())
        self.spinner.update(text=f" running {names} · {self.clock() - since:.1f}s")
        yield self.spinner


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
        #: The calls that were still running when the view closed (Ctrl-C): name, seconds.
        self.stopped: list[tuple[str, float]] = []

    # --- events --------------------------------------------------------------------------

    def on_event(self, event: object) -> None:
        from golem_cli.core.events import ToolCallFinished, ToolCallStarted

        if isinstance(event, ToolCallStarted):
            self._started(event.call)
        elif isinstance(event, ToolCallFinished):
            self._finished(event.call, event.result)

    def _pause_reply(self) -> None:
        if self.renderer is not None:
            self.renderer.finish()

    def _started(self, call: ToolCall) -> None:
        self._pause_reply()
        self._stop_live()
        self.print_call(call)
        self._shown_calls.add(call.id)
        self._running.calls[call.id] = (visible(call.name), self.clock())
        self._start_live()

    def _finished(self, call: ToolCall, result: Message) -> None:
        self._pause_reply()
        self._stop_live()
        self._running.calls.pop(call.id, None)
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

    def stopped_line(self) -> str:
        """What Ctrl-C stopped, when it stopped running tools ("" when none ran): they are
        named with their time, and their calls stay for the next turn to close."""
        if not self.stopped:
            return ""
        names = ", ".join(f"{name} after {seconds:.1f}s" for name, seconds in self.stopped)
        one = len(self.stopped) == 1
        return f"Stopped {names}; {'its call is' if one else 'their calls are'} kept and closed at the next turn."

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
        """Ask on the terminal; a lone ``y``/``a`` answers at a keypress, a typed word
        (``yes``, ``always``, ``n`` with an optional reason) with Enter. An empty Enter is
        ignored. Ctrl-C raises ``KeyboardInterrupt`` (the run stops with the batch closed);
        Ctrl-D denies. After a one-key answer the rest of its word is not left for the next
        prompt (``typeahead``)."""
        from golem_cli.tools.approval import Answer

        self._pause_reply()
        self._stop_live()
        self.print_question(question)
        while True:
            try:
                line, by_key = await _read_answer(self.after_answer)
            except EOFError:
                return Answer("no", "the user gave no answer")
            answer = parse_answer(line)
            if answer is not None:
                if by_key:
                    self.after_answer.start(line)
                return answer
            self.console.print("[dim]Answer y (run it), a (always for this tool) or n (deny, with a reason).[/dim]")

    def print_question(self, question: Question) -> None:
        """The call as the person decides on it: the tool, then its diff, command or
        arguments, each line at most ``QUESTION_ROWS_PER_LINE`` rows of the terminal and
        at most ``QUESTION_LINES`` lines (each cut says how much). When that is taller than
        the screen, the tool is named again just above the prompt."""
        from rich.padding import Padding
        from rich.syntax import Syntax
        from rich.text import Text

        head = Text("? ", style="bold yellow")
        head.append(visible(question.tool), style="bold")
        head.append(f" ({visible(question.source)}) wants to run:", style="yellow")
        self.console.print(head, soft_wrap=True)
        width = max(self.console.width - 2, 20)
        body = bound_lines(visible(question.preview or question.arguments), QUESTION_ROWS_PER_LINE * width)
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


QUESTION_LINES = 400
QUESTION_ROWS_PER_LINE = 3


def bound_lines(text: str, width: int, lines: int = QUESTION_LINES) -> str:
    """At most ``lines`` lines of at most ``width`` characters, each cut saying how much."""
    all_lines = text.splitlines()
    out = [line if len(line) <= width else line[: width - 30] + f"… ({len(line) - width + 30:,} more characters)"
           for line in all_lines[:lines]]  # fmt: skip
    if len(all_lines) > lines:
        out.append(f"… {len(all_lines) - lines:,} more lines")
    return "\n".join(out)


#: How long a lone ``y`` or ``a`` waits for more typing before it is the answer. A word typed
#: on (``yes``, ``always``, ``n reason``) is a line and ends with Enter, so nothing typed at
#: the question is left over for the next prompt.
KEY_PAUSE = 0.5
_KEY_WORDS = {"y": "yes", "a": "always"}


async def _read_answer(after_answer: KeysAfterAnswer) -> tuple[str, bool]:
    """One answer from the keyboard, and whether it was a single key: a lone ``y`` or ``a``
    (nothing typed after it within ``KEY_PAUSE``) ends it; anything longer is a line that
    Enter ends. The question line then shows the answer as a word. What ``after_answer`` kept of the
    keys typed after the previous answer is typed here; the rest of that answer's word, typed
    within its window and ended by Enter, is ignored as a stray Enter is."""
    import asyncio

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
            buffer.text = _KEY_WORDS.get(typed.strip().lower(), typed)
            event.app.exit(result=(typed, False))

    session: PromptSession[tuple[str, bool]] = PromptSession(key_bindings=keys)
    edits = 0

    def changed(buffer: Buffer) -> None:
        nonlocal edits
        edits += 1
        seen, key = edits, buffer.text.lower()
        if key not in _KEY_WORDS:
            return

        def settle() -> None:
            if seen == edits and session.app.is_running and not session.app.is_done:
                buffer.text = _KEY_WORDS[key]  # shown on the question line as the answer
                session.app.exit(result=(key, True))

        asyncio.get_running_loop().call_later(KEY_PAUSE, settle)

    session.default_buffer.on_text_changed += changed
    prompt = HTML("<b>Allow?</b> <style fg='ansigray'>[y]es once · [a]lways this tool · [n]o + reason</style> › ")
    # handle_sigint: the REPL keeps its own SIGINT handler
    return await session.prompt_async(prompt, default=kept, handle_sigint=False)


def parse_answer(line: str) -> Answer | None:
    """``y``/``yes``, ``a``/``always``, ``n``/``no`` optionally followed by a reason."""
    from golem_cli.tools.approval import Answer

    word, _, rest = line.strip().partition(" ")
    word = word.lower().rstrip(":,.")
    if word in ("y", "yes"):
        return Answer("yes")
    if word in ("a", "always"):
        return Answer("always")
    if word in ("n", "no"):
        return Answer("no", rest.strip(" :,-"))
    if word.startswith("n:") or word.startswith("n,"):
        return Answer("no", line.strip()[2:].strip())
    return None
