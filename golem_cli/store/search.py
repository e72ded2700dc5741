"""Finding conversations by what was said in them.

A query is either plain text, found anywhere in a message's text whatever the case (what
``golem search`` has always done), or, as soon as it holds a double quote or a word ending in
``*``, a list of terms that must all occur in one message, each on word boundaries:

- ``"exact phrase"``: these words in this order (any spacing between them);
- ``word*``: a word that starts with ``word``;
- ``word``: that word.

Case is ignored by ``str.casefold`` (``STRASSE`` finds ``Straße``). The index's trigram FTS5
table (index.py) narrows the messages to those containing every term of three characters or
more; each candidate is then checked here, in Python, so a hit is always a real one and the
matching line is the one printed. Terms shorter than three characters cannot use the trigram
index: those queries read every message's text from the index (still without decoding any
file).

When the index cannot answer (missing, from another version of golem, corrupt) or holds the
text of only some conversations, the other conversations' files are searched directly
(textscan.py, at about ``grep``'s speed) and checked by the same code, so the hits are the
same; ``Found.behind`` then tells the caller to have the index built in the background.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from golem_cli.store.index import MESSAGE_BITS, SEPARATOR, message_text

if TYPE_CHECKING:
    from golem_cli.store.meta import ConversationMeta
    from golem_cli.store.store import Store
    from golem_cli.store.textscan import Prefilter

# --- queries -----------------------------------------------------------------------------------

SNIPPET = 70
TRIGRAM = 3
SYSTEM = "system"  # core.messages.SYSTEM, without importing the messages module here


# Plain classes, not dataclasses: creating a dataclass costs about a millisecond at import,
# and a search without the index is measured against grep.


class Hit:
    """The first matching message of one conversation: ``message_index`` counts from 0 in the
    file's array (what a program indexes), ``number`` as ``golem show`` and ``fork --at``
    number messages (core/history/numbering.py: from 1, system messages aside; None for one)."""

    __slots__ = ("message_index", "meta", "number", "role", "snippet")

    def __init__(self, meta: ConversationMeta, message_index: int, role: str, snippet: str, number: int | None) -> None:
        self.meta = meta
        self.message_index = message_index
        self.role = role
        self.snippet = snippet
        self.number = number

    def __repr__(self) -> str:
        return f"Hit({self.meta.id!r}, {self.message_index}, {self.role!r}, {self.snippet!r})"


class Query:
    """A parsed query: ``literals`` are what the FTS index must contain (each case-folded),
    ``patterns`` what a message's text must match (all of them; plain text: one substring)."""

    __slots__ = ("literals", "patterns", "text")

    def __init__(self, text: str, literals: tuple[str, ...], patterns: tuple[re.Pattern[str], ...] = ()) -> None:
        self.text = text
        self.literals = literals
        self.patterns = patterns

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
            folded = [p.casefold() for p in parts]
            literals.extend(folded)
            body = r"\s+".join(re.escape(p) for p in folded)
            patterns.append(re.compile(rf"(?<!\w){body}(?!\w)"))
        elif word.endswith("*") and len(word) > 1:
            stem = word.rstrip("*").casefold()
            literals.append(stem)
            patterns.append(re.compile(rf"(?<!\w){re.escape(stem)}"))
        else:
            literals.append(word.casefold())
            patterns.append(re.compile(rf"(?<!\w){re.escape(word.casefold())}(?!\w)"))
    if not patterns:  # nothing but quotes: the text itself
        return Query(text, (text.casefold(),))
    return Query(text, tuple(literals), tuple(patterns))


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET // 2)
    piece = " ".join(text[start : start + SNIPPET + length].split())
    return ("…" if start else "") + piece + ("…" if start + SNIPPET + length < len(text) else "")


