"""``golem ask``: one turn without the REPL, for scripts and pipes. The reply goes to stdout
(exactly as it came when stdout is not a terminal), everything else golem says to stderr, and
the exit code says how the turn ended (``render/turn.py`` decides, as it does for the REPL)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from msgspec import Struct

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.completion import conversation_ids
from golem_cli.cli.errors import InputError
from golem_cli.cli.options import (
    Allow,
    ChatFlags,
    ContextTokens,
    Deny,
    MaxCost,
    MaxMessages,
    Model,
    ModelOptions,
    NoProjectInstructions,
    SummarizeTrimmed,
    Tools,
    TrimStride,
    Yes,
)
from golem_cli.cli.render.console import note, say

if TYPE_CHECKING:
    from collections.abc import Callable

    from golem_cli.cli.attach import Attachment, TextFile
    from golem_cli.cli.model_choice import Choice
    from golem_cli.cli.restore import Restored
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.cli.tools.view import ToolView
    from golem_cli.core.messages import Part
    from golem_cli.session import ChatSession, TurnOutcome
    from golem_cli.store import Store
    from golem_cli.store.meta import ChatSettings

app = typer.Typer()

MAX_PIPED_PROMPT = 20 * 2**20  # more text than any model reads; `< /dev/zero` must not fill the memory

Prompt = Annotated[
    str | None, typer.Argument(metavar="PROMPT", help="The prompt; read from stdin when omitted or `-`.")
]
Continue = Annotated[bool, typer.Option("--continue", "-c", help="Continue the most recent conversation.")]
Cid = Annotated[
    str | None, typer.Option("--cid", metavar="ID", help="Continue this conversation.", autocompletion=conversation_ids)
]
System = Annotated[
    str | None, typer.Option("--system", "-s", metavar="TEXT", help="System prompt (new conversations).")
]
Json = Annotated[bool, typer.Option("--json", help="Print reply, IDs and usage as one JSON object.")]
NoStream = Annotated[bool, typer.Option("--no-stream", help="Print the reply only once it is complete.")]
NoSave = Annotated[
    bool, typer.Option("--no-save", help="A throwaway question: nothing is kept (not with -c or --cid).")
]
Attach = Annotated[
    list[str] | None,
    typer.Option(
        "--attach",
        "-a",
        metavar="FILE|URL|@SERVER:URI",
        help="Attach a file, an http(s) URL or a tool server's resource (repeatable).",
    ),
]


@app.command("ask", cls=GolemCommand, rich_help_panel="Chat")
def ask(
    prompt: Prompt = None,
    continue_last: Continue = False,
    cid: Cid = None,
    model: Model = None,
    system: System = None,
    as_json: Json = False,
    no_stream: NoStream = False,
    max_messages: MaxMessages = None,
    attach: Attach = None,
    options: ModelOptions = None,
    context_tokens: ContextTokens = None,
    trim_stride: TrimStride = None,
    max_cost: MaxCost = None,
    summarize_trimmed: SummarizeTrimmed = False,
    tool: Tools = None,
    allow: Allow = None,
    deny: Deny = None,
    yes: Yes = False,
    no_project_instructions: NoProjectInstructions = False,
    no_save: NoSave = False,
) -> int:
    """One turn without the REPL; prints only the reply."""
    from golem_cli.cli.attach import fetch_for, split
    from golem_cli.cli.common import open_store, project_root
    from golem_cli.cli.restore import keep, reopen

    if continue_last and cid:
        raise InputError("use either --continue or --cid, not both")
    if no_save and (continue_last or cid):
        raise InputError("--no-save asks a throwaway question; -c and --cid continue a saved conversation")
    attached, named = _attached(attach or [])
    text = _prompt_text(prompt, attached=bool(attached or named))
    store = _throwaway_store() if no_save else open_store()
    existing, choice, stored = _conversation_and_model(store, cid or ("last" if continue_last else None), model)
    flags = ChatFlags(options=options, tool=tool, allow=allow, deny=deny, yes=yes, max_messages=max_messages,
                      context_tokens=context_tokens, trim_stride=trim_stride, max_cost=max_cost,
                      summarize_trimmed=summarize_trimmed, no_project_instructions=no_project_instructions)  # fmt: skip
    kept, tools = reopen(stored, choice, flags)
    parts, files = split(fetch_for(choice.model, attached))  # URLs the provider cannot fetch: downloaded
    session, repaired = _session(store, existing, choice, tools, system=system, kept=kept)
    kept.apply(session, choice, max_cost=flags.max_cost)
    session.project_root = project_root(choice.settings, flags.no_project_instructions)
    for line in filter(None, [choice.note, *kept.lines()]):
        note(line)
    asked = Asked(text=text, files=files, parts=parts, named=named)
    view = _tool_view(tools, session)
    reply = None if (no_stream or as_json) else StreamedReply()
    outcome, ended_by = _turn(session, asked, reply, view, stream=not no_stream, kept=lambda: keep(session, tools))
    if as_json:
        _print_json(outcome, session, repaired)
    else:
        _print_reply(outcome.reply, reply)
    return _ended(session, outcome, view, streamed=not no_stream, ended_by=ended_by)


def _attached(sources: list[str]) -> tuple[list[Attachment], list[str]]:
    """What ``-a`` attaches: the files and URLs, read now, and the tool servers' resources
    (``@SERVER:URI``), read once the servers run."""
    from golem_cli.cli.attach import part_from
    from golem_cli.cli.tools.resources import is_mention

    return [part_from(s) for s in sources if not is_mention(s)], [s for s in sources if is_mention(s)]


class Asked(Struct, frozen=True, kw_only=True):
    """What one ``ask`` sends: the prompt, its text files and media parts, and the tool
    servers' resources it names with ``-a @SERVER:URI``, read once the servers run."""

    text: str
    files: list[TextFile]
    parts: list[Part]
    named: list[str]


