"""``golem context``: what a conversation's next request carries, in tokens."""

from __future__ import annotations

from typing import Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.options import ContextTokens, ConversationId, MaxMessages, Model

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
    """What the next request of a conversation carries, in tokens (estimated offline),
    against the model's context window."""
    import sys

    from golem_cli.cli.common import open_store, set_window
    from golem_cli.cli.context import lines, request_context
    from golem_cli.cli.model_choice import choose_model
    from golem_cli.cli.model_choice import max_messages as trim
    from golem_cli.cli.render.console import note, print_json
    from golem_cli.cli.tools.choice import choose_tools
    from golem_cli.session import ChatSession

    store = open_store()
    cid = store.resolve(ref)
    choice = choose_model(model, stored=store.meta(cid).model, lazy=True)
    tools = choose_tools(choice.settings, None, None, False)
    session = ChatSession(store, cid, choice.model, history=store.load(cid), max_messages=trim(max_messages,
                          choice.settings), tools=tools.toolbox())  # fmt: skip
    set_window(session, choice, context_tokens, None)
    found = request_context(session)
    if as_json:
        print_json({"conversationId": cid, **found.to_json()})
        return 0
    if choice.note:
        note(choice.note)
    for line in lines(found):
        sys.stdout.write(line + "\n")
    return 0
