"""``golem chat``, ``golem resume``, ``golem fork`` and ``golem ask``: talking to a model.

The commands choose a model, open a ``ChatSession`` (which holds the conversation's lock) and
hand it to the REPL, or run a single turn for ``ask``. Failures that end a command go
through ``errors.report``; failures inside the REPL are printed and the chat goes on.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from msgspec import Struct

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.common import instructions_lines, project_root, set_window
from golem_cli.cli.completion import ID_HELP, conversation_ids
from golem_cli.cli.options import (
    Allow,
    ChatFlags,
    ContextTokens,
    ConversationId,
    Deny,
    MaxCost,
    MaxMessages,
    Model,
    ModelOptions,
    NoMarkdown,
    NoProjectInstructions,
    SummarizeTrimmed,
    Tools,
    TrimStride,
    Yes,
)
from golem_cli.cli.tools.choice import choose_tools

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from golem_cli.cli.model_choice import Choice
    from golem_cli.cli.restore import Restored
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.core.history.repair import HistoryRepair
    from golem_cli.core.messages import Message
    from golem_cli.core.model import ModelSettings
    from golem_cli.session import ChatSession
    from golem_cli.store import Store
    from golem_cli.store.locks import FileLock
    from golem_cli.tools.toolbox import Toolbox

PANEL = "Chat"
app = typer.Typer()


# --- implementations -----------------------------------------------------------------------


def _store() -> Store:
    from golem_cli.cli.common import open_store

    return open_store()


def _unique_prefix(cid: str) -> int:
    """How much of a new ``cid`` tells it apart, without opening the store (a new chat's
    banner, before the prompt)."""
    from golem_cli.config.paths import data_dir
    from golem_cli.store.refs import unique_prefix

    return unique_prefix(data_dir(), cid)


def _note(text: str) -> None:
    if text:
        from golem_cli.cli.render.terminal_text import for_terminal

        sys.stderr.write(for_terminal(text, sys.stderr) + "\n")


@app.command("chat", cls=GolemCommand, rich_help_panel=PANEL)
def chat(
    model: Model = None,
    system: Annotated[
        str, typer.Option("--system", "-s", metavar="TEXT", help="System prompt for this conversation.")
    ] = "",
    max_messages: MaxMessages = None,
    no_markdown: NoMarkdown = False,
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
) -> int:
    """Start a new conversation."""
    from golem_cli.cli.model_choice import Choice, plan_model, resolve_planned, run_options
    from golem_cli.cli.model_choice import max_messages as trim
    from golem_cli.cli.repl.opening import PendingSession
    from golem_cli.cli.repl.start import run_repl
    from golem_cli.config.settings import load_settings
    from golem_cli.core.ids import new_id

    # The prompt comes first: before it, only what the banner shows (the model by name, the
    # new conversation's ID) and what the tools need. Once it is drawn the model is checked;
    # once the person's first key is shown (or a line arrives) the conversation is created
    # (``PendingSession``), before any line is acted on.
    planned = plan_model(model, load_settings())
    tools = choose_tools(planned.settings, tool, allow, yes, deny=deny)
    toolbox = tools.toolbox()
    cid = new_id()
    project = project_root(planned.settings, no_project_instructions)
    checked: list[tuple[Choice, ModelSettings]] = []  # what check() found, for open_session()

    def check() -> None:
        choice = Choice(resolve_planned(planned, lazy=True), planned.settings)
        checked.append((choice, run_options(options, choice.model)))

    def open_session() -> tuple[ChatSession, list[str]]:
        from golem_cli.session import ChatSession

        ((choice, settings),) = checked
        session = ChatSession.start(_store(), choice.model, system=system, cid=cid,
                                    max_messages=trim(max_messages, choice.settings), tools=toolbox)  # fmt: skip
        set_window(session, choice, context_tokens, settings, trim_stride, summarize_trimmed, max_cost=max_cost)
        session.project_root = project
        return session, []

    pending = PendingSession(model=planned.name, conversation_id=cid, unique=_unique_prefix(cid), open=open_session,
                             toolbox=toolbox, check=check)  # fmt: skip
    return run_repl(
        pending, markdown=not no_markdown, note=planned.note, tools=tools, lines=instructions_lines(project)
    )


def _pick(store: Store) -> str | None:
    """Ask which conversation to resume (stdin is a terminal) until the answer names one;
    None when the person leaves without choosing (an empty answer, Ctrl-D)."""
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render.console import local_time
    from golem_cli.cli.render.short_ids import PREFIX_LENGTH
    from golem_cli.cli.render.terminal_text import visible
    from golem_cli.core.errors import GolemError

    rows = store.list(limit=10)
    if not rows:
        raise InputError("there are no conversations yet; start one with `golem chat`")
    unique = store.unique_prefixes(row.id for row in rows)
    width = max([PREFIX_LENGTH, *unique.values()])
    for i, row in enumerate(rows, 1):
        meta = row.meta
        line = f"{i:>2}. {meta.id[:width]}  {local_time(meta.updated)}  {meta.display_title[:60]}"
        sys.stdout.write(visible(line) + "\n")  # stdin is a terminal: so is stdout, most likely
    while True:
        try:
            answer = input(f"Resume which (1-{len(rows)} or an ID; Enter leaves)? ").strip()
        except EOFError:
            sys.stdout.write("\n")
            answer = ""
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(rows):
            return rows[int(answer) - 1].meta.id
        if answer.isdigit() and len(answer) <= 2:  # a list number, never an ID's last digit
            _note(f"{answer} is not in the list (1-{len(rows)})")
            continue
        try:
            return store.resolve(answer)
        except GolemError as e:
            _note(f"{e}" if not answer.isdigit() else f"{answer} is not in the list (1-{len(rows)})")


def _yes(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


MaybeId = Annotated[str | None, typer.Argument(metavar="ID", help=ID_HELP, autocompletion=conversation_ids)]
At = Annotated[
    int | None,
    typer.Option("--at", metavar="N",
                 help="Copy only the first N messages, as `golem show` numbers them (system prompts come along)."),
]  # fmt: skip
NoChat = Annotated[bool, typer.Option("--no-chat", help="Only create the fork and print its ID.")]


@app.command("resume", cls=GolemCommand, rich_help_panel=PANEL)
def resume(
    ref: MaybeId = None,
    model: Model = None,
    max_messages: MaxMessages = None,
    no_markdown: NoMarkdown = False,
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
) -> int:
    """Continue a stored conversation (repaired first if needed)."""
    store = _store()
    cid = _to_resume(store, ref)
    if cid is None:
        _note("nothing resumed")
        return 0
    flags = ChatFlags(options=options, tool=tool, allow=allow, deny=deny, yes=yes, max_messages=max_messages,
                      context_tokens=context_tokens, trim_stride=trim_stride, max_cost=max_cost,
                      summarize_trimmed=summarize_trimmed, no_project_instructions=no_project_instructions)  # fmt: skip
    again = _reopen(store, cid, model, flags)
    held = _lock(store, cid)  # the lock, and the question when another process holds it, come before the prompt
    if held is None:
        _note("nothing resumed")
        return 1
    cid, lock, lines = held
    lines = instructions_lines(again.project) + again.kept.lines() + lines
    try:
        unique = store.unique_prefixes([cid])[cid]
        size = store.messages_path(cid).stat().st_size
    except BaseException:
        store.release(cid)
        raise
    return again.chat(lambda: again.open(store, cid, lock), cid=cid, unique=lambda: unique,
                      release=lambda: store.release(cid), at_once=size <= LOAD_AFTER_THE_PROMPT,
                      markdown=not no_markdown, lines=lines)  # fmt: skip


class _Reopened(Struct, frozen=True, kw_only=True):
    """What ``resume`` and ``fork`` settle before the prompt, from the settings kept beside the
    conversation and the flags over them: the model, the tools, where project instructions are
    read."""

    choice: Choice
    kept: Restored
    tools: ToolChoice
    toolbox: Toolbox | None
    project: Path | None
    flags: ChatFlags

    def open(self, store: Store, cid: str, lock: FileLock | None = None) -> tuple[ChatSession, list[str]]:
        """The conversation opened with these settings (repaired as it is loaded), and its report."""
        from golem_cli.cli.model_choice import max_messages as trim
        from golem_cli.session import ChatSession

        window = trim(self.kept.max_messages, self.choice.settings)
        session, before, repair = ChatSession.resume(store, cid, self.choice.model, max_messages=window,
                                                     tools=self.toolbox, lock=lock)  # fmt: skip
        self.kept.apply(session, self.choice, max_cost=self.flags.max_cost)
        session.project_root = self.project
        return session, _resumed(before, session, repair)

    def chat(
        self,
        open_session: Callable[[], tuple[ChatSession, list[str]]],
        *,
        cid: str,
        unique: Callable[[], int],
        at_once: bool,
        markdown: bool,
        lines: list[str],
        release: Callable[[], None] | None = None,
    ) -> int:
        """The chat. A small conversation is opened ``at_once``, before the prompt, so its report
        reads above the prompt without a redraw; a long one is loaded behind the prompt (ADR 0015)."""
        from golem_cli.cli.repl.opening import PendingSession
        from golem_cli.cli.repl.start import run_repl

        if at_once:
            session, report = open_session()  # (the lock is released if it fails)
            return run_repl(session, markdown=markdown, note=self.choice.note, lines=lines + report, tools=self.tools)
        pending = PendingSession(model=self.choice.model.name, conversation_id=cid, unique=unique(),
                                 open=open_session, toolbox=self.toolbox, release=release)  # fmt: skip
        return run_repl(pending, markdown=markdown, note=self.choice.note, lines=lines, tools=self.tools)


def _reopen(store: Store, cid: str, model: str | None, flags: ChatFlags) -> _Reopened:
    """The settings to continue ``cid`` with: -o is checked, and refused, before anything is
    opened or copied."""
    from golem_cli.cli.model_choice import choose_model
    from golem_cli.cli.restore import reopen

    meta = store.meta(cid)
    choice = choose_model(model, stored=meta.model, lazy=True)
    kept, tools = reopen(meta.settings, choice, flags)
    project = project_root(choice.settings, flags.no_project_instructions)
    return _Reopened(choice=choice, kept=kept, tools=tools, toolbox=tools.toolbox(), project=project, flags=flags)


def _to_resume(store: Store, ref: str | None) -> str | None:
    """The conversation ``ref`` names; without one, the one the person picks (None: none)."""
    from golem_cli.cli.errors import InputError

    if ref is not None:
        return store.resolve(ref)
    if not sys.stdin.isatty():
        raise InputError("give the conversation to resume: golem resume ID (or `last`)")
    return _pick(store)


def _lock(store: Store, cid: str) -> tuple[str, FileLock, list[str]] | None:
    """The conversation's lock, or, when another golem process holds it and the person agrees
    (on a terminal), a fork's: the conversation to open, its lock, and the lines saying what
    happened; None when the person declines."""
    from golem_cli.cli.render import short_ids
    from golem_cli.store import ConversationLocked

    lines: list[str] = []
    try:
        lock = store.lock(cid)
    except ConversationLocked as locked:
        if not sys.stdin.isatty():
            raise
        who = locked.holder.describe() if locked.holder else "holder unknown"
        short = short_ids.handle(cid)
        _note(f"Conversation {short} is open in another golem process ({who}).")
        if not _yes("Fork it and continue in the copy? [y/N] "):
            return None
        cid = store.fork(cid)
        lines.append(f"Forked {short} into {cid}.")
        lock = store.lock(cid)
    if lock.took_over:
        lines.insert(0, f"Took over the lock left by a golem process that is gone ({lock.took_over.describe()}).")
    return cid, lock, lines


#: A conversation file larger than this (about 2,000 messages: a load of some 30 ms) is
#: loaded and repaired after the prompt is shown, its report printed above the prompt when
#: ready; a smaller one before, so its report reads above the prompt without a redraw.
LOAD_AFTER_THE_PROMPT = 1 << 20


def _resumed(before: list[Message], session: ChatSession, repair: HistoryRepair) -> list[str]:
    """The repair report of a conversation just resumed."""
    from golem_cli.cli.repl.slash import closed_lines, report_lines

    return closed_lines(session) + report_lines(before, session.history, repair, when=" before continuing")


@app.command("fork", cls=GolemCommand, rich_help_panel=PANEL)
def fork(
    ref: ConversationId,
    at: At = None,
    no_chat: NoChat = False,
    model: Model = None,
    max_messages: MaxMessages = None,
    no_markdown: NoMarkdown = False,
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
) -> int:
    """Continue in a copy of a conversation (lineage recorded)."""
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render import short_ids
    from golem_cli.core.ids import new_id

    if no_chat and options:
        raise InputError("-o sets options for the chat; --no-chat starts none")
    store = _store()
    parent = store.resolve(ref)
    if no_chat:
        sys.stdout.write(_fork_only(store, parent, at) + "\n")
        return 0
    # the settings first: a refused -o leaves no fork behind
    flags = ChatFlags(options=options, tool=tool, allow=allow, deny=deny, yes=yes, max_messages=max_messages,
                      context_tokens=context_tokens, trim_stride=trim_stride, max_cost=max_cost,
                      summarize_trimmed=summarize_trimmed, no_project_instructions=no_project_instructions)  # fmt: skip
    again = _reopen(store, parent, model, flags)
    short = short_ids.handle(parent)
    cid = new_id()  # the fork's, shown by the banner before the fork is made

    def open_session() -> tuple[ChatSession, list[str]]:
        store.fork(parent, at, new=cid)
        session, report = again.open(store, cid)
        return session, [f"Forked {short} into {cid}.", *report]

    # As resume does: a long conversation is copied, loaded and repaired behind the prompt.
    at_once = store.messages_path(parent).stat().st_size <= LOAD_AFTER_THE_PROMPT
    lines = instructions_lines(again.project) + again.kept.lines()
    return again.chat(open_session, cid=cid, unique=lambda: _unique_prefix(cid), at_once=at_once,
                      markdown=not no_markdown, lines=lines)  # fmt: skip


def _fork_only(store: Store, parent: str, at: int | None) -> str:
    """``fork --no-chat``: the fork made and repaired (what changed said on stderr); its ID."""
    from golem_cli.cli.repl.slash import report_lines
    from golem_cli.core.history.repair import normalize_history

    new = store.fork(parent, at)
    before = store.load(new)
    after, repair = normalize_history(before)
    if repair.changed:
        store.save(new, after)
    for line in report_lines(before, after, repair):
        _note(line)
    return new
