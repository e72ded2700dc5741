"""The REPL's slash commands: each a short function over the session, listed in ``COMMANDS``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.cli.attach import Attachment
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.core.history.repair import HistoryRepair
    from golem_cli.core.messages import Message, Part
    from golem_cli.session import ChatSession, TurnOutcome
    from golem_cli.tools.toolbox import Toolbox

from golem_cli.cli.repl import compact

EXIT = "exit"


class Repl(Protocol):
    """What a command may use of the REPL (``cli.repl.Repl``, which imports this module)."""

    session: ChatSession
    attachments: list[Attachment]
    tools: ToolChoice | None
    plain_input: bool

    @property
    def console(self) -> Console: ...

    async def ask(self, text: str, parts: Sequence[Part] | None = None) -> TurnOutcome | None: ...

    def id_markup(self, cid: str, *, hint: bool = False) -> str: ...

    async def start_tool_servers(self) -> None: ...

    async def tool_servers_ready(self) -> bool: ...


Handler = Callable[[Repl, str], Awaitable[str | None]]


def report_lines(
    before: list[Message], after: list[Message], repair: HistoryRepair, *, when: str = "", every_note: bool = False
) -> list[str]:
    """The repair report as lines for people: what changed, where, and which tool. Worded by
    what happened: repaired, or only noted (cut-off arguments are kept as they are). Arguments
    cut off in a reply golem marked interrupted are left out unless ``every_note`` (``/normalize``
    asks for them): the person saw that interruption happen, and golem recorded it."""
    from golem_cli.cli.render.findings import TRUNCATED, repair_findings
    from golem_cli.cli.render.report import lines
    from golem_cli.core.messages import is_interrupted_reply

    found = repair_findings(before, after, repair)
    if not every_note:
        found = [f for f in found if not (f.kind == TRUNCATED and f.message_index is not None
                                          and is_interrupted_reply(before[f.message_index]))]  # fmt: skip
    if not found:
        return []
    head = f"Repaired this conversation{when}:" if repair.changed else "Nothing to repair. Noted:"
    return [head, *lines(found)]


def closed_lines(session: ChatSession) -> list[str]:
    """The calls ``resume`` closed as started when golem stopped (store/sidecars/calls.py), one line each."""
    from golem_cli.cli.render.terminal_text import visible

    return [
        f"Closed {visible(c.call_id)} ({visible(c.tool)}): it {'finished' if c.finished else 'had started'} when golem "
        "stopped, its result was not saved; the model is told its outcome is unknown."
        for c in session.closed
    ]


def _error(repl: Repl, exc: BaseException) -> None:
    from rich.markup import escape

    from golem_cli.cli.errors import describe
    from golem_cli.cli.render.terminal_text import visible

    repl.console.print(f"[red]error:[/red] {escape(visible(describe(exc)))}", highlight=False)


async def _help(repl: Repl, arg: str) -> None:
    """Each command beside what it does, wrapped at words in its own column; on a terminal too
    narrow for that column, under the command."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    width = max(len(usage) for usage, _ in COMMANDS.values())
    if repl.console.width < 2 + width + 2 + _HELP_TEXT_WIDTH:
        for usage, text in COMMANDS.values():  # Text, not markup: "[tokens]" is part of the usage
            repl.console.print(Padding(Text(usage, style="bold"), (0, 0, 0, 2)))
            repl.console.print(Padding(Text(text), (0, 0, 0, 4)))
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for usage, text in COMMANDS.values():
        table.add_row(Text(usage), Text(text))
    repl.console.print(Padding(table, (0, 0, 0, 2)))


_HELP_TEXT_WIDTH = 30  # the narrowest column of /help's descriptions worth keeping beside them


async def _ids(repl: Repl, arg: str) -> None:
    s = repl.session
    # soft_wrap: each on one line however narrow the terminal (the terminal folds it, and a
    # double-click or a script still gets the whole path)
    for line in (
        f"conversation {s.conversation_id}",
        f"last run     {s.last_run_id or '(none yet)'}",
        f"file         {s.store.messages_path(s.conversation_id)}",
    ):
        repl.console.print(line, highlight=False, markup=False, soft_wrap=True)


async def _context(repl: Repl, arg: str) -> None:
    from golem_cli.cli.context import lines, request_context

    for line in lines(request_context(repl.session)):
        repl.console.print(line, highlight=False, markup=False, soft_wrap=True)


