"""``golem export`` and ``golem import``: moving conversations in and out of the store.

Export writes exactly what a Go golem program reads (``--format json``) or a markdown
document for people. Import treats the file as untrusted: it is sanitized (system prompts
and non-http(s) URL parts removed, pairing repaired) unless ``--trust`` is given, and the
report says what was removed and where.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand
from golem_cli.cli.options import ConversationId

if TYPE_CHECKING:
    from collections.abc import Iterable

    from golem_cli.cli.common import Source as common_Source
    from golem_cli.cli.render.findings import Finding
    from golem_cli.core.history.sanitize import SanitizeReport
    from golem_cli.core.messages import Message
    from golem_cli.store import Store

PANEL = "Conversations"
app = typer.Typer()


class Format(enum.StrEnum):
    json = "json"
    golem = "golem"
    markdown = "markdown"


@app.command("export", cls=GolemCommand, rich_help_panel=PANEL)
def export(
    ref: ConversationId,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            "-f",
            metavar="json|golem|markdown",
            help="json: the Go-readable message array; golem: it with the title, model, lineage and settings "
            "(import reads it); markdown: a document.",
        ),
    ] = Format.json,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout (- is stdout)."),
    ] = None,
) -> int:
    """Export a conversation: JSON, a golem file or markdown.

    JSON is exactly what a Go golem program unmarshals as []model.Message; golem is an object
    holding that array and what golem knows beside it (docs/json.md)."""
    import sys

    from golem_cli.cli import common
    from golem_cli.cli.render import console

    if common.is_stdio(output):
        output = None
    store = common.open_store()
    cid = store.resolve(ref)
    messages = store.read(cid)  # never saved: decoded as the file is read
    count = len(messages)
    data = _exported(store, cid, messages, fmt)
    if output is not None:
        common.write_user_file(output, data)
        console.note(f"exported {count} messages of {cid} to {output}")
        return 0
    sys.stdout.flush()
    if fmt is Format.markdown and sys.stdout.isatty():  # a file or a pipe gets the bytes exactly
        from golem_cli.cli.render.terminal_text import visible

        data = [visible(b"".join(data).decode()).encode()]
    for chunk in data:
        sys.stdout.buffer.write(chunk)
    if fmt is not Format.markdown and sys.stdout.isatty():
        sys.stdout.buffer.write(b"\n")
    return 0


def _exported(store: Store, cid: str, messages: list[Message], fmt: Format) -> Iterable[bytes]:
    """The bytes ``export`` writes in format ``fmt``; JSON as it is encoded, each batch freed once
    written."""
    if fmt is Format.json:
        from golem_cli.core.codec.history import drain_chunks

        return drain_chunks(messages)
    if fmt is Format.golem:
        from golem_cli.cli.conversation_file import document_chunks
        from golem_cli.core.codec.history import drain_chunks
        from golem_cli.store.sidecars import RUNS, read_log

        runs = read_log(store.sidecar_path(cid, RUNS), RUNS).lines
        return document_chunks(drain_chunks(messages), store.meta(cid), runs)
    from golem_cli.cli.render.summary_marks import stored_marks
    from golem_cli.cli.render.transcript import markdown_document
    from golem_cli.store.sidecars.ledger import answered, runs_of

    marks = stored_marks(store, cid, messages)
    return [markdown_document(messages, store.meta(cid), cid, answered(runs_of(store, cid)), marks=marks).encode()]


HistoryFile = Annotated[
    Path,
    typer.Argument(
        metavar="FILE",
        help="A JSON array of golem messages, or a file of `export --format golem` (- reads standard input).",
    ),
]
Trust = Annotated[bool, typer.Option("--trust", help="Store the history as it is, without sanitizing.")]
Title = Annotated[str | None, typer.Option("--title", metavar="TEXT", help="A title for the imported conversation.")]
Json = Annotated[bool, typer.Option("--json", help="Print the result and the report as JSON.")]


@app.command("import", cls=GolemCommand, rich_help_panel=PANEL)
def import_history(file: HistoryFile, trust: Trust = False, title: Title = None, as_json: Json = False) -> int:
    """Import a history file as a new conversation.

    The history is sanitized unless --trust.

    Sanitizing removes system prompts and URL parts that are not http(s) and pairs tool
    calls with results; the report names each change. The conversation keeps the file's
    own ID (its name, or its messages' conversation ID) when free, else gets a new one."""
    from golem_cli.cli import common
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render import console, report
    from golem_cli.core.errors import HistoryFormatError

    store = common.open_store()
    source = common.standard_input() if common.is_stdio(file) else common.Source(str(file), file)
    label = source.label
    try:
        history, meta = _read_import(source)
    except HistoryFormatError as e:
        raise HistoryFormatError(
            f"{e}; `golem normalize --salvage {source.ref} -o OUT.json` keeps its complete messages to import"
        ) from None
    if not history:
        raise InputError(f"{label}: holds no messages; nothing to import")
    out, rep, found = (history, None, []) if trust else _sanitized(history, label)
    from golem_cli.cli.conversation_file import chosen, lineage, own_id

    own, why = _own_id(file, history, store, own_id(meta))
    kept_title, model = chosen(meta)
    parent, fork_at = lineage(meta)
    cid = store.create(out, cid=own, title=title or kept_title, model=model, parent=parent, fork_at=fork_at)
    _restore_runs(store, cid, meta)
    if why:
        console.note(why)
    if as_json:
        console.print_json(
            {
                "id": cid,
                "source": label,
                "trusted": trust,
                "messagesIn": len(history),
                "messagesOut": len(out),
                "changed": common.differs(history, out),
                "report": rep.to_json() if rep is not None else None,  # the contract's spelling
                "findings": report.findings_json(found),
                "note": why or None,
            }
        )
        return 0
    if found:
        console.out(f"{label}: sanitized, {len(found)} finding(s):")
        report.print_findings(found, styled=console.styled())
    elif not trust:
        console.out(f"{label}: nothing to sanitize")
    console.out(f"imported {len(out)} {'message' if len(out) == 1 else 'messages'} as {cid}")
    return 0


def _sanitized(history: list[Message], label: str) -> tuple[list[Message], SanitizeReport, list[Finding]]:
    """The history sanitized, the report of what changed, and its findings to print."""
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render.findings import sanitize_findings
    from golem_cli.core.history.sanitize import sanitize_history

    out, rep = sanitize_history(history)
    if not out:
        raise InputError(f"{label}: nothing is left once sanitized (--trust imports it as it is)")
    return out, rep, sanitize_findings(history, out, rep)


def _restore_runs(store: Store, cid: str, meta: dict[str, object]) -> None:
    """The run ledger a golem conversation file carries, as the new conversation's runs log
    (``golem show`` and ``usage`` read it; a run counts once however many copies hold it)."""
    from golem_cli.cli.conversation_file import run_lines
    from golem_cli.store.sidecars import RUNS, copy_lines

    lines = run_lines(meta, RUNS.limit)
    if lines:
        copy_lines(store.sidecar_path(cid, RUNS), lines)


def _read_import(source: common_Source) -> tuple[list[Message], dict[str, object]]:
    """The history of a file to import, and the ``meta`` of a golem conversation file ({} for
    a bare history): the first bytes tell which it is."""
    from golem_cli.cli import common
    from golem_cli.cli.conversation_file import is_document, read_document

    if source.stdin:
        data = common.read_bytes(source)
    else:
        if not is_document(_head(source.path)):
            return common.read_messages(source, missing="no such file"), {}
        data = common.read_bytes(source, missing="no such file")
    if not is_document(data):
        return common.parse_history(data, source.label), {}
    messages, meta = read_document(data, source.label)
    return common.parse_history(messages, source.label), meta


def _head(path: Path) -> bytes:
    """The first bytes of the file to import, read as every outside file is (a FIFO or a
    device refused, never waited on); b"" when it cannot be read (``read_messages`` says why)."""
    from golem_cli.store.files import UnreadableFile, read_pieces

    pieces = read_pieces(path, 1 << 62, piece=64)  # the size is read_messages's to bound
    try:
        return next(pieces, b"")
    except (UnreadableFile, OSError):
        return b""
    finally:
        pieces.close()


def _own_id(file: Path, history: list[Message], store: Store, recorded: str = "") -> tuple[str | None, str]:
    """The file's own conversation ID when it is free: the one a conversation file records,
    else the file name (a copy of a stored conversation), else the conversation ID stamped on
    its last messages."""
    from golem_cli.store import is_conversation_id

    candidates = [recorded] if is_conversation_id(recorded) else []
    if file.name.endswith(".json") and is_conversation_id(file.name[:-5]):
        candidates.append(file.name[:-5])
    stamped = next((m.conversation_id for m in reversed(history) if m.conversation_id), "")
    if stamped and is_conversation_id(stamped.lower()):
        candidates.append(stamped.lower())
    for cid in candidates:
        if not store.exists(cid):
            return cid, ""
    if candidates:
        return None, f"conversation {candidates[0]} is already stored; imported under a new ID"
    return None, ""
