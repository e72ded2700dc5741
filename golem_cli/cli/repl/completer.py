"""Tab in the chat: slash commands, and what each takes after it, as the shell completion
offers it for the command line (``cli/completion.py``): paths after ``/attach``, models after
``/model``, tools after ``/tools enable|disable|allow``, option names after ``/option``.

A command's name completes while it is typed; what follows it only when Tab asks (listing
models reads the config file, listing paths the directory: not at every key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

TOOL_ACTIONS = ("enable", "disable", "allow")


class SlashCompleter(Completer):
    """Completions for a chat's line; ``tool_names`` gives the names ``/tools`` takes in this
    chat (its tools, their groups and servers)."""

    def __init__(self, commands: Iterable[str], tool_names: Callable[[], Iterable[str]]) -> None:
        self.commands = list(commands)
        self.tool_names = tool_names
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, space, rest = text.partition(" ")
        if not space:
            yield from _words(self.commands, name)
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