def _folded_snippet(piece: str, folded: str, start: int, end: int) -> str:
    """The snippet around ``folded[start:end]`` (a match in ``piece.casefold()``), cut from
    the original piece: the positions are the same unless folding changed a length (ß)."""
    if len(folded) != len(piece):
        at = n = 0
        while at < len(piece) and n + len(piece[at].casefold()) <= start:
            n += len(piece[at].casefold())
            at += 1
        last = at
        while last < len(piece) and n < end:
            n += len(piece[last].casefold())
            last += 1
        start, end = at, last
    return _snippet(piece, start, end - start)


def _match(query: Query, body: str) -> str | None:
    """The snippet of the first match of ``query`` in a message's text, or None. Every
    piece of the text (content, each thinking block, tool names and arguments) is matched on
    its own, case-folded."""
    pieces = body.split(SEPARATOR)
    folded = [piece.casefold() for piece in pieces]
    if not query.patterns:
        needle = query.literals[0]
        for piece, low in zip(pieces, folded, strict=True):
            at = low.find(needle)
            if at >= 0:
                return _folded_snippet(piece, low, at, at + len(needle))
        return None
    first: tuple[int, re.Match[str]] | None = None
    for pattern in query.patterns:
        found = next(((i, m) for i, low in enumerate(folded) if (m := pattern.search(low)) is not None), None)
        if found is None:
            return None
        first = first or found
    assert first is not None
    i, m = first
    return _folded_snippet(pieces[i], folded[i], m.start(), m.end())


class Found:
    """What a search found. ``unreadable``: (ID, problem) of conversations skipped because
    their file cannot be read. ``behind``: the index does not hold every conversation's text
    yet (the caller should have it built: ``Store.index_later``). ``prefixes``: for each hit,
    how many characters of its ID are unique in the store."""

    __slots__ = ("behind", "hits", "prefixes", "unreadable")

    def __init__(
        self,
        hits: list[Hit],
        unreadable: list[tuple[str, str]] | None = None,
        behind: bool = False,
        prefixes: dict[str, int] | None = None,
    ) -> None:
        self.hits = hits
        self.unreadable = unreadable or []
        self.behind = behind
        self.prefixes = prefixes or {}


def search(store: Store, query: str, limit: int | None = None, *, role: str = "", since: float = 0.0) -> list[Hit]:
    """The first matching message of each conversation, most recently updated first.
    ``role`` keeps only messages of that role; ``since`` only conversations updated at or
    after that time (Unix seconds)."""
    return find(store, query, limit, role=role, since=since).hits


def find(store: Store, query: str, limit: int | None = None, *, role: str = "", since: float = 0.0) -> Found:
    """``search`` with what the caller reports around the hits (see ``Found``)."""
    parsed = parse_query(query)
    if not os.path.exists(store.index_path):  # no index: not even its module is imported
        return _from_files(store, parsed, _prefilter(parsed), limit, role, since)
    plan = store.index.search_plan()
    if plan is None:  # no index to answer from: every file
        return _from_files(store, parsed, _prefilter(parsed), limit, role, since)
    hits: list[Hit] = []
    unreadable: dict[str, str] = {}
    if plan:  # conversations whose text is not indexed yet: from their files
        hits = _check_files(store, parsed, _prefilter(parsed), plan, role, since, unreadable)
    from heapq import merge

    hits = _first(merge(hits, _from_index(store, parsed, role, since), key=_newest_first), limit)
    problems = store.unreadable()
    prefixes = store.unique_prefixes(h.meta.id for h in hits) if hits else {}
    return Found(hits, sorted(set(problems) | set(unreadable.items())), bool(plan), prefixes)


def _prefilter(parsed: Query) -> Prefilter:
    """The byte prefilter for the files a search reads (textscan.py: imported only then)."""
    from golem_cli.store.textscan import Prefilter

    return Prefilter.of(parsed.literals)


def _newest_first(hit: Hit) -> tuple[float, str]:
    return (-hit.meta.updated, hit.meta.id)


def _first(hits: Iterable[Hit], limit: int | None) -> list[Hit]:
    """The first ``limit`` hits, one per conversation (a conversation indexed by another
    process while this search ran comes from both sides)."""
    out: list[Hit] = []
    seen: set[str] = set()
    for hit in hits:
        if limit is not None and len(out) >= limit:
            break
        if hit.meta.id not in seen:
            seen.add(hit.meta.id)
            out.append(hit)
    return out


