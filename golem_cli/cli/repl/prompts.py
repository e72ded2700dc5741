"""A tool server's prompts as slash commands: ``/SERVER:PROMPT [ARG=VALUE ...]`` (values
quoted as in a shell) asks the server for the prompt's messages and sends them as the user's
next turn, stored with that run's IDs like any prompt. Tab completes the commands, the
prompts of the servers that are running, and their arguments' names.

What the server returns is its text: it is shown through ``terminal_text`` when echoed, and
the model reads it as the user's words (the user chose to send it).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from golem_cli.cli.repl.resources import Repl
    from golem_cli.tools.toolbox import Toolbox

#: How long Tab waits for a server's completions (``completion/complete``) before offering none.
COMPLETION_WAIT = 2.0


def is_prompt(name: str) -> bool:
    """Whether a slash command's name is a server's prompt (``/SERVER:PROMPT``)."""
    server, colon, prompt = name[1:].partition(":")
    return name.startswith("/") and bool(colon and server and prompt)


def servers(box: Toolbox | None) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Each running server's name with the prompts it offers."""
    for source in box.servers() if box is not None else ():
        listed = getattr(source, "prompt_list", None)
        if source.started and isinstance(listed, list):
            yield source.group, listed


def arguments(text: str) -> dict[str, str]:
    """``ARG=VALUE`` words (shell quoting) as a mapping; ``ValueError`` for anything else."""
    found: dict[str, str] = {}
    for word in shlex.split(text):
        name, equals, value = word.partition("=")
        if not equals or not name:
            raise ValueError(f"{word!r} is not ARG=VALUE")
        found[name] = value
    return found


async def run(repl: Repl, name: str, rest: str) -> None:
    """``/SERVER:PROMPT ARGS``: the prompt's messages, sent as the next turn."""
    from golem_cli.cli.render.terminal_text import visible
    from golem_cli.core.tools import ToolFailed

    server, _, prompt = name[1:].partition(":")
    if not await repl.tool_servers_ready():
        return
    from golem_cli.cli.tools.resources import relist

    await relist(repl.session.toolbox)
    found = _find(repl, server, prompt)
    if isinstance(found, str):
        repl.console.print(visible(found), markup=False)
        return
    source, spec = found
    try:
        given = arguments(rest)
        missing = [a["name"] for a in spec.get("arguments") or [] if a.get("required") and not given.get(a.get("name"))]
        if missing:
            raise ValueError(f"it needs {' '.join(m + '=...' for m in missing)}")
        result = await source.get_prompt(prompt, given)
    except (ValueError, ToolFailed) as e:
        repl.console.print(visible(f"/{server}:{prompt}: {getattr(e, 'reason', None) or e}"), markup=False)
        return
    text = prompt_text(result.get("messages") or [])
    if not text.strip():
        repl.console.print(visible(f"/{server}:{prompt} gave no text to send."), markup=False)
        return
    await repl.ask(text)


def _find(repl: Repl, server: str, prompt: str) -> tuple[Any, dict[str, Any]] | str:
    """The running server's source and its prompt's listing, or what is wrong in words."""
    box = repl.session.toolbox
    offered = dict(servers(box)).get(server)
    source = next((s for s in box.servers() if s.group == server), None) if box is not None else None
    if offered is None or source is None:
        return f"No running tool server named {server!r}; /tools lists them."
    spec = next((p for p in offered if p.get("name") == prompt), None)
    if spec is None:
        names = ", ".join(f"/{server}:{p.get('name')}" for p in offered) or "none"
        return f"{server} has no prompt {prompt!r}; it offers: {names}"
    return source, spec


def prompt_text(messages: Sequence[object]) -> str:
    """A prompt's messages as one turn's text: each message's text (an embedded resource's
    too); an assistant's message is marked as such so the model reads the exchange as given."""
    parts = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        text = _content_text(content)
        if text:
            parts.append(f"[assistant]\n{text}" if message.get("role") == "assistant" else text)
    return "\n\n".join(parts)


def _content_text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    if content.get("type") == "text":
        return str(content.get("text") or "")
    if content.get("type") == "resource" and isinstance(content.get("resource"), dict):
        resource = content["resource"]
        if isinstance(resource.get("text"), str):
            return f"[resource: {resource.get('uri', '')}]\n{resource['text']}"
    kind = content.get("type")
    return f"[golem: the prompt's {kind} content was left out]" if kind else ""


