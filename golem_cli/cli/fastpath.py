"""``golem list``, ``show``, ``chat`` and ``ask`` without typer, for speed.

typer 0.29 costs about 120 ms before a command runs (its import, plus a pydantic adapter
built for every parameter), while ``golem list`` must answer within 150 ms. Both commands
have a tiny grammar, so when their arguments use only the plain spellings below they are
parsed here and the same implementation functions run. Anything else (``--help``, a typo,
``--limit=5``, ``-n5``, an option typer would reject) returns None and goes to typer, which
remains the one judge of what is valid; tests/cli/test_fastpath.py checks that both paths
give the same output for the same arguments.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

GLOBAL_FLAGS = ("--debug",)


@dataclass(frozen=True)
class Spec:
    module: str
    function: str
    positionals: int
    flags: dict[str, str] = field(default_factory=dict)
    int_options: dict[str, str] = field(default_factory=dict)
    int_minimum: int = 0
    str_options: dict[str, str] = field(default_factory=dict)
    optional_positionals: int = 0


SPECS = {
    "list": Spec(
        "golem_cli.cli.conversations",
        "list_conversations",
        0,
        flags={"--json": "as_json", "--tree": "tree"},
        int_options={"--limit": "limit", "-n": "limit"},
    ),
    "show": Spec("golem_cli.cli.conversations", "show", 1, flags={"--json": "as_json", "--run-ids": "run_ids"}),
    "chat": Spec(
        "golem_cli.cli.chat",
        "chat",
        0,
        flags={"--no-markdown": "no_markdown"},
        int_options={"--max-messages": "max_messages"},
        int_minimum=1,
        str_options={"--model": "model", "-m": "model", "--system": "system", "-s": "system"},
    ),
    "ask": Spec(
        "golem_cli.cli.chat",
        "ask",
        0,
        optional_positionals=1,
        flags={"--continue": "continue_last", "-c": "continue_last", "--json": "as_json", "--no-stream": "no_stream"},
        int_options={"--max-messages": "max_messages"},
        int_minimum=1,
        str_options={"--model": "model", "-m": "model", "--system": "system", "-s": "system", "--cid": "cid"},
    ),
}


def parse(args: list[str]) -> Callable[[], int] | None:
    """A call running the command, or None when typer should parse ``args``
    (always None when ``GOLEM_NO_FASTPATH`` is set, to compare the two paths)."""
    if os.environ.get("GOLEM_NO_FASTPATH"):
        return None
    rest = list(args)
    while rest and rest[0] in GLOBAL_FLAGS:
        rest.pop(0)
    if not rest or rest[0] not in SPECS:
        return None
    spec = SPECS[rest[0]]
    positionals: list[str] = []
    kwargs: dict[str, object] = {}
    tokens = iter(rest[1:])
    for token in tokens:
        if token in spec.flags:
            kwargs[spec.flags[token]] = True
        elif token in spec.int_options:
            value = next(tokens, None)
            if value is None or not value.isascii() or not value.isdigit() or int(value) < spec.int_minimum:
                return None
            kwargs[spec.int_options[token]] = int(value)
        elif token in spec.str_options:
            value = next(tokens, None)
            if value is None or value.startswith("-"):
                return None
            kwargs[spec.str_options[token]] = value
        elif token.startswith("-"):
            return None
        else:
            positionals.append(token)
    if not spec.positionals <= len(positionals) <= spec.positionals + spec.optional_positionals:
        return None
    function = getattr(importlib.import_module(spec.module), spec.function)
    return lambda: function(*positionals, **kwargs)
