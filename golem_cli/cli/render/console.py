"""How commands write: rich on a terminal, plain text when piped, JSON for scripts.

A command decides once per run with ``styled()``: a terminal gets rich rendering (colour
unless ``NO_COLOR`` is set); a pipe or file gets plain text that is cheap to produce and easy
to grep. ``FORCE_COLOR`` (or ``GOLEM_FORCE_TERMINAL``) asks for the terminal rendering anyway.
rich is imported only on the styled path.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def styled(stream: Any = None) -> bool:
    """Whether output to ``stream`` (default stdout) should be rendered for a terminal."""
    if os.environ.get("GOLEM_FORCE_TERMINAL") or os.environ.get("FORCE_COLOR"):
        return True
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def rich_console(*, stderr: bool = False) -> Console:
    """A rich console for the styled path; honours ``NO_COLOR`` and the terminal width. On a
    terminal, every text it prints passes ``terminal_text.visible``: nothing printed through
    it can make the terminal obey an escape sequence."""
    from rich.console import Console

    from golem_cli.cli.render.terminal_text import show_visibly

    force = bool(os.environ.get("GOLEM_FORCE_TERMINAL") or os.environ.get("FORCE_COLOR")) or None
    console = Console(
        stderr=stderr,
        highlight=False,
        force_terminal=force,
        no_color=bool(os.environ.get("NO_COLOR")) or None,
    )
    if console.is_terminal:
        show_visibly(console)
    return console


def out(text: str = "") -> None:
    """One line of plain output on stdout (control characters shown, on a terminal)."""
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stdout.write(for_terminal(text, sys.stdout) + "\n")


def note(text: str) -> None:
    """A remark for the person (not data) on stderr, so stdout stays parseable (control
    characters shown, on a terminal)."""
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stderr.write(for_terminal(text, sys.stderr) + "\n")


def say(line: str, problem: bool) -> None:
    """What a tool server said, for a command without a chat (``cli/tools/servers.py``): a
    note on stderr, a problem marked ``golem:``."""
    note(f"golem: {line}" if problem else line)


def print_json(value: Any) -> None:
    """``value`` as indented JSON on stdout (non-ASCII kept as is).

    The same bytes as ``json.dumps(value, ensure_ascii=False, indent=2)``, but that runs
    Python's pure-Python encoder (``indent`` turns the C one off): 15 s for a million-finding
    report. The C encoder writes it compactly and msgspec re-indents it, keeping every
    spelling."""
    import json

    import msgspec

    sys.stdout.write(msgspec.json.format(json.dumps(value, ensure_ascii=False), indent=2) + "\n")


def camel(value: Any) -> Any:
    """``value`` with every dict key in camelCase, the one style of golem's ``--json`` output
    (the history contract's): ``input_tokens`` and Go's ``SystemPrompts`` both become
    ``inputTokens``, ``systemPrompts``. For the small objects other layers describe
    themselves with; docs/json.md lists every command's shape."""
    if isinstance(value, dict):
        return {_camel_key(k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head[:1].lower() + head[1:] + "".join(part[:1].upper() + part[1:] for part in rest)


def iso_time(seconds: float) -> str:
    """A Unix time as an ISO 8601 UTC string for JSON output ("" when unknown)."""
    if not seconds:
        return ""
    import datetime

    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat(timespec="seconds")


def local_time(seconds: float) -> str:
    """A Unix time as a short local time for people; one in the future (another machine's
    clock) says so."""
    if not seconds:
        return "?"
    import time

    shown = time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
    return f"{shown} (future)" if seconds > time.time() + 60 else shown
