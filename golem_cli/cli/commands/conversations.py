"""``golem list``, ``golem show``, ``golem delete`` and ``golem restore``: finding and reading
stored conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.options import ConversationId

if TYPE_CHECKING:
    from rich.text import Text

    from golem_cli.store import ConversationInfo, ConversationMeta, Listing, Store

PANEL = "Conversations"
app = typer.Typer()
TITLE_WIDTH = 60
MODEL_WIDTH = 24
MIN_TITLE = 12  # a title narrower than this is no use: the model column goes first
GAP = 2  # the space rich puts between two columns


# --- list ------------------------------------------------------------------------------------


@app.command("list", cls=GolemCommand, rich_help_panel=PANEL)
def list_conversations(
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", min=0, help="How many to show (0: all).")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    tree: Annotated[bool, typer.Option("--tree", help="Show forks under the conversation they came from.")] = False,
) -> int:
    """List conversations, newest first."""
    from golem_cli.cli.common import open_store
    from golem_cli.cli.render import console

    store = open_store()
    listing = store.listing(None if (limit == 0 or tree) else limit)
    rows = _tree_rows(listing, limit) if tree else [(0, info) for info in listing.conversations]
    if as_json:
        console.print_json([_info_json(info, depth if tree else None) for depth, info in rows])
        return 0
    unreadable = dict(store.unreadable()) | {info.id: info.problem for _, info in rows if info.problem}
    rows = [(depth, info) for depth, info in rows if not info.problem]
    _print_rows(rows, listing, tree)
    warn_unreadable(store, unreadable)
    _say_what_is_not_shown(store, listing, len(rows), unreadable, tree=tree)
    return 0


def _print_rows(rows: list[tuple[int, ConversationInfo]], listing: Listing, tree: bool) -> None:
    """The rows as a table on a terminal, as plain lines in a pipe; IDs as short as they can be."""
    from golem_cli.cli.render import console
    from golem_cli.store.refs import short_id_length

    width = short_id_length(listing.neighbours, (info.id for _, info in rows))
    if console.styled():
        _print_table(rows, width, tree, listing.neighbours)
        return
    for depth, info in rows:
        console.out(_plain_row(depth, info, width))


def _say_what_is_not_shown(
    store: Store, listing: Listing, shown: int, unreadable: dict[str, str], *, tree: bool
) -> None:
    """On stderr (stdout stays the rows, for scripts): that there is nothing yet, that the
    limit left some out, which files in the store are not conversations."""
    from golem_cli.cli.render import console

    if not listing.total:
        console.note("no conversations yet; start one with `golem chat` (or `golem ask PROMPT`)")
    total = listing.total - len(unreadable)
    if not tree and shown < total:
        console.note(f"{shown} of {total} conversations shown (--limit 0 shows all)")
    named = {store.messages_path(cid).name for cid in unreadable}  # already warned about, once is enough
    foreign = [name for name in listing.foreign if name not in named]
    if foreign:
        names = ", ".join(foreign[:5]) + (" …" if len(foreign) > 5 else "")
        console.note(f"ignored {len(foreign)} file(s) in {store.conversations_dir} that are not conversations: {names}")


def warn_unreadable(store: Store, problems: dict[str, str]) -> None:
    """One line per conversation file that cannot be read (skipped by list and search)."""
    from golem_cli.cli.render import console
    from golem_cli.cli.render.short_ids import handle

    for cid, problem in sorted(problems.items()):
        short = handle(cid)
        fix = f"`golem delete {short}` removes it"
        if problem.startswith(("invalid JSON", "not a golem history")):  # cut off or damaged: messages remain
            fix = f"`golem normalize --salvage {short} --in-place` keeps its complete messages, {fix}"
        console.note(f"skipped {store.messages_path(cid)}: {problem} ({fix})")


def _tree_rows(listing: Listing, limit: int) -> list[tuple[int, ConversationInfo]]:
    """Depth-first rows: roots (no parent, or a parent that is gone) newest first, each
    followed by its forks in fork order."""
    by_id = {info.id: info for info in listing.conversations}
    children: dict[str, list[ConversationInfo]] = {}
    roots = []
    for info in listing.conversations:
        parent = info.meta.parent
        if parent and parent in by_id and parent != info.id:
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    if limit:
        roots = roots[:limit]
    rows: list[tuple[int, ConversationInfo]] = []
    seen: set[str] = set()

    def walk(info: ConversationInfo, depth: int) -> None:
        if info.id in seen:  # a lineage cycle in hand-edited metadata
            return
        seen.add(info.id)
        rows.append((depth, info))
        for child in sorted(children.get(info.id, []), key=lambda c: (c.meta.fork_at, c.meta.created)):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    return rows


def _title(info: ConversationInfo) -> str:
    if info.problem:
        return f"[unreadable: {info.problem}]"
    return info.meta.display_title or "(empty)"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _plain_row(depth: int, info: ConversationInfo, width: int) -> str:
    from golem_cli.cli.render.console import local_time

    m = info.meta
    lineage = f"{'  ' * depth}└ @{m.fork_at} " if depth else ""
    count = "?" if info.problem else str(m.messages)
    model = _clip(m.model or "-", MODEL_WIDTH)
    return (
        f"{m.id[:width]}  {local_time(m.updated)}  {count:>5}  {model:<24}  {lineage}{_clip(_title(info), TITLE_WIDTH)}"
    )


def _print_table(rows: list[tuple[int, ConversationInfo]], width: int, tree: bool, neighbours: list[str]) -> None:
    """The listing as a table that fits the terminal: the title gives way first, then the
    model and the date columns; the ID (what one types) and the count never do. (rich, left
    to itself, shrinks every column evenly: ``01a…`` and no count at 80 columns.)"""
    from rich.cells import cell_len
    from rich.table import Table

    from golem_cli.cli.render.console import rich_console

    cells = [_cells(depth, info, width, tree, neighbours) for depth, info in rows]
    widths = [max([len(header)] + [cell_len(str(row[i])) for row in cells]) for i, header in enumerate(HEADERS)]
    console = rich_console()
    shown = _columns_that_fit(widths, console.width)
    table = Table(box=None, pad_edge=False, header_style="bold")
    for i in shown:
        table.add_column(HEADERS[i], no_wrap=True, overflow="ellipsis", style="dim" if HEADERS[i] == "Model" else None,
                         justify="right" if HEADERS[i] == "Msgs" else "left")  # fmt: skip
    room = max(console.width - sum(widths[i] + GAP for i in shown), 1)
    table.add_column("Title", no_wrap=True, overflow="ellipsis", max_width=room)
    for row in cells:
        table.add_row(*(row[i] for i in shown), row[4])
    console.print(table)


HEADERS = ["ID", "Updated", "Msgs", "Model", "Title"]


def _cells(depth: int, info: ConversationInfo, width: int, tree: bool, neighbours: list[str]) -> list[Text | str]:
    """One row of the table: the ID with the part to type highlighted, the date, the count, the
    model and the title (a fork's under its parent with where it forked, in a tree)."""
    from rich.text import Text

    from golem_cli.cli.render.console import local_time
    from golem_cli.cli.render.short_ids import markup
    from golem_cli.store.refs import unique_prefix_among

    m = info.meta
    title = Text(no_wrap=True, overflow="ellipsis")
    if tree and depth:
        title.append(f"{'  ' * (depth - 1)}└ @{m.fork_at} ", style="dim")
    title.append(_clip(_title(info), TITLE_WIDTH), style="red" if info.problem else "")
    short = Text.from_markup(markup(m.id, unique_prefix_among(neighbours, m.id), width))
    count = "?" if info.problem else str(m.messages)
    return [short, local_time(m.updated), count, _clip(m.model or "-", MODEL_WIDTH), title]


def _columns_that_fit(widths: list[int], room: int) -> list[int]:
    """The columns before the title that leave it room: the model goes first, then the date."""
    shown = [0, 1, 2, 3]
    for column in (3, 1):
        if room - sum(widths[i] + GAP for i in shown) >= MIN_TITLE:
            break
        shown.remove(column)
    return shown


def _info_json(info: ConversationInfo, depth: int | None) -> dict[str, object]:
    out = _meta_json(info.meta)
    out["problem"] = info.problem or None
    if depth is not None:
        out["depth"] = depth
    return out


def _meta_json(m: ConversationMeta) -> dict[str, object]:
    from golem_cli.cli.render.console import iso_time

    return {
        "id": m.id,
        "title": m.display_title,
        "model": m.model or None,
        "messages": m.messages,
        "created": iso_time(m.created),
        "updated": iso_time(m.updated),
        "parent": m.parent or None,
        "forkAt": m.fork_at if m.parent else None,
    }


# --- show ------------------------------------------------------------------------------------


@app.command("show", cls=GolemCommand, rich_help_panel=PANEL)
def show(
    ref: ConversationId,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metadata and the messages as JSON.")] = False,
    run_ids: Annotated[bool, typer.Option("--run-ids", help="Show which run added each message.")] = False,
    full: Annotated[
        bool, typer.Option("--full", help="Show tool calls' arguments and results whole (else their first lines).")
    ] = False,
) -> int:
    """Show a conversation's transcript.

    Markdown replies, tool calls and results, and markers for interrupted replies,
    calls that never got a result, and failed tools."""
    import sys

    from golem_cli.cli.common import open_store
    from golem_cli.cli.render import console, transcript
    from golem_cli.cli.render.summary_marks import stored_marks

    store = open_store()
    cid = store.resolve(ref)
    messages = store.read(cid)  # never saved: decoded as the file is read
    meta = store.meta(cid)
    from golem_cli.store.sidecars.ledger import answered, runs_of

    by = answered(runs_of(store, cid))  # which model wrote each reply, and when
    if as_json:
        import json

        from golem_cli.core.codec.history import drain_chunks

        head = json.dumps({"id": cid, "meta": _meta_json(meta)}, ensure_ascii=False)[:-1]
        sys.stdout.flush()
        out = sys.stdout.buffer
        out.write(head.encode() + b', "messages": ')
        for chunk in drain_chunks(messages):  # each batch freed once written
            out.write(chunk)
        out.write(b"}\n")
        return 0
    marks = stored_marks(store, cid, messages)  # where each summary starts (ADR 0032)
    if console.styled():
        con = console.rich_console()
        lines = transcript.header_lines(meta, cid, messages)
        from golem_cli.cli.render.short_ids import markup

        con.print(f"[bold]{_escape(lines[0])}[/]")
        con.print(f"[dim]id[/] {markup(cid, store.unique_prefixes([cid])[cid])}")  # lines[1] is "id CID"
        for line in lines[2:]:
            con.print(f"[dim]{_escape(line)}[/]")
        con.print()
        transcript.print_rich(con, messages, run_ids=run_ids, full=full, answered=by, marks=marks)
        return 0
    write = sys.stdout.write
    for line in transcript.header_lines(meta, cid, messages):
        write(line + "\n")
    write("\n")
    for line in transcript.plain_lines(messages, run_ids=run_ids, full=full, answered=by, marks=marks):
        write(line + "\n")
    return 0


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# --- delete ----------------------------------------------------------------------------------


@app.command("delete", cls=GolemCommand, rich_help_panel=PANEL)
def delete(
    ref: ConversationId,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> int:
    """Move a conversation to the trash (asks first).

    `golem restore` brings it back for 30 days."""
    # Saying that its forks lose their parent, and how to get it back, is part of the question
    # and of the answer.
    import sys

    from golem_cli.cli.common import open_store
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render import console
    from golem_cli.store.store import TRASH_DAYS

    store = open_store()
    cid = store.resolve(ref)
    info = store.info(cid)
    forks = [row.id for row in store.list() if row.meta.parent == cid and row.id != cid]
    orphans = (
        "its fork will keep its messages but lose its parent"
        if len(forks) == 1
        else f"its {len(forks)} forks will keep their messages but lose their parent"
        if forks
        else ""
    )
    if not yes:
        if not sys.stdin.isatty():
            raise InputError(f"not deleting {cid} without confirmation: pass --yes (stdin is not a terminal)")
        what = f"{_clip(_title(info), 50)!r}, {info.meta.messages} messages"
        warning = f"; {orphans}" if orphans else ""
        from golem_cli.cli.render.terminal_text import visible

        answer = input(visible(f"Delete conversation {cid} ({what}){warning}? [y/N] "))
        if answer.strip().lower() not in ("y", "yes"):
            console.note("not deleted")
            return 1
    store.discard(cid)
    if as_json:
        console.print_json({"deleted": cid, "forks": forks, "restore": f"golem restore {cid}"})
        return 0
    console.out(f"deleted {cid}")
    if orphans and yes:
        console.note(orphans[0].upper() + orphans[1:])
    console.note(f"`golem restore` brings it back (deleted conversations are kept {TRASH_DAYS} days)")
    return 0


@app.command("restore", cls=GolemCommand, rich_help_panel=PANEL)
def restore(
    ref: Annotated[
        str | None,
        typer.Argument(metavar="ID", help="The deleted conversation: its ID, or the start or the end of it."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> int:
    """Bring back a deleted conversation.

    The last one deleted, unless ID names another."""
    from golem_cli.cli.common import open_store
    from golem_cli.cli.render import console

    cid = open_store().restore(ref)
    if as_json:
        console.print_json({"restored": cid})
    else:
        console.out(f"restored {cid}")
    return 0