async def _cost(repl: Repl, arg: str) -> None:
    from golem_cli.cli.commands.usage import usage_lines
    from golem_cli.core.cost import usd
    from golem_cli.store.usage import by_model

    s = repl.session
    for line in usage_lines("model", by_model(s.runs().values())):
        repl.console.print(line, highlight=False, markup=False, soft_wrap=True)
    budget = f" of the budget of {usd(s.max_cost)}" if s.max_cost is not None else ""
    repl.console.print(f"This chat spent {usd(s.spent)}{budget}.", highlight=False, markup=False)


async def _fork(repl: Repl, arg: str) -> None:
    if repl.session.is_empty:  # a copy of nothing would outlive the chat as an empty conversation
        repl.console.print("Nothing to fork yet: this conversation has no prompt.")
        return
    old = repl.session.conversation_id
    new = repl.session.fork()
    repl.console.print(f"Forked {repl.id_markup(old, hint=True)} into {repl.id_markup(new)}; continuing in the fork.")


async def _new(repl: Repl, arg: str) -> None:
    """A new conversation without leaving the chat: the same model, options, system prompt
    and tools; the one left is saved (and released), named by what resumes it."""
    from golem_cli.session import ChatSession

    old = repl.session
    if old.is_empty:
        repl.console.print("This conversation is still empty: type a prompt to start it.")
        return
    if old.unsaved is not None:  # the store refused its last save: not left behind unsaved
        repl.console.print("The last turn is not saved yet (see above); /new waits until a turn saves it.")
        return
    new = ChatSession.start(old.store, old.model, system=old.system, max_messages=old.max_messages, tools=old.toolbox)
    new.context_tokens, new.options, new.keep_unsaved = old.context_tokens, old.options, old.keep_unsaved
    old.close()  # its lock; the toolbox (and its servers) go on in the new conversation
    repl.session = new
    resume = repl.id_markup(old.conversation_id, hint=True)
    repl.console.print(f"[dim]Saved the last conversation (golem resume[/dim] {resume}[dim]). New conversation[/dim] "
                       f"{repl.id_markup(new.conversation_id)}.")  # fmt: skip


async def _copy(repl: Repl, arg: str) -> None:
    """The last reply, to the clipboard through the terminal (OSC 52, which not every terminal
    accepts: said so), or with ``/copy FILE`` to a new file."""
    from golem_cli.core.messages import unmark_interrupted

    reply = next((m.content for m in reversed(repl.session.history) if m.role == "assistant" and m.content), "")
    if not reply:
        repl.console.print("Nothing to copy yet: no reply has text.")
        return
    reply = unmark_interrupted(reply)
    if arg:
        _copy_to_file(repl, arg, reply)
        return
    import base64

    out = repl.console.file
    out.write("\x1b]52;c;" + base64.b64encode(reply.encode()).decode("ascii") + "\x07")  # golem's own sequence
    out.flush()
    repl.console.print(f"Copied the last reply ({len(reply):,} characters) through the terminal (OSC 52). Not every "
                       "terminal accepts it (tmux needs set-clipboard on): /copy FILE writes it to a file.",
                       highlight=False, markup=False)  # fmt: skip


def _copy_to_file(repl: Repl, name: str, reply: str) -> None:
    """The reply written to a file that does not exist yet (one line says why not)."""
    from pathlib import Path

    from golem_cli.cli.render.terminal_text import visible

    path = Path(name).expanduser()
    shown = visible(str(path))
    try:
        with path.open("x", encoding="utf-8") as f:
            f.write(reply if reply.endswith("\n") else reply + "\n")
    except FileExistsError:
        said = f"{shown} exists: /copy writes only a new file."
    except OSError as e:
        said = f"Cannot write {shown}: {e.strerror}."
    else:
        said = f"Wrote the last reply to {shown}."
    repl.console.print(said, highlight=False, markup=False, soft_wrap=True)  # a path is never broken


async def _model(repl: Repl, arg: str) -> None:
    if not arg:
        repl.console.print(f"model {repl.session.model.name}", highlight=False, markup=False)
        return
    from golem_cli.cli.model_choice import choose_model, close_model
    from golem_cli.core.errors import GolemError

    try:
        choice = choose_model(arg)
    except GolemError as e:
        _error(repl, e)
        return
    refused = repl.session.refused_options(choice.model)
    old = repl.session.model
    repl.session.set_model(choice.model)
    await close_model(old)
    repl.console.print(f"Model is now {choice.model.name}.", highlight=False, markup=False)
    if refused:
        await _refused_options(repl, choice.model.name, refused)


