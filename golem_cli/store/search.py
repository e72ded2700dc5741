"""Finding conversations by what was said in them.

A query is either plain text, found anywhere in a message's text whatever the case (what
``golem search`` has always done), or, as soon as it holds a double quote or a word ending in
``*``, a list of terms that must all occur in one message, each on word boundaries:

- ``"exact phrase"``: these words in this order (any spacing between them);
- ``word*``: a word that starts with ``word``;
- ``word``: that word.

Case is ignored by ``str.casefold`` (``STRASSE`` finds ``Straße``). A message's text is its
content, each thinking block, and each tool call's name and arguments, matched one piece at a
time (``message_text``).

The index (index.py) holds each conversation's distinct words (``indexed_text``: its text
case-folded, cut at every ASCII character that is not a letter, a digit or ``_``) in an FTS5
table of trigrams; a search asks it for the conversations holding every trigram within the
words of its terms, cut the same way (``Query.fts``), or, for words shorter than three
characters, reads their words and keeps those where each of its words is part of one
(``Query.admits``). A match is a substring of one message's folded text, so each word of it is
part of a word of that text: the index never drops a conversation that matches. It only
narrows: each conversation it names is then read from its file and its messages are matched
here (``first_hit``), so a hit is always true of the file and its line is the one printed. This
module reads no file and no database.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from golem_cli.core.history.numbering import number_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from golem_cli.core.messages import Message
    from golem_cli.store.meta import ConversationMeta

SNIPPET = 70
TRIGRAM = 3
#: Between the texts of one message (content, thinking blocks, tool names and arguments), and
#: between messages in the index: a search never matches across it.
SEPARATOR = "\x1e"


def message_text(message: Message) -> str:
    """What a search looks at in one message, its pieces joined by ``SEPARATOR``. For a
    message read from a file, tool-call arguments are the file's own text; the index writes a
    save through with the arguments as the file holds them (``codec.as_saved``)."""
    pieces = [message.content]
    pieces.extend(block.text for block in message.thinking)
    for call in message.tool_calls:
        pieces.append(call.name)
        pieces.append(call.args)
    return SEPARATOR.join(piece for piece in pieces if piece) if len(pieces) > 1 else message.content


def indexed_text(messages: Iterable[Message]) -> str:
    """The text the index holds for ``messages``: the distinct words of their text."""
    return indexed_words(map(message_text, messages))


def indexed_words(texts: Iterable[str]) -> str:
    """The distinct words of ``texts``, case-folded, joined by spaces (in no particular order).

    SQLite folds case one character at a time, by its own table, so the words are held already
    folded by ``str.casefold`` and the index is told not to fold them again (``ß`` then matches
    ``ss`` as a search matches it). Real text repeats its words: the table then tokenizes each
    once per conversation, not once per use."""
    folded = SEPARATOR.join(texts).casefold()
    try:
        data = folded.encode()
    except UnicodeEncodeError:  # a lone surrogate (only ever in memory)
        data = _held(folded).encode()
    return b" ".join(set(data.translate(_CUT).split())).decode()


def words(text: str) -> list[str]:
    """``text`` (folded and held as the index holds text) cut into words as ``indexed_words`` cuts."""
    return [w.decode() for w in text.encode().translate(_CUT).split()]


#: Every ASCII byte that is not a letter, a digit or ``_`` becomes a space; a byte of a
#: character beyond ASCII is never one of them, so a cut never falls inside a character.
_CUT = bytes(b if b >= 0x80 or chr(b).isalnum() or b == ord("_") else 0x20 for b in range(256))


def _held(text: str) -> str:
    """``text`` as SQLite can hold it: a lone surrogate (only ever in memory; a file holds
    U+FFFD there) becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")


class Hit:
    """The first matching message of one conversation: ``message_index`` counts from 0 in the
    file's array (what a program indexes), ``number`` as ``golem show`` and ``fork --at``
    number messages (core/history/numbering.py: from 1, system messages aside; None for one).
    ``forks``: the forks whose first hit is this same message, copied (``shared_with_forks``)."""

    __slots__ = ("forks", "message_index", "meta", "number", "role", "snippet")

    def __init__(self, meta: ConversationMeta, message_index: int, role: str, snippet: str, number: int | None) -> None:
        self.meta = meta
        self.message_index = message_index
        self.role = role
        self.snippet = snippet
        self.number = number
        self.forks: list[str] = []

    def __repr__(self) -> str:
        return f"Hit({self.meta.id!r}, {self.message_index}, {self.role!r}, {self.snippet!r})"


class Found:
    """What a search found: the hits, newest conversation first; ``unreadable``: (ID, problem)
    of conversations skipped because their file cannot be read; ``prefixes``: for each hit, how
    many characters of its ID are unique in the store."""

    __slots__ = ("hits", "prefixes", "unreadable")

    def __init__(self, hits: list[Hit], unreadable: list[tuple[str, str]], prefixes: dict[str, int]) -> None:
        self.hits = hits
        self.unreadable = unreadable
        self.prefixes = prefixes


