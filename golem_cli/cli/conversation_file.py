"""The golem conversation file (``export --format golem``, read back by ``import``): the
Go-compatible history with what golem knows beside it, in one JSON object::

    {"format": "golem-conversation", "version": 1, "messages": [...], "meta": {...}}

``messages`` is the history exactly as a Go program loads it (``[]model.Message``, byte for
byte what ``export --format json`` writes); ``meta`` is the conversation's sidecar metadata
in the ``--json`` style (camelCase): its title, model, lineage (``parent``, ``forkAt``), its
times, and every further fact the sidecar holds (chat settings, and the run ledger and
summaries when they exist), so that it stays open for them (docs/json.md). A reader takes what
it knows of ``meta`` and ignores the rest; a newer ``version`` is refused in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from golem_cli.cli.render.console import iso_time
from golem_cli.core.errors import InputError

if TYPE_CHECKING:
    from golem_cli.store.meta import ConversationMeta

FORMAT = "golem-conversation"
VERSION = 1
#: What the sidecar holds that the history file says anyway (counts, the summary, the size it
#: describes) or that describes the sidecar itself: not exported.
_DERIVED = frozenset({"messages", "size", "summary", "v", "changed"})


def meta_json(meta: ConversationMeta) -> dict[str, Any]:
    """The sidecar's facts as ``meta`` spells them: camelCase, lineage and times included,
    what the messages say anyway left out; ``forkAt`` and ``parent`` null when not a fork."""
    facts = {name: value for name, value in msgspec.structs.asdict(meta).items() if name not in _DERIVED}
    out = {_camel(name): value for name, value in facts.items()}
    out["created"], out["updated"] = iso_time(meta.created), iso_time(meta.updated)
    out["parent"] = meta.parent or None
    out["forkAt"] = meta.fork_at if meta.fork_at >= 0 else None
    return out


def document_chunks(
    messages_chunks: Iterable[bytes], meta: ConversationMeta, runs: Sequence[bytes] = ()
) -> Iterator[bytes]:
    """The file's bytes, the history streamed as it is encoded; ``runs``, the lines of the
    conversation's runs log (the ledger), go in ``meta.runs`` as the records they are."""
    yield b'{"format":"' + FORMAT.encode() + b'","version":%d,"messages":' % VERSION
    yield from messages_chunks
    facts: dict[str, Any] = meta_json(meta)
    if runs:
        facts["runs"] = [msgspec.Raw(line) for line in runs]
    yield b',"meta":' + msgspec.json.encode(facts) + b"}"


def run_lines(meta: dict[str, Any], limit: int) -> list[bytes]:
    """The runs log recorded in ``meta`` as log lines, each record encoded again on one line
    (what is not a JSON object is skipped; the log's reader skips records it does not know),
    at most ``limit`` bytes of them."""
    records = meta.get("runs")
    lines: list[bytes] = []
    size = 0
    for record in records if isinstance(records, list) else ():
        if not isinstance(record, dict):
            continue
        line = msgspec.json.encode(record)
        size += len(line) + 1
        if size > limit:
            break
        lines.append(line)
    return lines


class _Document(msgspec.Struct):
    format: str
    version: int
    messages: msgspec.Raw
    meta: dict[str, Any] = {}


def is_document(head: bytes) -> bool:
    """Whether a file that begins with ``head`` is a conversation file (an object), not a bare
    history (an array)."""
    return head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{"


def read_document(data: bytes, label: str) -> tuple[bytes, dict[str, Any]]:
    """(the history's bytes, ``meta``) of a conversation file; ``InputError`` in one line
    naming ``label`` for anything else (the history itself is then checked as any is)."""
    try:
        doc = msgspec.json.decode(data, type=_Document)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InputError(f"{label}: not a golem conversation file ({e}); a history is a JSON array") from None
    if doc.format != FORMAT:
        raise InputError(f"{label}: format {doc.format!r} is not {FORMAT!r}")
    if doc.version > VERSION:
        how = "export it with --format json to import the messages"
        raise InputError(f"{label}: a conversation file of version {doc.version}, newer than golem reads; {how}")
    return bytes(doc.messages), doc.meta


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return value if isinstance(value, str) else ""


def lineage(meta: dict[str, Any]) -> tuple[str, int]:
    """(parent, fork point) recorded in ``meta``, or ("", -1)."""
    fork_at = meta.get("forkAt")
    parent = _text(meta, "parent")
    if parent and isinstance(fork_at, int) and not isinstance(fork_at, bool) and fork_at >= 0:
        return parent.lower(), fork_at
    return "", -1


def chosen(meta: dict[str, Any]) -> tuple[str, str]:
    """(title, model) recorded in ``meta``."""
    return _text(meta, "title"), _text(meta, "model")


def own_id(meta: dict[str, Any]) -> str:
    """The conversation's ID recorded in ``meta`` (lowercase), or ""."""
    return _text(meta, "id").lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
