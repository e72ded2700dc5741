"""``golem usage``: what the runs of every conversation used and cost, from the usage index;
``golem context``: what a conversation's next request carries, in tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.errors import InputError
from golem_cli.cli.options import ChatFlags, ContextTokens, ConversationId, MaxMessages, Model

if TYPE_CHECKING:
    from golem_cli.cli.context import RequestContext
    from golem_cli.store.usage import UsageRow

app = typer.Typer()
PANEL = "Conversations"

Json = Annotated[bool, typer.Option("--json", help="Print the figures as one JSON object.")]


@app.command("context", cls=GolemCommand, rich_help_panel=PANEL)
def context(
    ref: ConversationId,
    as_json: Json = False,
    model: Model = None,
    max_messages: MaxMessages = None,
    context_tokens: ContextTokens = None,
) -> int:
    """What a conversation's next request carries, in tokens.

    Estimated offline, against the model's context window: the request `golem resume` would
    send next, with the settings and tools kept with the conversation (its tool servers are
    started to list theirs)."""
    import asyncio
    import sys

    from golem_cli.cli.common import open_store
    from golem_cli.cli.context import lines, request_context
    from golem_cli.cli.model_choice import choose_model
    from golem_cli.cli.model_choice import max_messages as trim
    from golem_cli.cli.render.console import note, print_json, say
    from golem_cli.cli.restore import reopen
    from golem_cli.cli.tools import servers
    from golem_cli.session import ChatSession

    store = open_store()
    cid = store.resolve(ref)
    choice = choose_model(model, stored=store.meta(cid).model, lazy=True)
    kept, tools = reopen(store.meta(cid).settings, choice, ChatFlags(max_messages=max_messages,
                         context_tokens=context_tokens))  # fmt: skip
    session = ChatSession(store, cid, choice.model, history=store.load(cid), max_messages=trim(kept.max_messages,
                          choice.settings), tools=tools.toolbox())  # fmt: skip
    kept.apply(session, choice)

    async def counted() -> RequestContext:
        async with servers.serving(session.toolbox, say):
            return request_context(session)

    found = asyncio.run(counted())
    for line in filter(None, [choice.note, *kept.lines()]):
        note(line)
    if as_json:
        print_json({"conversationId": cid, **found.to_json()})
        return 0
    for line in lines(found):
        sys.stdout.write(line + "\n")
    return 0


By = Annotated[
    str,
    typer.Option("--by", metavar="model|day|conversation", help="Group by model, day (UTC) or conversation."),
]
Since = Annotated[
    str | None, typer.Option("--since", metavar="DATE", help="Only runs started on or after DATE (YYYY-MM-DD, UTC).")
]


@app.command("usage", cls=GolemCommand, rich_help_panel=PANEL)
def usage(by: By = "model", since: Since = None, as_json: Json = False) -> int:
    """Tokens and cost of all runs, each counted once (forks share).

    Answered from the usage index."""
    import sys

    from golem_cli.cli.common import open_store
    from golem_cli.cli.render.console import print_json
    from golem_cli.store.usage import BY, NAME, UsageIndex

    if by not in BY:
        raise InputError(f"--by takes model, day or conversation, not {by!r}")
    store = open_store()
    rows = UsageIndex(store.root / NAME, store.conversations_dir).totals(by=by, since=_since(since))
    if as_json:
        print_json([_row_json(by, r) for r in rows])
        return 0
    for line in usage_lines(by, rows, since):
        sys.stdout.write(line + "\n")
    return 0


def _since(text: str | None) -> float:
    """``--since DATE`` as a POSIX time (midnight UTC of that day)."""
    if text is None:
        return 0.0
    import datetime

    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"--since takes a date like 2026-11-30, not {text!r}") from None
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp()


def _row_json(by: str, r: UsageRow) -> dict[str, object]:
    return {
        by: r.group, "runs": r.runs, "requests": r.requests, "conversations": r.conversations,
        "usage": {"inputTokens": r.input_tokens, "cacheReadTokens": r.cache_read_tokens,
                  "cacheWriteTokens": r.cache_write_tokens, "outputTokens": r.output_tokens,
                  "reasoningTokens": r.reasoning_tokens},
        "cost": r.cost, "unpricedRuns": r.unpriced,
    }  # fmt: skip


def usage_lines(by: str, rows: list[UsageRow], since: str | None = None) -> list[str]:
    """The totals as a table for people, with a total row and what is not priced."""
    from golem_cli.store.usage import summed

    if not rows:
        return ["No runs recorded" + (f" since {since}." if since else ".")]
    total = summed(rows, "total")
    table = [(by, "runs", "requests", "input", "cached", "output", "cost"), *map(_cells, rows), _cells(total)]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    out = ["  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
           for row in table]  # fmt: skip
    if total.unpriced:
        out.append(f"* {total.unpriced:,} runs of models with no known price are not in the cost; "
                   'set price in [models."provider:model"] of config.toml')  # fmt: skip
    return out


def _cells(r: UsageRow) -> tuple[str, ...]:
    from golem_cli.core.cost import usd

    counts = (r.runs, r.requests, r.input_tokens, r.cache_read_tokens, r.output_tokens)
    return (r.group, *(f"{n:,}" for n in counts), usd(r.cost) + ("*" if r.unpriced else ""))