async def _refused_options(repl: Repl, model: str, refused: list[tuple[str, str]]) -> None:
    """Options of this chat the new model refuses: said, then dropped or kept as the person
    answers (without a terminal to ask, dropped); kept, the next prompt is refused unsent."""
    import msgspec

    from golem_cli.cli.render.terminal_text import visible

    names = ", ".join(name for name, _ in refused)
    for name, why in refused:
        repl.console.print(f"{model} refuses {name}: {visible(why)}", style="yellow", highlight=False, markup=False)
    keep = False
    if not repl.plain_input:
        from prompt_toolkit import PromptSession

        answer = await PromptSession[str]().prompt_async(f"Drop {names} for this chat? [Y/n] › ", handle_sigint=False)
        keep = answer.strip().lower() in ("n", "no")
    if keep:
        repl.console.print(f"Kept {names}: the next prompt is refused until /option {refused[0][0]} unsets it.",
                           highlight=False, markup=False)  # fmt: skip
        return
    repl.session.options = msgspec.structs.replace(repl.session.options, **{name: None for name, _ in refused})
    repl.console.print(f"Dropped {names} (/option NAME VALUE sets one again).", highlight=False, markup=False)


async def _system(repl: Repl, arg: str) -> None:
    """``/system`` alone shows the prompt (as ``/model`` and ``/option`` do; it used to clear it,
    a surprise for anyone who typed it to look); ``/system clear`` removes it."""
    if not arg:
        current = repl.session.system
        if not current:
            repl.console.print("No system prompt. /system TEXT sets one.")
            return
        repl.console.print("System prompt:", highlight=False)
        repl.console.print(current, highlight=False, markup=False)
        repl.console.print("[dim]/system TEXT replaces it, /system clear removes it.[/dim]")
        return
    cleared = arg == "clear"
    repl.session.set_system("" if cleared else arg)
    repl.console.print("System prompt cleared." if cleared else "System prompt set.")


def _trim_words(arg: str) -> tuple[int, bool, int | None]:
    """``N [tokens] [stride K]`` as (N, tokens, K); N is 0 when the words are not that."""
    words = arg.split()
    stride: int | None = None
    if len(words) >= 3 and words[-2] == "stride":
        stride = int(words[-1]) if words[-1].isdigit() else 0
        words = words[:-2]
    tokens = len(words) == 2 and words[1] in ("tokens", "token")
    n = int(words[0]) if words and words[0].isdigit() and (len(words) == 1 or tokens) else 0
    return (0 if stride == 0 else n), tokens, stride


async def _trim(repl: Repl, arg: str) -> None:
    session = repl.session
    n, tokens, stride = _trim_words(arg)
    if n < 1 or (stride is not None and not tokens and stride >= n):
        now = f"{session.context_tokens} tokens" if session.context_tokens else f"{session.max_messages} messages"
        now += f", stride {session.trim_stride}" if session.trim_stride > 1 else ""
        repl.console.print(f"Usage: /trim N (messages) or /trim N tokens (N >= 1), then stride K (below N); now {now}.")
        return
    if stride is not None:
        session.trim_stride = stride
    steps = f", cut in steps of {session.trim_stride}" if session.trim_stride > 1 else ""
    if tokens:
        session.context_tokens = n
        repl.console.print(f"Each run now sends at most about {n} tokens of history{steps}; the file keeps it all.")
        return
    session.max_messages, session.context_tokens = n, None
    repl.console.print(f"Each run now sends at most the newest {n} messages{steps}; the file keeps them all.")


