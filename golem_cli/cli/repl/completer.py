"""Tab in the chat: slash commands, and what each takes after it, as the shell completion
offers it for the command line (``cli/completion.py``): paths after ``/attach``, models after
``/model``, tools after ``/tools enable|disable|allow``, option names after ``/option``; and
what the running tool servers offer (``prompts.ServerCompleter``): their prompts as commands,
a prompt's arguments, ``@SERVER:URI`` resources anywhere in the line.

A command's name completes while it is typed; what follows it only when Tab asks (listing
models reads the config file, listing paths the directory: not at every key).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from golem_cli.cli.repl.prompts import ServerCompleter

if TYPE_CHECKING:
    from golem_cli.tools.toolbox import Toolbox

TOOL_ACTIONS = ("enable", "disable", "allow")


class SlashCompleter(Completer):
    """Completions for a chat's line; ``tool_names`` gives the names ``/tools`` takes in this
    chat (its tools, their groups and servers), ``box`` the chat's toolbox (its servers)."""

    def __init__(
        self,
        commands: Iterable[str],
        tool_names: Callable[[], Iterable[str]],
        box: Callable[[], Toolbox | None] = lambda: None,
    ) -> None:
        self.commands = list(commands)
        self.tool_names = tool_names
        self.paths = PathCompleter(expanduser=True)
        self.servers = ServerCompleter(box)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if self.servers.claims(text):
            yield from self.servers.get_completions(document, complete_event)
            return
        if not text.startswith("/"):
            return
        name, space, rest = text.partition(" ")
        if not space:
            yield from _words([*self.commands, *self.servers.prompt_names()], name)
            return
        if not complete_event.completion_requested:
            return
        if name == "/attach":
            yield from self.paths.get_completions(Document(rest, len(rest)), complete_event)
        elif name == "/model" and " " not in rest:
            yield from _words(_models(rest), rest)
        elif name == "/option" and " " not in rest:
            yield from _words(_options(), rest)
        elif name == "/tools":
            yield from self._tools(rest)

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """golem's own completions, and where there are none the tool server's (the lists a
        server said changed read again first)."""
        await self.servers.relist()
        local = list(self.get_completions(document, complete_event))
        for completion in local:
            yield completion
        if not local and self.servers.claims(document.text_before_cursor):
            for completion in await self.servers.from_server(document.text_before_cursor):
                yield completion

    def _tools(self, rest: str) -> Iterator[Completion]:
        action, space, names = rest.partition(" ")
        if not space:
            yield from _words(TOOL_ACTIONS, action)
        elif action in TOOL_ACTIONS:
            word = names.rpartition(" ")[2]
            yield from _words(self.tool_names(), word)


def _words(candidates: Iterable[str], typed: str) -> Iterator[Completion]:
    for word in dict.fromkeys(candidates):
        if word.startswith(typed) and word != typed:
            yield Completion(word, start_position=-len(typed))


def _models(typed: str) -> list[str]:
    from golem_cli.cli.completion import model_names

    return [name for name, _ in model_names(typed)]


def _options() -> list[str]:
    from golem_cli.providers.options import OPTIONS

    return list(OPTIONS)