async def _with_resources(session: ChatSession, asked: Asked) -> tuple[str, list[Part]]:
    """The prompt and parts to send: ``asked`` with its text files framed in the prompt and the
    resources it names read from the running tool servers, those of ``-a`` and each
    ``@SERVER:URI`` in the prompt (not in a file) that names a running server (a mention of
    another name is left as text). ``InputError`` when one cannot be read: nothing is sent
    without what the person asked for."""
    from golem_cli.cli.attach import split, with_files
    from golem_cli.cli.tools.resources import ResourceProblem, mentioned, read

    found = []
    for name in dict.fromkeys([*asked.named, *mentioned(session.toolbox, asked.text)]):
        try:
            found.extend(await read(session.toolbox, name, hint="-T SERVER starts one (golem mcp list)"))
        except ResourceProblem as e:
            raise InputError(f"{e}; nothing was sent") from None
    parts, files = split(found)
    return with_files(asked.text, [*asked.files, *files]), [*asked.parts, *parts]


def _ended(
    session: ChatSession, outcome: TurnOutcome, view: ToolView | None, *, streamed: bool, ended_by: int | None
) -> int:
    """After the reply: what the store found on disk, how the turn ended (``turn.ask_lines``)
    and a budget passed, on stderr; the exit code, or golem ended by the signal that stopped
    the turn (SIGTERM or SIGHUP: what arrived is saved)."""
    from golem_cli.cli.render.terminal_text import visible
    from golem_cli.cli.render.turn import ask_lines, turn_end

    for line in session.take_notices():  # what the store found on disk while saving
        note(f"golem: {visible(line)}")
    end = turn_end(outcome, stopped=view.stopped_line() if view is not None else "", streamed=streamed)
    for line in ask_lines(end, outcome.conversation_id):
        note(line)
    if outcome.over_budget:
        note(f"golem: budget: {outcome.over_budget}")
    if ended_by is not None:
        from golem_cli.cli.signals import die_by

        die_by(ended_by)
    return end.exit_code


def _before_sending(session: ChatSession, text: str, parts: list[Part]) -> None:
    """The budget's refusal (the conversation released, a new one not kept), else a warning
    when the request will not fit the model's context window."""
    from golem_cli.core.errors import BudgetError

    try:
        session.check_budget(text, parts)
    except BudgetError:
        session.close()
        raise
    warning = session.context_warning(text, parts)
    if warning:
        note(f"golem: warning: {warning}")


