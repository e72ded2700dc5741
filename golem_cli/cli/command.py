"""A command declared once, as data: its name, help, arguments and options.

typer is golem's CLI library, but it costs about 150 ms before a command runs (its import,
pydantic, and an adapter per parameter), while ``golem list`` must answer in well under that.
So each command module declares its commands as ``Command`` values, which import nothing, and
two things are derived from the one declaration (ADR 0004):

- ``to_typer`` turns a ``Command`` into a typer command (help, usage errors, completion);
- ``fastpath.parse`` reads plain argument lists with the same declarations, without typer.

Both end in ``Command.call`` with the same keyword arguments; tests/cli/test_fastpath.py
checks that for every command and every option.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


@dataclass(init=False)
class Option:
    """``--name VALUE`` (a flag when ``type`` is bool), spelled as typer's ``Option`` is:
    the keyword the implementation receives, then the flags. ``min`` bounds an int. A
    ``pair`` option takes two words, ``-o KEY VALUE``, which typer cannot parse: ``join_pairs``
    hands both parsers ``-o KEY=VALUE`` instead (that spelling works too)."""

    name: str
    flags: tuple[str, ...]
    type: Any
    default: Any
    help: str
    metavar: str | None
    min: int | None
    pair: bool
    complete: Callable[[str], list[tuple[str, str]]] | None  # shell completion: (value, description)

    def __init__(
        self,
        name: str,
        *flags: str,
        type: Any = bool,
        default: Any = None,
        help: str = "",
        metavar: str | None = None,
        min: int | None = None,
        pair: bool = False,
        complete: Callable[[str], list[tuple[str, str]]] | None = None,
    ) -> None:
        self.name, self.flags, self.type, self.help, self.min, self.pair = name, flags, type, help, min, pair
        self.complete = complete
        self.default = False if type is bool and default is None else default
        self.metavar = metavar or _default_metavar(type)

    @property
    def takes_value(self) -> bool:
        return self.type is not bool


@dataclass(frozen=True)
class Argument:
    """A positional argument; optional when it has a default."""

    name: str
    metavar: str
    help: str = ""
    type: Any = str
    required: bool = True
    default: Any = None
    complete: Callable[[str], list[tuple[str, str]]] | None = None  # shell completion: (value, description)


@dataclass(frozen=True)
class Command:
    """One ``golem`` command: ``function(**keywords)`` returns the exit code."""

    name: str
    function: Callable[..., int]
    help: str
    panel: str
    params: Sequence[Option | Argument] = field(default_factory=tuple)
    epilog: str = ""

    @property
    def options(self) -> list[Option]:
        return [p for p in self.params if isinstance(p, Option)]

    @property
    def arguments(self) -> list[Argument]:
        return [p for p in self.params if isinstance(p, Argument)]

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def call(self, keywords: dict[str, Any]) -> int:
        """Run the command; both the typer path and the fast path end here."""
        return self.function(**keywords)


def join_pairs(args: list[str], commands: dict[str, Command], global_flags: Sequence[str] = ()) -> list[str]:
    """``args`` with each ``-o KEY VALUE`` of a pair option written ``-o KEY=VALUE``, the one
    spelling both typer and the fast path read. A value already holding ``=`` is left alone."""
    start = 0
    while start < len(args) and args[start] in global_flags:
        start += 1
    command = commands.get(args[start]) if start < len(args) else None
    flags = {flag for option in command.options if option.pair for flag in option.flags} if command else set()
    if not flags:
        return args
    out, i = args[: start + 1], start + 1
    while i < len(args):
        token = args[i]
        if token == "--":
            out += args[i:]
            break
        if token in flags and i + 2 < len(args) and "=" not in args[i + 1]:
            out += [token, f"{args[i + 1]}={args[i + 2]}"]
            i += 3
            continue
        out.append(token)
        i += 1
    return out


def _default_metavar(kind: Any) -> str | None:
    if kind is bool:
        return None
    if kind is int:
        return "N"
    if kind is Path:
        return "FILE"
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return "|".join(str(member.value) for member in kind)
    return "TEXT"


def to_typer(app: typer.Typer, command: Command) -> None:
    """Add ``command`` to ``app``: a generated function whose signature carries the typer
    declarations typer would otherwise read from hand-written parameters."""
    import typer

    parameters = []
    annotations: dict[str, Any] = {}
    for p in command.params:
        if isinstance(p, Option):
            info = typer.Option(
                p.default, *p.flags, help=p.help, metavar=p.metavar, min=p.min, autocompletion=_completer(p.complete)
            )
        else:
            info = typer.Argument(
                ... if p.required else p.default, metavar=p.metavar, help=p.help, autocompletion=_completer(p.complete)
            )
        parameters.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=p.type))
        annotations[p.name] = p.type

    def run(**keywords: Any) -> None:
        raise typer.Exit(command.call(keywords))

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # read by typer
    run.__annotations__ = annotations
    run.__doc__ = command.help
    run.__name__ = command.name
    app.command(command.name, rich_help_panel=command.panel, epilog=command.epilog or None)(run)


def _completer(complete: Callable[[str], list[tuple[str, str]]] | None) -> Callable[[str], Any] | None:
    """typer reads a completion callback's parameters by their annotations: give it one it reads."""
    if complete is None:
        return None

    def completions(incomplete: str) -> list[tuple[str, str]]:
        return complete(incomplete)

    return completions
