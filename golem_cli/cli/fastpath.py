"""Plain argument lists parsed without typer, from the commands' own declarations.

typer costs about 150 ms before a command runs, more than ``golem list`` may take in all
(ADR 0004). Every command is declared once as a ``Command`` (command.py); this module reads
an argument list against that declaration when it uses only plain spellings: ``--flag``,
``--option VALUE`` with VALUE not starting with ``-``, ints as ASCII digits within bounds,
enum values by name, repeatable options, positionals. Anything else (``--help``, a typo, ``--limit=5``, ``-n5``,
a value typer would reject) returns None and goes to typer, which
remains the one judge of what is valid and the one producer of usage errors.
"""

from __future__ import annotations

import enum
import os
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from golem_cli.cli.command import Command, Option, join_pairs

GLOBAL_FLAGS = ("--debug",)
_DECLINE = object()


def parse(args: list[str], commands: Mapping[str, Command]) -> Callable[[], int] | None:
    """A call running the command, or None when typer should parse ``args``
    (always None when ``GOLEM_NO_FASTPATH`` is set, to compare the two paths)."""
    if os.environ.get("GOLEM_NO_FASTPATH"):
        return None
    rest = list(args)
    while rest and rest[0] in GLOBAL_FLAGS:
        rest.pop(0)
    if not rest or rest[0] not in commands:
        return None
    command = commands[rest[0]]
    rest = join_pairs(rest, dict(commands))  # -o KEY VALUE as -o KEY=VALUE, as typer gets it
    keywords = keywords_for(command, rest[1:])
    if keywords is None:
        return None
    return lambda: command.call(keywords)


def keywords_for(command: Command, tokens: list[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would pass for ``tokens``, or None to leave them to typer."""
    by_flag = {flag: option for option in command.options for flag in option.flags}
    keywords = command.defaults()
    positionals: list[str] = []
    stream = iter(tokens)
    for token in stream:
        option = by_flag.get(token)
        if option is None:
            if token.startswith("-"):
                return None
            positionals.append(token)
            continue
        if option.type is bool:
            keywords[option.name] = True
            continue
        repeatable = typing.get_origin(option.type) is list
        value = _convert(option, typing.get_args(option.type)[0] if repeatable else option.type, next(stream, None))
        if value is _DECLINE:
            return None
        keywords[option.name] = [*(keywords[option.name] or ()), value] if repeatable else value
    arguments = command.arguments
    required = sum(1 for a in arguments if a.required)
    if not required <= len(positionals) <= len(arguments):
        return None
    for argument, text in zip(arguments, positionals, strict=False):
        if argument.type not in (str, Path):
            return None
        keywords[argument.name] = argument.type(text)
    return keywords


def _convert(option: Option, kind: Any, text: str | None) -> Any:
    if text is None or text.startswith("-"):
        return _DECLINE
    if kind is str or kind is Path:
        return kind(text)
    if kind is int:
        if not (text.isascii() and text.isdigit()):
            return _DECLINE
        value = int(text)
        return value if option.min is None or value >= option.min else _DECLINE
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next((member for member in kind if member.value == text), _DECLINE)
    return _DECLINE