class Query:
    """A parsed query: ``literals`` are what a message's text must contain (each case-folded),
    ``patterns`` what it must match (all of them; plain text: one substring)."""

    __slots__ = ("literals", "patterns", "text", "words")

    def __init__(self, text: str, literals: tuple[str, ...], patterns: tuple[re.Pattern[str], ...] = ()) -> None:
        self.text = text
        self.literals = literals
        self.patterns = patterns
        self.words = tuple(dict.fromkeys(w for lit in literals for w in words(_held(lit))))  # as the index cuts text

    def fts(self) -> str | None:
        """The FTS5 expression for the index's trigram table: every trigram within its words
        (the table keeps no positions, so not the words themselves); None when no word is long
        enough."""
        trigrams = dict.fromkeys(w[i : i + TRIGRAM] for w in self.words for i in range(len(w) - TRIGRAM + 1))
        return " AND ".join('"' + t.replace('"', '""') + '"' for t in trigrams) if trigrams else None

    def admits(self, text: str) -> bool:
        """Whether the words the index holds (``indexed_text``) may hold a match: each of the
        query's words is part of one of them (none holds a space)."""
        return all(w in text for w in self.words)


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


def shared_with_forks(hits: list[Hit]) -> list[Hit]:
    """One hit per message: a fork's hit on a message it copied from its parent, when the
    parent's hit is that message too, is named on the parent's hit (``Hit.forks``) instead of
    repeated (a parent with two forks gave three identical hits). Order is kept otherwise."""
    by_id = {hit.meta.id: hit for hit in hits}
    kept: list[Hit] = []
    for hit in hits:
        top = _origin(hit, by_id)
        if top is hit:
            kept.append(hit)
        else:
            top.forks.append(hit.meta.id)
    return kept


def _copied(hit: Hit, parent: Hit) -> bool:
    """Whether the fork's ``hit`` is the parent's hit, copied: the same message, before the fork point."""
    same = (hit.message_index, hit.role, hit.snippet) == (parent.message_index, parent.role, parent.snippet)
    return same and (hit.number is None or hit.number <= hit.meta.fork_at)


def first_hit(query: Query, meta: ConversationMeta, messages: list[Message], role: str = "") -> Hit | None:
    """The first message of a conversation that matches ``query`` (of ``role``, when given)."""
    for index, message in enumerate(messages):
        if role and message.role != role:
            continue
        snippet = _match(query, message_text(message))
        if snippet is not None:
            return Hit(meta, index, message.role, snippet, number_of(messages, index))
    return None


#: A conversation's place in a search's order (newest first, then by ID): ``(-updated, id)``.
Place = tuple[float, str]


def place(meta: ConversationMeta) -> Place:
    return (-meta.updated, meta.id)


class Forks:
    """The store's forks, each with its parent (``parents``), and the metadata of every
    conversation among them, forks and parents, that a search can reach (``metas``)."""

    def __init__(self, parents: dict[str, str], metas: dict[str, ConversationMeta]) -> None:
        self.parents = parents
        self.metas = metas
        self.children: dict[str, list[str]] = {}
        for fork, parent in parents.items():
            self.children.setdefault(parent, []).append(fork)

    def descendants(self, cid: str) -> list[str]:
        """The forks of ``cid``, their forks, and so on."""
        found: list[str] = []
        seen = {cid}
        stack = [cid]
        while stack:
            for child in self.children.get(stack.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    stack.append(child)
        return found

    def family(self, cid: str) -> list[str]:
        """``cid``'s ancestors and descendants: the conversations whose hits decide whether a
        hit in ``cid`` is a copy of another (``shared_with_forks``) and which copies it names."""
        family = self.descendants(cid)
        seen = {cid, *family}
        up = self.parents.get(cid)
        while up is not None and up not in seen:
            seen.add(up)
            family.append(up)
            up = self.parents.get(up)
        return family


class Stream:
    """The hits of a search, each given as it is found, folded as ``shared_with_forks`` folds
    them all. A hit in a family of forks is decided at once: the hits of the family's other
    conversations that the search has not reached yet are looked up ahead of it (``ahead``:
    the first hit of a conversation, or None), so only a family's hits are remembered. Without
    ``forks`` (a search with a limit: its answer depends on where it stops) every hit is held
    to the end."""

    def __init__(self, forks: Forks | None, ahead: Callable[[ConversationMeta], Hit | None]) -> None:
        self.forks = forks
        self.ahead = ahead
        self.family: dict[str, Hit] = {}
        self.looked: set[str] = set()
        self.all: list[Hit] = []

    def add(self, hit: Hit) -> list[Hit]:
        """The hits to give now that ``hit`` is found (the search has reached its place)."""
        forks = self.forks
        cid = hit.meta.id
        if forks is None:
            self.all.append(hit)
            return []
        if cid not in forks.parents and cid not in forks.children:
            return [hit]
        self.family[cid] = hit
        at = place(hit.meta)
        for kin in forks.family(cid):
            meta = forks.metas.get(kin)
            if meta is not None and kin not in self.looked and place(meta) > at:  # not reached yet
                self.looked.add(kin)
                found = self.ahead(meta)
                if found is not None:
                    self.family[kin] = found
        if _origin(hit, self.family) is not hit:
            return []  # a copy: its origin's hit names it
        kin_hits = [self.family[c] for c in forks.descendants(cid) if c in self.family]
        kin_hits.sort(key=lambda k: place(k.meta))
        hit.forks = [k.meta.id for k in kin_hits if _origin(k, self.family) is hit]
        return [hit]

    def end(self) -> list[Hit]:
        """The hits still held, the search done."""
        return shared_with_forks(self.all) if self.forks is None else []


def _origin(hit: Hit, by_id: dict[str, Hit]) -> Hit:
    """The hit that ``hit`` is a copy of, up its forks' parents (itself when none)."""
    seen = {hit.meta.id}
    while (parent := by_id.get(hit.meta.parent)) is not None and parent.meta.id not in seen:
        if not _copied(hit, parent):
            break
        seen.add(parent.meta.id)
        hit = parent
    return hit
