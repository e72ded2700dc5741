"""``golem tools``: every tool a chat can enable, with its source, group, whether its calls
ask first, and what it does; the configured tool servers are started to list theirs (and
stopped again). ``/tools`` in the REPL shows the same rows with the ones enabled in this chat
marked, and a row for each tool server not started."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand

if TYPE_CHECKING:
    from golem_cli.tools.registry import ToolEntry
    from golem_cli.tools.toolbox import Toolbox

app = typer.Typer()


def _approval(entry: ToolEntry, box: Toolbox | None = None) -> str:
    if box is not None and entry.name in box.approvals.denied:
        return "denied"
    if box is not None and not box.approvals.needs_question(entry):
        return "runs" if not entry.needs_approval else "allowed"
    return "asks" if entry.needs_approval else "runs"


def tool_rows(box: Toolbox, *, header: bool = False, width: int | None = None) -> list[str]:
    """One line per tool: enabled mark, name, group, source, approval, summary (under a line
    naming the columns, with ``header``); then one per tool server that is not running. With
    ``width`` (a terminal's), each tool's row is shown as a terminal shows it (``visible``) and
    cut to fit with an ellipsis: a wrapped row would break the table's columns. A server's row
    says why it did not start, so it is left whole (the terminal shows it safely anyway)."""
    entries = box.registry.entries()
    idle = [s for s in box.servers() if not s.started]
    names = max([len(e.name) for e in entries] + [len(s.group) for s in idle])
    group_width = max(len(e.group) for e in entries)
    rows = []
    if header and entries:
        rows.append(f"  {'NAME':<{names}}  {'GROUP':<{group_width}}  {'SOURCE':<12}  {'CALLS':<7}  WHAT IT DOES")
    for e in entries:
        mark = "*" if box.is_enabled(e.name) else " "
        source = e.source if len(e.source) <= 12 else e.source[:11] + "…"
        rows.append(f"{mark} {e.name:<{names}}  {e.group:<{group_width}}  {source:<12}  "
                    f"{_approval(e, box):<7}  {e.summary[:120]}")  # fmt: skip
    if width is not None:
        rows = [fit(row, width) for row in rows]
    for s in idle:  # whole, after the table: why a server did not start is worth its lines
        state = f"did not start: {s.problem}" if s.problem else f"not started (/tools enable {s.group})"
        rows.append(f"  {s.group:<{names}}  tool server, {state}")
    return rows


def fit(row: str, width: int) -> str:
    """``row`` as the terminal shows it, at most ``width`` cells (cut with an ellipsis)."""
    from rich.cells import cell_len, set_cell_size

    from golem_cli.cli.render.terminal_text import visible

    row = visible(row).rstrip()
    if cell_len(row) <= width:
        return row
    return set_cell_size(row, max(width - 1, 0)) + "…"


@app.command("tools", cls=GolemCommand, rich_help_panel="Chat")
def list_tools(
    what: Annotated[str | None, typer.Argument(metavar="[rules]", help="rules: list the allow and deny rules.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tools as JSON.")] = False,
) -> int:
    """List the tools a chat can use, or the rules (`rules`).

    -T NAME enables them in a chat."""
    import asyncio
    import shutil
    import sys

    from golem_cli.cli.render.console import out, print_json
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.cli.tools.servers import start
    from golem_cli.config.settings import load_settings

    if what is not None:
        return _rules(what, as_json)
    box = ToolChoice(load_settings()).ensure()  # what every chat starts with, checked the same way
    problems: list[str] = []

    async def start_all() -> None:
        try:
            await start(box, lambda line, problem: problems.append(line) if problem else None, box.servers())
        finally:
            await box.close()

    if box.servers():
        asyncio.run(start_all())
    if as_json:
        print_json([
            {"name": e.name, "group": e.group, "source": e.source, "ownName": e.own_name or e.name,
             "needsApproval": e.needs_approval, "destructive": e.destructive,
             "allowed": e.name in box.approvals.allowed, "enabledByConfig": box.is_enabled(e.name),
             "description": e.tool.description}
            for e in box.registry.entries()
        ])  # fmt: skip
    else:
        columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        for row in tool_rows(box, header=True, width=columns):  # a pipe gets whole rows
            out(row)
        out("")
        for line in _legend(box, width=columns):
            out(line)
    from golem_cli.cli.render.console import note

    for line in problems if as_json else ():  # the table has a row for each server that failed
        note(f"golem: {line}")
    return 0


def _legend(box: Toolbox, *, width: int | None) -> list[str]:
    """Where the tools work and how to enable and approve them, wrapped at words to a
    terminal's ``width`` (left to the terminal they broke words: "the cu" / "rrent directory"),
    a paragraph a line in a pipe."""
    import textwrap

    servers = {s.group for s in box.servers()}
    groups = ", ".join(sorted(g for g in box.registry.groups() if g not in servers))
    paragraphs = [
        f"* enabled in every chat (tools = [...] in config.toml). Enable more with -T NAME or a group: {groups}, "
        "all, or a tool server's name (-T SERVER.TOOL for one of its tools). 'asks' tools run after you approve "
        "each call (y once, a always for this tool, n deny); --allow NAME or --yes approve without asking."
    ]
    root = getattr(box.registry.sources[0], "root", None)
    if root is not None:
        where = f"File tools and commands work in {root.path} (tool_root in config.toml, else the current directory)."
        paragraphs.insert(0, where)
    if width is None:
        return paragraphs
    lines: list[str] = []
    for paragraph in paragraphs:
        lines += textwrap.wrap(paragraph, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    return lines


def _rules(what: str, as_json: bool) -> int:
    """``golem tools rules``: the rules config.toml holds, deny first, and where to change them."""
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render.console import out, print_json
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.config.settings import load_settings

    if what != "rules":
        raise InputError(f"golem tools takes no {what!r}; `golem tools rules` lists the rules")
    settings = load_settings()
    rules = ToolChoice(settings).ensure().approvals.rule_list()  # checked as a chat checks them
    where = settings.source or "config.toml"
    if as_json:
        print_json([{"verdict": verdict, "rule": text, "from": where} for verdict, text in rules])
        return 0
    for verdict, text in rules:
        out(f"{verdict:<5}  {text}")
    if not rules:
        out("No rules: every call that needs approval asks.")
    out(f"From {where} (allow = [...], deny = [...]): edit it to add or remove one; in a chat, /tools rules")
    out("lists this chat's, /tools allow RULE, /tools deny RULE and /tools forget RULE change them.")
    return 0