async def _option(repl: Repl, arg: str) -> None:
    import msgspec

    from golem_cli.core.errors import GolemError
    from golem_cli.core.model import ModelSettings
    from golem_cli.providers.options import OPTIONS, describe, settings_from

    session = repl.session
    key, _, value = arg.partition(" ")
    if not key:
        mine = describe(session.options)
        configured = describe(getattr(session.model, "defaults", ModelSettings()))
        repl.console.print("Options for this chat: " + ("; ".join(mine) or "none") + ".", markup=False)
        if configured:
            repl.console.print("From the config file: " + "; ".join(configured) + ".", markup=False)
        usage = "Usage: /option NAME VALUE, /option NAME (unset), /option clear. Names: " + ", ".join(OPTIONS)
        repl.console.print(usage + ".", markup=False, highlight=False)
        return
    if key == "clear":
        session.options = ModelSettings()
        repl.console.print("Options cleared.")
        return
    try:
        if not value.strip():
            if key not in OPTIONS:
                settings_from([(key, "")], "in /option")  # says which names there are
            updated = msgspec.structs.replace(session.options, **{key: None})
        else:
            updated = settings_from([(key, value.strip())], "in /option", session.options)
            if key == "stop":  # /option stop X replaces, it does not add to earlier stops
                updated = msgspec.structs.replace(updated, stop=(value.strip(),))
            check = getattr(session.model, "check_settings", None)
            if check is not None:
                check(updated)
    except GolemError as e:
        _error(repl, e)
        return
    session.options = updated
    shown = "; ".join(describe(updated)) or "none"
    repl.console.print(f"Options for this chat: {shown}.", markup=False, highlight=False)


async def _history(repl: Repl, arg: str) -> None:
    from golem_cli.cli.render.transcript import print_rich

    words = arg.split()
    if not repl.session.history:
        repl.console.print("Nothing said yet.")
        return
    from golem_cli.cli.render.summary_marks import marks
    from golem_cli.store.sidecars.ledger import answered

    session = repl.session
    found = marks(session.history, session.compactor.summaries()) if not session.skipped else {}
    print_rich(repl.console, session.history, run_ids="--run-ids" in words, full="--full" in words,
               answered=answered(session.runs()), marks=found)  # fmt: skip


async def _normalize(repl: Repl, arg: str) -> None:
    before, repair = repl.session.normalize()
    for line in report_lines(before, repl.session.history, repair, every_note=True) or ["Nothing to repair."]:
        repl.console.print(line, markup=False, highlight=False)


async def _retry(repl: Repl, arg: str) -> None:
    if not await repl.tool_servers_ready():  # before the rewind, so a stopped wait changes nothing
        return
    rewound = repl.session.rewind_for_retry()
    if rewound is None:
        repl.console.print("Nothing to retry yet.")
        return
    prompt, kept = rewound
    if kept:
        repl.console.print(f"[dim]The previous reply is kept in conversation[/dim] {repl.id_markup(kept, hint=True)}.")
    await repl.ask(prompt.content, prompt.parts)


async def _attach(repl: Repl, arg: str) -> None:
    from golem_cli.cli.attach import describe, fetch_for, part_from
    from golem_cli.core.errors import GolemError

    if not arg:
        shown = ", ".join(describe(p) for p in repl.attachments) or "nothing"
        repl.console.print(
            f"Attached to your next prompt: {shown}. Usage: /attach PATH|URL|@SERVER:URI", highlight=False, markup=False
        )
        return
    if arg.startswith("@"):  # a tool server's resource, @SERVER:URI
        from golem_cli.cli.repl.resources import attach

        await attach(repl, arg)
        return
    try:
        (part,) = fetch_for(repl.session.model, [part_from(arg)])  # downloaded if the provider cannot
    except GolemError as e:
        _error(repl, e)
        return
    repl.attachments.append(part)
    repl.console.print(f"Attached {describe(part)} to your next prompt.", highlight=False, markup=False)


async def _title(repl: Repl, arg: str) -> None:
    """``/title`` alone shows the title (as ``/model`` and ``/system`` show theirs)."""
    if not arg:
        from golem_cli.cli.render.terminal_text import visible

        meta = repl.session.store.meta(repl.session.conversation_id)
        if meta.title:
            repl.console.print(f"Title: {visible(meta.title)}", highlight=False, markup=False)
        else:
            shown = f' (until then it is listed as "{visible(meta.display_title)}")' if meta.display_title else ""
            repl.console.print(f"No title yet{shown}. /title TEXT names it.", highlight=False, markup=False)
        return
    repl.session.store.set_title(repl.session.conversation_id, arg)
    repl.console.print(f"Title set: {arg}", highlight=False, markup=False)


