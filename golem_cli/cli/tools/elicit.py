"""A tool server's question for the person (MCP elicitation), asked on the terminal.

The server's message and each field's title, type, default and required mark are shown
through ``terminal_text`` (they are the server's words). The person accepts (and fills the
form in, field by field: Enter keeps the default, or leaves an optional field out), declines,
or cancels; Ctrl-D at any point cancels. A URL-mode request shows the URL for the person to
open themselves: golem never opens it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from golem_cli.cli.render.terminal_text import visible

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.tools.mcp.hooks import Elicitation, Field, Reply

CHOICES = {"a": "accept", "accept": "accept", "d": "decline", "decline": "decline", "c": "cancel", "cancel": "cancel"}


async def ask_form(console: Console, request: Elicitation) -> Reply:
    """The person's answer to ``request``."""
    from golem_cli.tools.mcp.hooks import Reply

    show_request(console, request)
    try:
        action = await _choose(request)
        if action != "accept" or request.url:
            return Reply(action=action)  # type: ignore[arg-type]
        content: dict[str, Any] = {}
        for field in request.fields:
            value = await _fill(console, field)
            if value is not None:
                content[field.key] = value
    except EOFError:
        console.print("[dim]Cancelled.[/dim]")
        return Reply(action="cancel")
    return Reply(action="accept", content=content)


def show_request(console: Console, request: Elicitation) -> None:
    from rich.text import Text

    head = Text("? ", style="bold yellow")
    head.append(f"tool server {visible(request.server)!r} asks:", style="yellow")
    console.print(head, soft_wrap=True)
    for line in visible(request.message).splitlines() or [""]:
        console.print(Text("  " + line), soft_wrap=True)
    if request.url:
        console.print(Text("  Open this address yourself (golem does not open it):", style="dim"))
        console.print(Text("  " + visible(request.url), style="bold"), soft_wrap=True)
    for field in request.fields:
        console.print(Text("  • " + field_line(field), style="dim"), soft_wrap=True)


def field_line(field: Field) -> str:
    """``name — Title (integer, required, default 3): what it is``."""
    what = [("one of " if not field.many else "any of ") + ", ".join(field.choices) if field.choices else field.kind]
    if field.required:
        what.append("required")
    if field.default is not None:
        what.append(f"default {_shown(field.default)}")
    title = f" — {field.title}" if field.title and field.title.lower() != field.key.lower() else ""
    about = f": {field.description}" if field.description else ""
    return visible(f"{field.key}{title} ({', '.join(what)}){about}")


async def _choose(request: Elicitation) -> str:
    what = "(you open it)" if request.url else "(then fill it in)"
    while True:
        typed = await _line(f"[a]ccept {what} · [d]ecline · [c]ancel › ")
        action = CHOICES.get(typed.strip().lower())
        if action is not None:
            return action


async def _fill(console: Console, field: Field) -> Any:
    """The value typed for ``field`` (its default on an empty line; None leaves it out)."""
    from rich.text import Text

    from golem_cli.tools.mcp.hooks import convert

    mark = "*" if field.required else ""
    default = "" if field.default is None else _shown(field.default)
    while True:
        typed = await _line(f"{visible(field.key)}{mark} › ", default)
        if not typed.strip():
            if not field.required:
                return None
            console.print("[dim]This field is required.[/dim]")
            continue
        value, problem = convert(field, typed)
        if not problem:
            return value
        console.print(Text(visible(problem), style="dim"))


async def _line(prompt: str, default: str = "") -> str:
    from prompt_toolkit import PromptSession

    session: PromptSession[str] = PromptSession()
    return await session.prompt_async(prompt, default=default, handle_sigint=False)


def _shown(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
