"""What a golem command adds to a typer command, through typer's own ``cls=`` hook.

- The usage line spells arguments as people write them, ``ID`` and ``[ID]`` (typer writes a
  required one ``{ID}``).
- ``-o NAME VALUE`` (two words: typer's options take one) arrives as one ``NAME=VALUE`` word,
  the other spelling ``-o`` takes.
- Ctrl-C during a command is typer's ``Abort`` (typer would end the command with exit code 130
  and nothing said), so that ``app.run`` reports it as every other interruption.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand

PAIRS = "--option"  # the option that takes NAME VALUE: -o, --option (options.py)


class GolemCommand(TyperCommand):
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or param.name or ""
                pieces.append((name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else ""))
        return pieces

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        flags = {flag for param in self.params if PAIRS in param.opts for flag in param.opts}
        return super().parse_args(ctx, join_pairs(args, flags) if flags else args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as interrupt:
            raise typer.Abort() from interrupt


def join_pairs(args: list[str], flags: set[str]) -> list[str]:
    """``args`` with each ``-o NAME VALUE`` (one of ``flags`` and two words) written
    ``-o NAME=VALUE``; a word that holds ``=`` already is left alone."""
    out: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return out + args[i:]
        if word in flags and i + 2 < len(args) and "=" not in args[i + 1]:
            out += [word, f"{args[i + 1]}={args[i + 2]}"]
            i += 3
            continue
        out.append(word)
        i += 1
    return out
