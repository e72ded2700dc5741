"""``golem search TEXT``: which conversations mention something, with the line that does."""

from __future__ import annotations

from golem_cli.cli.command import Argument, Command, Option

PANEL = "Conversations"


def search(*, query: str, limit: int, as_json: bool) -> int:
    from golem_cli.cli import console
    from golem_cli.cli.common import open_store
    from golem_cli.cli.errors import InputError
    from golem_cli.store.search import search as find

    if not query.strip():
        raise InputError("give some text to search for")
    hits = find(open_store(), query, limit or None)
    if as_json:
        console.print_json([hit.to_json() for hit in hits])
        return 0
    for hit in hits:
        title = hit.meta.display_title[:40]
        console.out(f"{hit.meta.id[:13]}  {console.local_time(hit.meta.updated)}  {title}")
        console.out(f"    #{hit.message_index} {hit.role}: {hit.snippet}")
    if not hits:
        console.note(f"no conversation mentions {query!r}")
        return 1
    return 0


COMMANDS = (
    Command("search", search, "Find conversations that mention TEXT, newest first.", PANEL, [
        Argument("query", "TEXT", "Text to look for (case-insensitive)."),
        Option("limit", "--limit", "-n", type=int, default=20, min=0, help="How many conversations to show (0: all)."),
        Option("as_json", "--json", help="Print JSON."),
    ]),
)  # fmt: skip
