"""``golem normalize``: report (and on request fix) what would make a provider reject a
history: calls without results, results without calls, cut-off arguments; with
``--sanitize`` also system prompts and unsafe URL parts from untrusted histories."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from golem_cli.cli.command import GolemCommand

if TYPE_CHECKING:
    from golem_cli.cli.commands.salvage import Salvage
    from golem_cli.cli.common import Source
    from golem_cli.cli.render.findings import Finding
    from golem_cli.core.messages import Message
    from golem_cli.store import Store

app = typer.Typer()


FileOrId = Annotated[
    str, typer.Argument(metavar="FILE|ID", help="A history file (- reads standard input), or a stored conversation.")
]
Output = Annotated[
    Path | None,
    typer.Option("--output", "-o", metavar="OUT",
                 help="Write the repaired history to OUT (- for standard output; the report goes to stderr)."),
]  # fmt: skip
InPlace = Annotated[bool, typer.Option("--in-place", help="Replace the input with the result (keeps a backup).")]
Sanitize = Annotated[
    bool,
    typer.Option("--sanitize", help="Also remove system prompts and non-http(s) URL parts (histories from elsewhere)."),
]
SalvageFlag = Annotated[
    bool,
    typer.Option(
        "--salvage", help="Read a damaged file message by message, keep every complete one, report what was lost."
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
Check = Annotated[bool, typer.Option("--check", help="Exit 1 when the history needs repair; write nothing.")]


@app.command("normalize", cls=GolemCommand, rich_help_panel="Conversations")
def normalize(
    source: FileOrId,
    output: Output = None,
    in_place: InPlace = False,
    sanitize: Sanitize = False,
    salvage: SalvageFlag = False,
    as_json: Json = False,
    check: Check = False,
) -> int:
    """Check a history; repair it on request.

    Reports each repair with message index, role and tool name.

    Exit codes: 0 nothing to repair (or repaired as asked); 1 with --check when repairs
    are needed; 2 when the input cannot be read (the error names the position). Cut-off
    tool arguments are reported but never rewritten, so alone they need no repair."""
    from golem_cli.cli import common

    _refuse_conflicts(output, in_place=in_place, check=check)
    store = common.open_store()
    src = common.locate(source, store)
    _refuse_targets(src, output, in_place=in_place)
    lock = store.lock(src.cid) if (in_place and src.cid) else None
    try:
        result = _run(src, sanitize, salvage, numbered=not as_json)
        written, backup = _write(src, store, result, output, in_place)
    finally:
        if lock is not None:
            lock.release()
    with _report_stream(output):
        _print(src, sanitize, result, written, backup, as_json, asked=in_place or output is not None or check)
    return 1 if check and result.changed else 0


def _refuse_conflicts(output: Path | None, *, in_place: bool, check: bool) -> None:
    from golem_cli.cli.errors import InputError

    if output is not None and in_place:
        raise InputError("use either -o OUT or --in-place, not both")
    if check and (output is not None or in_place):
        raise InputError("--check only reports; drop -o/--in-place")


def _refuse_targets(src: Source, output: Path | None, *, in_place: bool) -> None:
    """Refuse to write where the result cannot go: standard input in place, or the input itself with -o."""
    from golem_cli.cli import common
    from golem_cli.cli.errors import InputError

    if in_place and src.stdin:
        raise InputError("--in-place needs a file or a stored conversation, not standard input; use -o OUT or -o -")
    if output is not None and not common.is_stdio(output) and _same_file(output, src.path):
        raise InputError(f"-o {output} is the input itself; --in-place replaces it and keeps a backup")


def _report_stream(output: Path | None) -> contextlib.AbstractContextManager[object]:
    """Where the report goes: stderr when the history itself is the output (``-o -``)."""
    import sys

    from golem_cli.cli import common

    return contextlib.redirect_stdout(sys.stderr) if common.is_stdio(output) else contextlib.nullcontext()


@dataclass
class _Result:
    messages_in: int
    out: list[Message]
    report: Any  # HistoryRepair or SanitizeReport: both have to_json()
    findings: list[Finding]
    salvaged: Salvage | None  # with --salvage: what could not be read
    sanitized_away: bool  # reported by no finding: empty user turns
    messages_out: int = field(init=False)
    changed: bool = field(init=False)

    def __post_init__(self) -> None:
        self.messages_out = len(self.out)  # the writer may use the messages up (codec.drain_chunks)
        self.changed = self.sanitized_away or bool(self.salvaged and self.salvaged.lost)


def _run(src: Source, sanitize: bool, salvage: bool, *, numbered: bool) -> _Result:
    from golem_cli.cli import common
    from golem_cli.cli.render import findings
    from golem_cli.core.errors import HistoryFormatError

    rescued = None
    if salvage:
        from golem_cli.cli.commands import salvage as damaged

        rescued = damaged.salvage(common.read_bytes(src))
        history = rescued.messages
    else:
        try:  # read a batch at a time: a long history is never held as bytes beside its messages
            history = common.read_messages(src)
        except HistoryFormatError as e:
            hint = f"`golem normalize --salvage {src.ref}` recovers its complete messages"
            raise HistoryFormatError(f"{e}; {hint}") from None
    if sanitize:
        from golem_cli.core.history.sanitize import sanitize_history

        out, sanitized = sanitize_history(history)
        found = findings.sanitize_findings(history, out, sanitized, numbered=numbered)
        return _Result(len(history), out, sanitized, found, rescued, common.differs(history, out))
    from golem_cli.core.history.repair import normalize_history

    out, repaired = normalize_history(history)
    found = findings.repair_findings(history, out, repaired, numbered=numbered)
    return _Result(len(history), out, repaired, found, rescued, common.differs(history, out))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _write(
    src: Source, store: Store, result: _Result, output: Path | None, in_place: bool
) -> tuple[str | None, str | None]:
    from golem_cli.cli import common
    from golem_cli.core.codec.history import drain_chunks

    # Streamed, and the messages freed as they are written (the result holds the only list of
    # them now): the file's bytes are never held whole beside the messages.
    if common.is_stdio(output):
        common.write_stdout(drain_chunks(result.out))
        return common.STDIO, None
    if output is not None:
        common.write_user_file(output, drain_chunks(result.out))
        return str(output), None
    if not in_place or not result.changed:
        return None, None
    if src.cid:
        backup = store.backup(src.cid)
        store.save(src.cid, result.out)
        return str(src.path), str(backup)
    backup = common.backup_file(src.path)
    common.write_user_file(src.path, drain_chunks(result.out))
    return str(src.path), str(backup)


def _print(
    src: Source, sanitize: bool, result: _Result, written: str | None, backup: str | None, as_json: bool, *, asked: bool
) -> None:
    from golem_cli.cli.render import console, report

    if as_json:
        console.print_json({
            "source": src.label, "conversationId": src.cid or None,
            "operation": "sanitize" if sanitize else "normalize",
            "messagesIn": result.messages_in, "messagesOut": result.messages_out, "changed": result.changed,
            "report": result.report.to_json(),  # the contract's own spelling (Go field names)
            "findings": report.findings_json(result.findings),
            "lost": None if result.salvaged is None else [lost.to_json() for lost in result.salvaged.lost],
            "written": written, "backup": backup,
        })  # fmt: skip
        return
    if result.salvaged is not None:
        from golem_cli.cli.commands.salvage import describe

        count = len(result.salvaged.messages)
        console.out(f"{src.label}: salvaged {count} complete message{'' if count == 1 else 's'}")
        for lost in result.salvaged.lost:
            console.out(f"  {describe(lost)}")
    count = result.messages_in
    console.out(f"{src.label}: {count} message{'' if count == 1 else 's'} in, {result.messages_out} out")
    if result.findings:
        report.print_findings(result.findings, styled=console.styled())
    if not result.changed:
        console.out("nothing to repair")
    elif not result.findings and result.sanitized_away:
        console.out("empty user messages removed (sanitize does not report them)")
    _print_where(src, sanitize, result, written, backup, asked=asked)


def _print_where(
    src: Source, sanitize: bool, result: _Result, written: str | None, backup: str | None, *, asked: bool
) -> None:
    """Where the result went, or, when it was not asked to go anywhere, how to write it."""
    from golem_cli.cli import common
    from golem_cli.cli.render import console, short_ids

    if written:
        where = "standard output" if written == common.STDIO else written
        console.out(f"wrote {where}" + (f" (backup: {backup})" if backup else ""))
    elif result.changed and not asked:
        verb = "normalize --sanitize" if sanitize else "normalize"
        ref = short_ids.handle(src.cid) if src.cid else src.ref
        console.out(f"not written: `golem {verb} {ref} -o OUT` or `--in-place` saves the repaired history")