async def _tools(repl: Repl, arg: str) -> None:
    from golem_cli.core.errors import GolemError
    from golem_cli.tools.rules import split_rules

    action, _, rest = arg.partition(" ")
    names = split_rules(rest)
    if not await repl.tool_servers_ready():
        return
    box = _toolbox(repl)
    if box is None:
        return
    if action == "rules" and not names:
        _print_rules(repl, box)
        return
    if action in _TOOL_ACTIONS and names:
        try:
            said = await _TOOL_ACTIONS[action](repl, box, names)
        except GolemError as e:
            _error(repl, e)
        else:
            repl.console.print(said, highlight=False, markup=False)
        return
    if arg:
        repl.console.print("Usage: /tools [enable|disable|allow|deny NAME...], /tools rules, /tools forget RULE  "
                           "(names, groups fs, shell, web, all, a tool server's name, or TOOL(PATTERN))")  # fmt: skip
        return
    from golem_cli.cli.commands.tools import tool_rows
    from golem_cli.cli.render.terminal_text import visible

    for row in tool_rows(box, width=repl.console.width):  # a server's reason is its own text: shown safely
        repl.console.print(visible(row), highlight=False, markup=False, soft_wrap=True)
    lines = ["/tools enable NAME, /tools disable NAME, /tools allow RULE, /tools deny RULE, /tools rules", TOOLS_LEGEND]
    for line in lines if box.enabled else [*lines, NOTHING_ENABLED]:
        repl.console.print(line, highlight=False, markup=False)


def _toolbox(repl: Repl) -> Toolbox | None:
    """The chat's toolbox, built on first use (None, said, when the chat cannot have one)."""
    from golem_cli.core.errors import GolemError

    if repl.session.toolbox is not None:
        return repl.session.toolbox
    if repl.tools is None:
        repl.console.print("Tools are not available in this chat.")
        return None
    try:
        box = repl.tools.ensure()
    except GolemError as e:
        _error(repl, e)
        return None
    repl.session.toolbox = box
    return box


async def _enable(repl: Repl, box: Toolbox, names: list[str]) -> str:
    changed = [e.name for e in box.enable(names)]
    if box.waiting:  # names of tool servers: start them now
        before = set(box.tools())
        await repl.start_tool_servers()
        changed += [t.name for t in box.tools() if t not in before]
    return f"Enabled: {', '.join(changed) or 'nothing new'}."


async def _disable(repl: Repl, box: Toolbox, names: list[str]) -> str:
    return f"Disabled: {', '.join(e.name for e in box.disable(names)) or 'nothing'}."


async def _allow(repl: Repl, box: Toolbox, names: list[str]) -> str:
    """Which tools now run without asking, and which of them the model cannot use yet."""
    allowed = box.approvals.allow(names)
    waiting = ", ".join(box.approvals.waiting)
    said = f"Run without asking: {', '.join(allowed) or 'nothing yet'}."
    off = sorted({e.group for e in box.registry.entries() if e.name in allowed and not box.is_enabled(e.name)})
    if off:
        said += f" Not enabled in this chat: /tools enable {' '.join(off)} lets the model use them."
    return said + (f" (Waiting for their tool server: {waiting}.)" if waiting else "")


async def _deny(repl: Repl, box: Toolbox, names: list[str]) -> str:
    return f"Never run: {', '.join(box.approvals.deny(names)) or 'nothing'}."


async def _forget(repl: Repl, box: Toolbox, names: list[str]) -> str:
    gone = [name for name in names if box.approvals.forget(name)]
    missing = [name for name in names if name not in gone]
    said = f"Removed: {', '.join(gone)}." if gone else ""
    return (said + (f" No such rule: {', '.join(missing)} (/tools rules lists them)." if missing else "")).strip()


def _print_rules(repl: Repl, box: Toolbox) -> None:
    """The rules in force in this chat, deny first; how to remove one."""
    from golem_cli.cli.render.terminal_text import visible

    rules = box.approvals.rule_list()
    if not rules:
        repl.console.print("No rules: every call that needs approval asks. /tools allow RULE adds one.")
        return
    for verdict, text in rules:
        repl.console.print(f"  {verdict:<5}  {visible(text)}", highlight=False, markup=False, soft_wrap=True)
    if box.approvals.yes:
        repl.console.print("  --yes: every other call runs without asking", highlight=False, markup=False)
    repl.console.print("/tools forget RULE removes one for this chat.", highlight=False, markup=False)


