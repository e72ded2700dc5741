"""``golem compact ID``: summarise a stored conversation before its newest messages, or undo
the newest summary (ADR 0032). The history file is never changed; the summary lives beside it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.options import ChatFlags, ConversationId, Model, Tools

if TYPE_CHECKING:
    from golem_cli.compacting import Compacted
    from golem_cli.session import ChatSession
    from golem_cli.store.sidecars import Summary

app = typer.Typer()

Focus = Annotated[
    str, typer.Option("--focus", metavar="TEXT", help="What the summary should keep above all (a task, a file).")
]
Keep = Annotated[
    int | None,
    typer.Option("--keep", metavar="N", min=1, help="Keep the newest N messages verbatim (default 6)."),
]
Undo = Annotated[bool, typer.Option("--undo", help="Remove the newest summary instead.")]


@app.command("compact", cls=GolemCommand, rich_help_panel="Conversations")
def compact(
    cid: ConversationId, focus: Focus = "", keep: Keep = None, undo: Undo = False, model: Model = None,
    tool: Tools = None,
) -> int:  # fmt: skip
    """Summarise older messages; the file keeps all.

    The summary is sent instead of the messages it covers, before the newest ones; `golem
    show` marks where it starts. It is
    written by --model, else compact_model from config.toml, else the conversation's model.
    The request opens as the conversation's own do (its tools and options, as kept with it, or
    the tools -T names), so a provider reads that part from its cache.
    """
    import asyncio

    from golem_cli.cli.common import open_store
    from golem_cli.cli.model_choice import choose_model
    from golem_cli.cli.render.console import note
    from golem_cli.cli.restore import reopen
    from golem_cli.session import ChatSession

    store = open_store()
    cid = store.resolve(cid)
    choice = choose_model(model, stored=store.meta(cid).model, fallback=False)
    # The conversation's own settings and tools (kept with it, or -T), so the request's prefix is theirs.
    kept, tools = reopen(store.meta(cid).settings, choice, ChatFlags(tool=tool))
    session, _, _ = ChatSession.resume(store, cid, choice.model, tools=tools.toolbox())
    try:
        kept.apply(session, choice)  # the window, options, prices and compaction's settings
        if model:
            session.compactor.model = None  # --model names the model that writes it
        if undo:
            gone = session.compactor.undo()
            note(undone_line(gone))
            return 0 if gone is not None else 1

        line = cost_line(*session.compactor.planned_cost(focus=focus, keep=keep))
        if line:
            note(line)

        done = asyncio.run(_summarised(session, focus=focus, keep=keep))
    finally:
        session.close()
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stdout.write(for_terminal(done.summary.text, sys.stdout) + "\n")
    note(compacted_line(done))
    return 0


async def _summarised(session: ChatSession, *, focus: str, keep: int | None) -> Compacted:
    """The compaction made, the conversation's tool servers started first (quietly: their tools
    are part of the request's prefix, which the provider's cache holds) and everything closed
    after."""
    from golem_cli.cli.model_choice import close_model
    from golem_cli.cli.render.console import say
    from golem_cli.cli.tools import servers

    try:
        async with servers.serving(session.toolbox, say):
            return await session.compactor.compact(focus=focus, keep=keep)
    finally:
        await close_model(session.model)
        if session.compactor.model is not None:
            await close_model(session.compactor.model)


#: A manual compaction past this many USD (its input at the input price) is said before it runs.
FEW_CENTS = 0.05


def cost_line(tokens: int, cost: float | None) -> str:
    """What a compaction will read and cost at most, when that is more than a few cents ("")."""
    if cost is None or cost <= FEW_CENTS:
        return ""
    from golem_cli.core.cost import usd

    return (f"This compaction sends about {tokens:,} tokens: up to {usd(cost)} at the input price, "
            "less what the provider reads from its cache.")  # fmt: skip


def compacted_line(done: Compacted) -> str:
    """One line for a compaction made: what it covers, what stays verbatim, who wrote it, its
    tokens and the share of its input read from the provider's cache."""
    usage = done.call.usage
    tokens = ""
    if usage.input_tokens:
        cached = f", {round(100 * usage.cache_read_tokens / usage.input_tokens)}% of it a cache read"
        tokens = f"; {usage.input_tokens:,} tokens in{cached if usage.cache_read_tokens else ''}, "
        tokens += f"{usage.output_tokens:,} out"
    if done.cost is not None:
        from golem_cli.core.cost import usd

        tokens += f", {usd(done.cost)}"
    ignored = f"; {done.call.ignored_calls} tool call(s) in its answer ignored" if done.call.ignored_calls else ""
    return (
        f"Summarised messages 1-{done.summary.number} (the newest {done.kept} kept verbatim) with "
        f"{done.call.model}{tokens}{ignored}. The file keeps every message; /summary shows the summary, "
        "/compact undo (golem compact ID --undo) removes it."
    )


def undone_line(gone: Summary | None) -> str:
    if gone is None:
        return "golem: nothing to undo: this conversation has no summary"
    return f"Removed the summary of messages 1-{gone.number}; they are sent as they are again (as the window allows)."
