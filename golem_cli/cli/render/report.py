"""Repair and sanitize reports for people (one line per finding) and for scripts (JSON).

Used by ``golem normalize`` and ``golem import``; the REPL's ``/normalize``, ``resume`` and
``fork`` print the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from golem_cli.cli.render.findings import DROPPED, SYNTHESIZED, SYSTEM_PROMPT, TRUNCATED, UNSAFE_PART, Finding
from golem_cli.core.messages import SYSTEM

_LABELS = {
    SYNTHESIZED: "synthesized",
    DROPPED: "dropped",
    TRUNCATED: "truncated",
    SYSTEM_PROMPT: "system",
    UNSAFE_PART: "unsafe part",
}
_STYLES = {SYNTHESIZED: "yellow", DROPPED: "red", TRUNCATED: "magenta", SYSTEM_PROMPT: "cyan", UNSAFE_PART: "red"}


def _where(f: Finding) -> str:
    if f.role == SYSTEM:
        return "system prompt"
    number = "?" if f.number is None else str(f.number)
    return f"message {number} ({f.role or '?'})"


def _call(f: Finding) -> str:
    name = f" ({f.tool_name})" if f.tool_name else ""
    return f"{f.call_id!r}{name}" if f.call_id == "" else f"{f.call_id}{name}"


def describe(f: Finding) -> str:
    """What happened, in words, without the label and the location."""
    if f.kind == SYNTHESIZED:
        at = f" as message {f.output_number}" if f.output_number is not None else ""
        return f"call {_call(f)} had no result; an interrupted result was inserted{at}"
    if f.kind == DROPPED:
        return f"result for {_call(f)} answers no pending call; removed"
    if f.kind == TRUNCATED:
        return f"call {_call(f)} has arguments that are not one JSON object (cut off?); kept verbatim"
    if f.kind == SYSTEM_PROMPT:
        return "system prompt removed"
    scheme = f'scheme "{f.scheme}"' if f.scheme else "no usable scheme"
    return f"{f.part_kind or 'part'} URL with {scheme} removed"


def lines(findings: Sequence[Finding]) -> list[str]:
    """One plain line per finding: label, location, description."""
    width = max((len(_where(f)) for f in findings), default=0)
    return [f"  {_LABELS[f.kind]:<12} {_where(f):<{width}}  {describe(f)}" for f in findings]


def print_findings(findings: Sequence[Finding], *, styled: bool) -> None:
    """Print the findings on stdout, coloured on a terminal."""
    if not styled:
        from golem_cli.cli.render.console import out

        for line in lines(findings):
            out(line)
        return
    from rich.markup import escape

    from golem_cli.cli.render.console import rich_console
    from golem_cli.cli.render.terminal_text import visible

    console = rich_console()
    width = max((len(_where(f)) for f in findings), default=0)
    for f in findings:
        label = f"{_LABELS[f.kind]:<12}"
        console.print(
            f"  [{_STYLES[f.kind]}]{label}[/] [dim]{escape(_where(f)):<{width}}[/]  {escape(visible(describe(f)))}",
            soft_wrap=True,
        )


def findings_json(findings: Sequence[Finding]) -> list[dict[str, object]]:
    return [f.to_json() for f in findings]
