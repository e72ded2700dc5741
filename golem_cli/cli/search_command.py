"""``golem search TEXT``: which conversations mention something, with the line that does."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

PANEL = "Conversations"


def register(app: typer.Typer) -> None:
    import typer

    @app.command("search", rich_help_panel=PANEL)
    def search_command(
        query: str = typer.Argument(..., help="Text to look for (case-insensitive)."),
        limit: int = typer.Option(20, "--limit", "-n", min=0, help="How many conversations to show (0: all)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Find conversations that mention TEXT, newest first."""
        raise typer.Exit(search(query, limit, as_json=as_json))


def search(query: str, limit: int = 20, *, as_json: bool = False) -> int:
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