TOOLS_LEGEND = "* enabled here · runs: at once · asks: you approve each call · allowed: runs without asking"
NOTHING_ENABLED = "Nothing is enabled in this chat yet."

_TOOL_ACTIONS: dict[str, Callable[[Repl, Toolbox, list[str]], Awaitable[str]]] = {
    "enable": _enable,
    "disable": _disable,
    "allow": _allow,
    "deny": _deny,
    "forget": _forget,
}


async def _exit(repl: Repl, arg: str) -> str:
    return EXIT


async def _undo(repl: Repl, arg: str) -> None:
    from golem_cli.cli.repl.rewind import undo

    await undo(repl, arg)


async def _rewind(repl: Repl, arg: str) -> None:
    from golem_cli.cli.repl.rewind import rewind

    await rewind(repl, arg)


COMMANDS: dict[str, tuple[str, str]] = {
    "/help": ("/help", "this list"),
    "/ids": ("/ids", "conversation ID, last run ID and the file"),
    "/fork": ("/fork", "continue in a copy of this conversation (lineage is recorded)"),
    "/new": ("/new", "start a new conversation (same model, options and tools) without leaving"),
    "/copy": ("/copy [FILE]", "copy the last reply (to the clipboard through the terminal, or to a new FILE)"),
    "/model": ("/model [NAME]", "show or switch the model (provider:model)"),
    "/system": ("/system [TEXT|clear]", "show, set or clear the system prompt"),
    "/trim": (
        "/trim N [tokens] [stride K]",
        "send at most the newest N messages (or about N tokens) per run, the cut in steps of K",
    ),
    "/option": ("/option [NAME [VALUE]]", "show, set or unset a model option (temperature, max_tokens...)"),
    "/history": ("/history [--run-ids] [--full]", "show the conversation so far (--full: tool results whole)"),
    "/normalize": ("/normalize", "repair this conversation and report what changed"),
    "/retry": ("/retry", "ask the last prompt again (an old reply is kept in a fork)"),
    "/undo": ("/undo", "back to before the last turn, the files its tools changed put back (kept in a fork)"),
    "/rewind": ("/rewind [N]", "list the turns, or go back to before turn N as /undo does"),
    "/attach": ("/attach PATH|URL|@SERVER:URI", "attach a file, or a tool server's resource, to your next prompt"),
    "/title": ("/title [TEXT]", "show or set this conversation's name"),
    "/compact": ("/compact [FOCUS|undo]", "summarise the history before the newest messages (the file keeps them)"),
    "/summary": ("/summary [edit]", "show the summary sent instead of older messages, or edit it"),
    "/tools": ("/tools [enable|disable|allow NAME]", "list the tools, turn them on or off, allow one without asking"),
    "/context": ("/context", "what the next request carries, in tokens, against the context window"),
    "/cost": ("/cost", "this conversation's runs by model: requests, tokens, cost"),
    "/SERVER:PROMPT": ("/SERVER:PROMPT [ARG=VALUE...]", "send a tool server's prompt (golem mcp prompts lists them)"),
    "/exit": ("/exit", "leave (Ctrl-D works too)"),
}
HANDLERS: dict[str, Handler] = {
    "/help": _help, "/ids": _ids, "/fork": _fork, "/new": _new, "/copy": _copy, "/model": _model, "/system": _system,
    "/trim": _trim, "/option": _option, "/history": _history, "/normalize": _normalize, "/retry": _retry,
    "/attach": _attach, "/title": _title, "/tools": _tools, "/context": _context, "/cost": _cost,
    "/exit": _exit, "/quit": _exit,
    "/undo": _undo, "/rewind": _rewind, "/compact": compact.compact, "/summary": compact.summary,
}  # fmt: skip
NAMES = [name for name in COMMANDS if name != "/SERVER:PROMPT"]


async def dispatch(repl: Repl, line: str) -> str | None:
    name, _, arg = line.strip().partition(" ")
    handler = HANDLERS.get(name)
    if handler is None:
        from golem_cli.cli.repl import prompts

        if prompts.is_prompt(name):  # a tool server's prompt, /SERVER:PROMPT
            await prompts.run(repl, name, arg.strip())
            return None
        repl.console.print(f"Unknown command {name}; /help lists them.", highlight=False, markup=False)
        return None
    return await handler(repl, arg.strip())