class ServerCompleter(Completer):
    """Completes what the running tool servers offer: ``@SERVER:URI`` of their resources
    anywhere in a line, a ``/SERVER:PROMPT``'s argument names, and (``from_server``) the
    server's own completions of an argument's value or a template's variable. The chat's
    completer (``completer.py``) hands it those words."""

    def __init__(self, box: Callable[[], Toolbox | None] = lambda: None) -> None:
        self.box = box

    @staticmethod
    def claims(text: str) -> bool:
        """Whether the word being typed in ``text`` is the servers' to complete."""
        word = text.rsplit(None, 1)[-1] if text.strip() and not text[-1].isspace() else ""
        command, space, _ = text.partition(" ")
        return word.startswith("@") or bool(space and is_prompt(command))

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = text.rsplit(None, 1)[-1] if text.strip() and not text[-1].isspace() else ""
        if word.startswith("@"):  # a tool server's resource, anywhere in the line
            yield from self._resources(word)
            return
        command, space, rest = text.partition(" ")
        word = rest.rsplit(" ", 1)[-1]
        if not space or "=" in word or not is_prompt(command):
            return
        for argument in self._arguments(command):
            if argument.startswith(word) and f"{argument}=" not in rest:
                yield Completion(f"{argument}=", start_position=-len(word))

    async def relist(self) -> None:
        """The prompts and resources of the running servers that said they changed, read again
        before anything is completed from them."""
        box = self.box()
        if box is None or not box.servers():  # no server to ask: a key typed costs no import
            return
        from golem_cli.cli.tools.resources import relist

        await relist(box)

    async def from_server(self, text: str) -> list[Completion]:
        """The server's completions (``completion/complete``) of a prompt's ``ARG=`` value or a
        resource template's variable; none when it takes too long or fails."""
        word = text.rsplit(" ", 1)[-1]
        asked = self._argument_asked(text, word) if is_prompt(text.partition(" ")[0]) else None
        asked = asked or self._variable_asked(word)
        if asked is None:
            return []
        source, ref, argument, value, given, make = asked
        try:
            values = await asyncio.wait_for(source.complete(ref, argument, value, given), COMPLETION_WAIT)
        except (TimeoutError, Exception):
            return []  # a completion is a convenience: none is offered
        from golem_cli.cli.render.terminal_text import visible

        offered = [make(v) for v in values if visible(v) == v and "\n" not in v]
        return [Completion(o, start_position=-len(word)) for o in offered if o != word]

    def _argument_asked(self, text: str, word: str) -> _Asked | None:
        """A prompt's ``ARG=partial`` being typed: what to ask its server."""
        name, equals, value = word.partition("=")
        command, _, rest = text.partition(" ")
        if not equals or name not in self._arguments(command):
            return None
        server, _, prompt = command[1:].partition(":")
        source = _source(self.box(), server)
        try:
            given = arguments(rest[: len(rest) - len(word)])
        except ValueError:
            given = {}
        return source, {"type": "ref/prompt", "name": prompt}, name, value.lstrip("\"'"), given, _quoted(name)

    def _variable_asked(self, word: str) -> _Asked | None:
        """``@SERVER:`` and a template's fixed part, then its first variable being typed."""
        from golem_cli.cli.tools.resources import running

        server, colon, uri = word[1:].partition(":")
        if not word.startswith("@") or not colon:
            return None
        source = running(self.box()).get(server)
        for template in getattr(source, "template_list", None) or []:
            pattern = str(template.get("uriTemplate", ""))
            fixed, brace, after = pattern.partition("{")
            variable = after.partition("}")[0].lstrip("+#./;?&")
            if brace and variable and uri.startswith(fixed) and "/" not in uri[len(fixed) :]:
                ref = {"type": "ref/resource", "uri": pattern}
                return source, ref, variable, uri[len(fixed) :], {}, lambda v, head=f"@{server}:{fixed}": head + v
        return None

    def _resources(self, word: str) -> Iterator[Completion]:
        """``@SERVER:URI`` of the running servers' resources, and their templates' fixed part."""
        from golem_cli.cli.render.terminal_text import visible
        from golem_cli.cli.repl.resources import listed

        seen: set[str] = set()
        for server, uri, about in listed(self.box()):
            offered = f"@{server}:{uri.partition('{')[0]}"
            fits = offered.startswith(word) and offered != word and visible(offered) == offered and " " not in offered
            if fits and offered not in seen:
                seen.add(offered)
                meta = "template " + uri if "{" in uri else about
                yield Completion(offered, start_position=-len(word), display_meta=visible(meta)[:80])

    def prompt_names(self) -> list[str]:
        return [f"/{server}:{p.get('name')}" for server, listed in servers(self.box()) for p in listed]

    def _arguments(self, command: str) -> list[str]:
        server, _, prompt = command[1:].partition(":")
        offered = dict(servers(self.box())).get(server) or []
        spec = next((p for p in offered if p.get("name") == prompt), {})
        return [str(a.get("name")) for a in spec.get("arguments") or [] if a.get("name")]


_Asked = tuple[Any, dict[str, str], str, str, dict[str, str], Callable[[str], str]]


def _source(box: Toolbox | None, server: str) -> Any:
    return next((s for s in box.servers() if s.group == server), None) if box is not None else None


def _quoted(name: str) -> Callable[[str], str]:
    """``NAME=VALUE`` with the value quoted as a shell would need (double quotes)."""

    def word(value: str) -> str:
        if value and all(c.isalnum() or c in "-_.,:/@+%" for c in value):
            return f"{name}={value}"
        return f'{name}="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    return word
