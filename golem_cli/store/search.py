"""Finding conversations by what was said in them.

A query is either plain text, found anywhere in a message's text whatever the case (what
``golem search`` has always done), or, as soon as it holds a double quote or a word ending in
``*``, a list of terms that must all occur in one message, each on word boundaries:

- ``"exact phrase"``: these words in this order (any spacing between them);
- ``word*``: a word that starts with ``word``;
- ``word``: that word.

The index's trigram FTS5 table (index.py) narrows the messages to those containing every term
of three characters or more, whatever the case; each candidate is then checked here, in
Python, so a hit is always a real one and the matching line is the one printed. Terms shorter
than three characters cannot use the trigram index: those queries read every message's text
from the index (still without decoding any file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from golem_cli.store.index import SEPARATOR

if TYPE_CHECKING:
    from golem_cli.store.meta import ConversationMeta
    from golem_cli.store.store import Store

SNIPPET = 70
TRIGRAM = 3


@dataclass(frozen=True)
class Hit:
    meta: ConversationMeta
    message_index: int
    role: str
    snippet: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.meta.id, "title": self.meta.display_title, "updated": self.meta.updated,
                "message_index": self.message_index, "role": self.role, "snippet": self.snippet}  # fmt: skip


@dataclass(frozen=True)
class Query:
    """A parsed query: ``literals`` are what the FTS index must contain (each case-folded),
    ``patterns`` what a message's text must match (all of them; plain text: one substring)."""

    text: str
    literals: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...] = ()

    def fts(self) -> str | None:
        """The FTS5 expression: every literal long enough for the trigram index, quoted."""
        usable = [lit for lit in self.literals if len(lit) >= TRIGRAM]
        return " AND ".join('"' + lit.replace('"', '""') + '"' for lit in usable) if usable else None


_TERM = re.compile(r'"([^"]*)"?|(\S+)')


def parse_query(text: str) -> Query:
    """Plain text, or terms (``"phrase"``, ``prefix*``, ``word``) when ``text`` has a double
    quote or a word ending in ``*`` (see the module docstring)."""
    words = text.split()
    if '"' not in text and not any(w.endswith("*") and len(w) > 1 for w in words):
        return Query(text, (text.casefold(),))
    literals: list[str] = []
    patterns: list[re.Pattern[str]] = []
    for m in _TERM.finditer(text):
        phrase, word = m.group(1), m.group(2)
        if phrase is not None:
            parts = phrase.split()
            if not parts:
                continue
            body = r"\s+".join(re.escape(p) for p in parts)
            literals.extend(p.casefold() for p in parts)
            patterns.append(re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE))
        elif word.endswith("*") and len(word) > 1:
            stem = word.rstrip("*")
            literals.append(stem.casefold())
            patterns.append(re.compile(rf"(?<!\w){re.escape(stem)}", re.IGNORECASE))
        else:
            literals.append(word.casefold())
            patterns.append(re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE))
    return Query(text, tuple(literals), tuple(patterns))


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET // 2)
    piece = " ".join(text[start : start + SNIPPET + length].split())
    return ("…" if start else "") + piece + ("…" if start + SNIPPET + length < len(text) else "")


def _match(query: Query, body: str) -> str | None:
    """The snippet of the first match of ``query`` in a message's text, or None."""
    pieces = body.split(SEPARATOR)
    if not query.patterns:
        needle = query.literals[0]
        for piece in pieces:
            at = piece.casefold().find(needle)
            if at >= 0:
                return _snippet(piece, at, len(query.text))
        return None
    first: tuple[str, re.Match[str]] | None = None
    for pattern in query.patterns:
        found = next(((p, m) for p in pieces if (m := pattern.search(p)) is not None), None)
        if found is None:
            return None
        first = first or found
    assert first is not None
    piece, m = first
    return _snippet(piece, m.start(), m.end() - m.start())


def search(store: Store, query: str, limit: int | None = None, *, role: str = "", since: float = 0.0) -> list[Hit]:
    """The first matching message of each conversation, most recently updated first.
    ``role`` keeps only messages of that role; ``since`` only conversations updated at or
    after that time (Unix seconds)."""
    parsed = parse_query(query)
    store.index.update_texts()
    hits: list[Hit] = []
    seen: set[str] = set()
    for meta, index, role_, body in store.index.candidates(parsed.fts(), role=role, since=since):
        if limit is not None and len(hits) >= limit:
            break
        if meta.id in seen:
            continue
        snippet = _match(parsed, body)
        if snippet is not None:
            seen.add(meta.id)
            hits.append(Hit(meta, index, role_, snippet))
    return hits
