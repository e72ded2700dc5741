"""``golem search TEXT``: which conversations mention something, with the line that does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.completion import roles

if TYPE_CHECKING:
    from golem_cli.store import Store
    from golem_cli.store.search import Hit

app = typer.Typer()


ROLES = ("user", "assistant", "system", "tool")


def since_time(text: str, now: float) -> float:
    """Unix time from ``--since``: an ISO 8601 date or time (local time unless it names a
    zone), or an age: a number of minutes (m), hours (h), days (d) or weeks (w)."""
    import re
    from datetime import datetime

    from golem_cli.cli.errors import InputError

    age = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text)
    if age:
        return now - int(age.group(1)) * {"m": 60, "h": 3600, "d": 86400, "w": 604800}[age.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except (ValueError, OverflowError, OSError):
        raise InputError(
            f"--since {text!r}: give a date (2025-06-01), a time (2025-06-01T09:30) or an age (3d, 12h, 2w)"
        ) from None


Query = Annotated[
    str,
    typer.Argument(metavar="TEXT", help='Text to look for (case-insensitive). "a phrase" matches those words in '
                   "order, word* words that start with it; with either, every term must be in one message."),
]  # fmt: skip
Limit = Annotated[
    int, typer.Option("--limit", "-n", metavar="N", min=0, help="How many conversations to show (0: all).")
]
Role = Annotated[
    str | None,
    typer.Option("--role", metavar="ROLE", autocompletion=roles,
                 help="Only messages of this role: user, assistant, system, tool."),
]  # fmt: skip
Since = Annotated[
    str | None,
    typer.Option("--since", metavar="WHEN",
                 help="Only conversations updated since: 2025-06-01, 2025-06-01T09:30, or 3d, 12h, 2w."),
]  # fmt: skip
Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command("search", cls=GolemCommand, rich_help_panel="Conversations")
def search(query: Query, limit: Limit = 20, role: Role = None, since: Since = None, as_json: Json = False) -> int:
    """Find conversations that mention TEXT, newest first."""
    from golem_cli.cli.common import open_store
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render import console

    if not query.strip():
        raise InputError("give some text to search for")
    if role and role not in ROLES:
        raise InputError(f"--role {role!r}: one of {', '.join(ROLES)}")
    import time

    after = since_time(since, time.time()) if since else 0.0
    store = open_store()
    if as_json:
        found = store.search(query, limit or None, role=role or "", since=after)
        _warn(store, dict(found.unreadable))
        console.print_json([
            {"id": hit.meta.id, "title": hit.meta.display_title, "updated": console.iso_time(hit.meta.updated),
             "messageIndex": hit.message_index, "number": hit.number, "role": hit.role, "snippet": hit.snippet,
             "forks": hit.forks}
            for hit in found.hits
        ])  # fmt: skip
        return 0
    unreadable: dict[str, str] = {}
    shown = 0
    for hit in store.search_hits(query, limit or None, role=role or "", since=after, unreadable=unreadable):
        _show(hit)  # each hit as it is found
        shown += 1
    _warn(store, dict(store.unreadable()) | unreadable)
    if not shown:
        console.note(f"no conversation mentions {query!r}")
        return 1
    return 0


def _show(hit: Hit) -> None:
    from golem_cli.cli.render import console
    from golem_cli.cli.render.short_ids import handle

    # each ID as its handle, as the forks line names them: a prefix goes stale
    title = hit.meta.display_title[:40]
    console.out(f"{handle(hit.meta.id)}  {console.local_time(hit.meta.updated)}  {title}")
    # numbered as `golem show` numbers messages, so that `fork --at` takes the number
    where = f"#{hit.number} {hit.role}" if hit.number is not None else "system prompt"
    console.out(f"    {where}: {hit.snippet}")
    if hit.forks:  # the same message, copied into forks: shown once
        console.out(f"    also in {'fork' if len(hit.forks) == 1 else 'forks'} {', '.join(map(handle, hit.forks))}")


def _warn(store: Store, unreadable: dict[str, str]) -> None:
    if unreadable:
        from golem_cli.cli.commands.conversations import warn_unreadable

        warn_unreadable(store, unreadable)