def _throwaway_store() -> Store:
    """A store in a temporary directory, removed when golem exits: ``--no-save`` runs the turn
    as every other (the prompt on disk before the model is asked), and leaves nothing in the
    user's store, so scripts do not fill the list."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    from golem_cli.store import Store

    where = tempfile.mkdtemp(prefix="golem-ask-")
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    return Store(Path(where))


def _conversation_and_model(
    store: Store, ref: str | None, model: str | None
) -> tuple[str, Choice, ChatSettings | None]:
    """The conversation ``ref`` names ("" for a new one), the model to ask (``-m``, else the
    conversation's, else the configured one; never the offline model unless named) and the
    settings kept with the conversation."""
    from golem_cli.cli.model_choice import choose_model

    if ref is None:
        return "", choose_model(model, fallback=False), None
    existing = store.resolve(ref)
    meta = store.meta(existing)
    return existing, choose_model(model, stored=meta.model, fallback=False), meta.settings


def _print_reply(text: str, streamed: StreamedReply | None) -> None:
    """The reply's end when it streamed, else all of it (shown safely on a terminal)."""
    if streamed is not None:
        streamed.finish(text)
        return
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stdout.write(for_terminal(text, sys.stdout) + "\n")


def _piped() -> str:
    """What was piped in, as text: bounded, and refused when it is binary (a NUL byte: an image,
    an archive, ``/dev/urandom``); bytes that are not UTF-8 become U+FFFD."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    data = sys.stdin.buffer.read(MAX_PIPED_PROMPT + 1)
    if len(data) > MAX_PIPED_PROMPT:
        raise InputError(
            f"standard input holds more than {MAX_PIPED_PROMPT // 2**20} MB, more than a model reads; "
            "send a part of it (`head -c 1M FILE | golem ask ...`)"
        )
    if b"\0" in data:
        raise InputError("standard input is binary data, not text; attach a file with -a FILE (images, PDF, audio)")
    return data.decode("utf-8", errors="replace")


def _prompt_text(prompt: str | None, *, attached: bool) -> str:
    """The prompt argument, followed by what was piped in; or what was piped in alone. Only
    files may come without a word (``attached``)."""
    piped = _piped()
    if prompt in (None, "-"):
        if not piped.strip():
            raise InputError("no prompt: pass it as an argument or on stdin")
        text = piped.rstrip("\n")
    else:
        text = f"{prompt}\n\n{piped.rstrip()}" if piped.strip() else prompt
    if not text.strip() and not attached:
        raise InputError("the prompt is empty")
    return text


def _tool_view(tools: ToolChoice, session: ChatSession) -> ToolView | None:
    """Where the turn's tool calls and questions are shown (stderr), when it has tools."""
    if session.toolbox is None:
        return None
    view = tools.stderr_view()
    view.full_hint = f"golem show {session.conversation_id} --full"
    return view


def _session(
    store: Store, existing: str, choice: Choice, tools: ToolChoice, *, system: str | None, kept: Restored
) -> tuple[ChatSession, list[dict[str, object]]]:
    """The conversation to ask in: ``existing`` resumed (what its repair changed said on
    stderr, and returned for ``--json``), or a new one, created with the prompt in it. Only the
    file's end is read when a message window is all a run sends: a token budget reads the
    whole, and so does a trim stride, which counts its steps from the file's first message."""
    from golem_cli.cli import model_choice
    from golem_cli.session import ChatSession

    limit = model_choice.max_messages(kept.max_messages, choice.settings)
    if not existing:
        session = ChatSession.start(store, choice.model, system=system or "", max_messages=limit, tools=tools.toolbox(),
                                    with_prompt=True)  # fmt: skip
        return session, []
    stride = kept.trim_stride if kept.trim_stride is not None else choice.settings.trim_stride
    windowed = not model_choice.context_tokens(kept.context_tokens, choice.settings) and stride == 1
    from golem_cli.cli.render.findings import repair_findings
    from golem_cli.cli.repl.slash import closed_lines, report_lines

    lock = store.lock(existing)  # one lock for both attempts: it says whose lock it took over
    opened = None
    if windowed and system is None:
        opened = ChatSession.resume_window(store, existing, choice.model, max_messages=limit, tools=tools.toolbox(),
                                           lock=lock)  # fmt: skip
    if opened is None:
        opened = ChatSession.resume(store, existing, choice.model, system=system, max_messages=limit,
                                    tools=tools.toolbox(), lock=lock)  # fmt: skip
    session, before, repair = opened
    repaired = [f.to_json() for f in repair_findings(before, session.history, repair)] if repair.changed else []
    if session.took_over:
        note(f"golem: took over the lock left by a golem process that is gone ({session.took_over})")
    for line in closed_lines(session) + report_lines(before, session.history, repair, when=" before continuing"):
        note(line)
    return session, repaired


class StreamedReply:
    """The reply printed as it streams: shown safely on a terminal (a pipe gets it exactly),
    each round of the model after tools apart from the one before by a blank line, as
    ``--no-stream`` prints them."""

    def __init__(self) -> None:
        from golem_cli.cli.render.terminal_text import VisibleStream, is_terminal

        self.shown = VisibleStream() if is_terminal(sys.stdout) else None
        self.tail = ""  # the end of what was printed so far
        self.new_round = False  # tools ran since: the next text is the model's next round

    def on_delta(self, delta: str) -> None:
        if not delta:
            return
        if self.new_round and self.tail:
            sys.stdout.write("\n" * (2 - len(self.tail) + len(self.tail.rstrip("\n"))))
        self.new_round = False
        sys.stdout.write(delta if self.shown is None else self.shown.feed(delta))
        sys.stdout.flush()
        self.tail = (self.tail + delta)[-2:]

    def on_event(self, event: object) -> None:
        from golem_cli.core.events import ToolCallFinished, ToolCallStarted

        if isinstance(event, ToolCallStarted | ToolCallFinished):
            self.new_round = True

    def finish(self, reply: str) -> None:
        """What is still held for the terminal, and the reply's last line ended."""
        if self.shown is not None:
            sys.stdout.write(self.shown.flush())
        if reply and not reply.endswith("\n"):
            sys.stdout.write("\n")


def _turn(
    session: ChatSession,
    asked: Asked,
    reply: StreamedReply | None,
    view: ToolView | None,
    *,
    stream: bool,
    kept: Callable[[], None],
) -> tuple[TurnOutcome, int | None]:
    """Run the one turn: the tool servers started first (quietly), the resources it names read
    from them and the budget checked, everything closed after (the settings ``kept`` first,
    once the turn began), whatever ended the turn. SIGTERM and SIGHUP stop the turn as Ctrl-C
    does (``signals.py``): the outcome comes with the signal, to end golem by after."""
    import asyncio

    from golem_cli.cli.signals import Termination, die_by, ending_like_ctrl_c
    from golem_cli.cli.tools import servers

    termination = Termination()

    def on_event(event: object) -> None:
        if reply is not None:
            reply.on_event(event)
        if view is not None:
            view.on_event(event)

    async def run() -> TurnOutcome:
        nonlocal termination
        box = session.toolbox
        task = asyncio.current_task()
        assert task is not None
        began = False
        try:
            with ending_like_ctrl_c(task.cancel) as termination:
                if box is not None:
                    servers.hear(box, say)
                    await servers.start(box, say, quiet=True)
                text, parts = await _with_resources(session, asked)
                _before_sending(session, text, parts)
                began = True
                on_delta = reply.on_delta if reply is not None else None
                outcome = await session.turn(text, parts=parts, on_delta=on_delta, stream=stream, on_event=on_event)
                if outcome.finished:  # rolling summaries: what left the window, folded before golem exits
                    await session.compactor.fold()
                return outcome
        finally:
            await _close_turn(session, view)
            if began:
                kept()

    try:
        return asyncio.run(run()), termination.signum
    except asyncio.CancelledError:
        if termination.signum is None:
            raise
        session.close()
        die_by(termination.signum)  # before the turn began: nothing was asked, nothing to keep
        raise
    finally:
        session.close()


async def _close_turn(session: ChatSession, view: ToolView | None) -> None:
    """What a turn opened, closed however it ended: the tool view, the tool servers (what they
    said shown first), the model's connections."""
    from golem_cli.cli.model_choice import close_model
    from golem_cli.cli.tools import servers

    if view is not None:
        view.close()
    if session.toolbox is not None:
        servers.show_notices(session.toolbox, say)
        await session.toolbox.close()
    await close_model(session.model)


def reply_ending(outcome: TurnOutcome) -> str:
    """How the reply ended, in the one word ``--json``'s ``ending`` gives (docs/json.md):
    ``interrupted`` (Ctrl-C), ``error`` (a failure cut it, or nothing came), ``refused``,
    ``cut_off`` (a token limit or a content filter) or ``complete``."""
    if outcome.interrupted:
        return "interrupted"
    if outcome.error is not None:
        return "error"
    if outcome.refusal:
        return "refused"
    return "cut_off" if outcome.cut_off else "complete"


def _print_json(outcome: TurnOutcome, session: ChatSession, repaired: list[dict[str, object]]) -> None:
    """The turn as one JSON object (docs/json.md): the reply without the stored
    ``[reply interrupted]`` mark, which ``interrupted`` says."""
    from golem_cli.cli.errors import describe
    from golem_cli.cli.render.console import camel, print_json
    from golem_cli.core.messages import unmark_interrupted

    ending = reply_ending(outcome)
    print_json({
        "reply": unmark_interrupted(outcome.reply) if outcome.cut else outcome.reply, "runId": outcome.run_id,
        "conversationId": outcome.conversation_id, "model": session.model.name,
        "usage": camel(outcome.usage.to_json()), "cacheShare": outcome.usage.cache_share,
        "cost": outcome.cost, "spent": session.spent if outcome.cost is not None else None,
        "ending": ending, "interrupted": ending in ("interrupted", "error"),
        "error": None if outcome.error is None else describe(outcome.error),
        "finishReason": outcome.stop_reason or outcome.finish_reason, "refusal": outcome.refusal,
        "repaired": repaired, "tookOverLock": session.took_over or None,
    })  # fmt: skip