def _from_index(store: Store, parsed: Query, role: str, since: float) -> Iterator[Hit]:
    """The first match in each conversation whose text the index holds, newest first."""
    seen: set[str] = set()
    for meta, index, role_, body in store.index.candidates(parsed.fts(), role=role, since=since):
        if meta.id in seen:
            continue
        snippet = _match(parsed, body)
        if snippet is not None:
            seen.add(meta.id)
            number = None if role_ == SYSTEM else index + 1 - store.index.system_messages_before(meta.id, index)
            yield Hit(meta, index, role_, snippet, number)


def _from_files(store: Store, parsed: Query, prefilter: Prefilter, limit: int | None, role: str, since: float) -> Found:
    """The search without an index: every messages file through the prefilter, then the
    candidates' metadata (sidecars), then their messages, newest first until ``limit``."""
    from golem_cli.store.textscan import message_files, scan_files

    directory = str(store.conversations_dir)
    names, exists = message_files(directory)
    scan = scan_files(directory, names, prefilter, store.max_history_bytes)
    unreadable = {name[:-5]: why for name, why in scan.problems.items()}
    hits: list[Hit] = []
    if scan.candidates:
        from golem_cli.store.meta import build_entry, read_sidecar, signature

        metas: list[ConversationMeta] = []
        for name, size in scan.candidates:
            cid = name[:-5]
            sidecar, _ = read_sidecar(store.conversations_dir, cid)
            if sidecar is not None and sidecar.size == size:  # what build_entry would say, sooner
                metas.append(sidecar)
                continue
            try:
                entry = build_entry(store.conversations_dir, cid, signature(os.stat(f"{directory}{os.sep}{name}")),
                                    limit=store.max_history_bytes)  # fmt: skip
            except FileNotFoundError:
                continue
            if entry.problem:
                unreadable[cid] = entry.problem
            else:
                metas.append(entry.meta)
        hits = _first(_check_files(store, parsed, prefilter, metas, role, since, unreadable, limit), limit)
    prefixes: dict[str, int] = {}
    if hits:
        from golem_cli.store.refs import unique_prefix_among

        ids = sorted(name[:-5] for name in names)
        prefixes = {h.meta.id: unique_prefix_among(ids, h.meta.id) for h in hits}
    return Found(hits, sorted(unreadable.items()), exists, prefixes)


def _check_files(
    store: Store,
    parsed: Query,
    prefilter: Prefilter,
    metas: list[ConversationMeta],
    role: str,
    since: float,
    unreadable: dict[str, str],
    limit: int | None = None,
) -> list[Hit]:
    """The first match in each of these conversations, newest first, read from their files
    (only those the prefilter admits are decoded), at most ``limit`` of them."""
    from golem_cli.core.codec.history import load_history
    from golem_cli.core.errors import HistoryFormatError
    from golem_cli.core.history.numbering import number_of
    from golem_cli.store.files import read_regular
    from golem_cli.store.textscan import problem_text

    hits: list[Hit] = []
    for meta in sorted((m for m in metas if m.updated >= since), key=lambda m: (-m.updated, m.id)):
        if limit is not None and len(hits) >= limit:
            break
        try:
            data = read_regular(store.messages_path(meta.id), store.max_history_bytes, follow=False)
            if not prefilter.admits(data):
                continue
            messages = load_history(data)
        except FileNotFoundError:
            continue
        except (OSError, HistoryFormatError) as e:
            unreadable[meta.id] = problem_text(e)
            continue
        for index, message in enumerate(messages[: 1 << MESSAGE_BITS]):
            if role and message.role != role:
                continue
            snippet = _match(parsed, message_text(message))
            if snippet is not None:
                hits.append(Hit(meta, index, message.role, snippet, number_of(messages, index)))
                break
    return hits
