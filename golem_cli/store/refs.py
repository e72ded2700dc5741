"""Conversation IDs and the references users type for them.

A conversation ID is a canonical lowercase UUID (golem mints UUIDv7, so IDs sort by creation
time). A reference is an ID, any unique prefix of one, any unique tail of one, or ``last``; a tail
match wins over a prefix match.
UUIDv7 IDs begin with a timestamp, so IDs made within a minute share their first 8-10
characters, while their last characters are random and differ at once: the tail is the short
thing to type, the prefix what sorts (and what the CLI highlights, as jj highlights change IDs).
The syntax is checked here, before anything touches the file system: a reference that passes
can only name a file inside the store's directory, so ``../x`` or ``/etc/passwd`` never reach it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from golem_cli.store.errors import AmbiguousReference, ConversationNotFound, InvalidReference

LAST = "last"
ID_LENGTH = 36
_DASHES = (8, 13, 18, 23)
_HEX = frozenset("0123456789abcdef")
_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
MAX_CANDIDATES_SHOWN = 10
HANDLE_LENGTH = 12  # the random tail of a UUIDv7


def handle(cid: str) -> str:
    """The reference golem prints for ``cid`` to copy: its random tail, which later IDs do not
    share (a tail wins over a prefix when it is typed back, ``match_reference``)."""
    return cid[-HANDLE_LENGTH:]


def is_conversation_id(text: str) -> bool:
    """Whether ``text`` is a full conversation ID (canonical lowercase UUID)."""
    return len(text) == ID_LENGTH and _ID_RE.match(text) is not None


def _fits(text: str, start: int) -> bool:
    """Whether ``text`` could sit in an ID at ``start``: dashes where an ID has them, hex elsewhere."""
    for i, ch in enumerate(text, start):
        if (ch != "-") if i in _DASHES else (ch not in _HEX):
            return False
    return True


def _is_id_prefix(text: str) -> bool:
    return 1 <= len(text) <= ID_LENGTH and _fits(text, 0)


def _is_id_tail(text: str) -> bool:
    return 1 <= len(text) <= ID_LENGTH and _fits(text, ID_LENGTH - len(text))


def parse_reference(ref: str) -> str:
    """Validate what a user typed and return it normalized (lowercase), or ``last``.

    Raises ``InvalidReference`` for anything that is neither the start nor the end of an ID;
    the message says what an ID looks like.
    """
    text = ref.strip().lower()
    if text == LAST or _is_id_prefix(text) or _is_id_tail(text):
        return text
    raise InvalidReference(
        f"not a conversation ID: {ref!r} (IDs look like 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b; type its first or "
        "last characters, `golem list` shows them, `last` is the newest)"
    )


def match_reference(ref: str, ids: Iterable[str]) -> str:
    """The one ID in ``ids`` that ends with ``ref`` or, when none does, starts with it (already
    validated). A tail wins because it is what golem prints to copy (``handle``):
    a prefix of a later ID that happens to equal it must not make a printed command ambiguous.

    Raises ``ConversationNotFound`` or ``AmbiguousReference`` (naming the candidates).
    """
    tails: set[str] = set()
    prefixes: set[str] = set()
    for i in ids:
        if i.endswith(ref):
            tails.add(i)
        elif i.startswith(ref):
            prefixes.add(i)
    found = sorted(tails or prefixes)
    if not found:
        raise ConversationNotFound(f"no conversation ID starts or ends with {ref!r} (`golem list` shows them)")
    if len(found) > 1:
        shown = ", ".join(found[:MAX_CANDIDATES_SHOWN])
        more = f" and {len(found) - MAX_CANDIDATES_SHOWN} more" if len(found) > MAX_CANDIDATES_SHOWN else ""
        raise AmbiguousReference(
            f"{ref!r} matches {len(found)} conversations: {shown}{more}; type more of the ID "
            "(its last characters differ soonest)",
            found,
        )
    return found[0]


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def unique_prefix_length(cid: str, others: Iterable[str]) -> int:
    """How many leading characters of ``cid`` tell it apart from every ID in ``others``
    (at least 1, never ending on a dash). For sorted IDs its two neighbours suffice."""
    length = 1
    for other in others:
        if other != cid:
            length = max(length, _common(cid, other) + 1)
    length = min(length, ID_LENGTH)
    while length < ID_LENGTH and length - 1 in _DASHES:
        length += 1
    return length


def unique_prefix_among(sorted_ids: list[str], cid: str) -> int:
    """``unique_prefix_length`` of ``cid`` among sorted IDs (only its neighbours are read)."""
    import bisect

    i = bisect.bisect_left(sorted_ids, cid)
    return unique_prefix_length(cid, sorted_ids[max(i - 1, 0) : i + 2])


def short_id_length(sorted_ids: list[str], wanted: Iterable[str], minimum: int = 8) -> int:
    """The shortest common display length (at least ``minimum``) that keeps every ID in
    ``wanted`` unique among ``sorted_ids``; used for the short IDs ``golem list`` prints."""
    length = minimum
    for cid in wanted:
        length = max(length, unique_prefix_among(sorted_ids, cid))
    length = min(length, ID_LENGTH)
    while length < ID_LENGTH and length - 1 in _DASHES:  # never end a short ID on a dash
        length += 1
    return length


def unique_prefix(root: Path, cid: str) -> int:
    """How many leading characters of ``cid`` tell it apart from the IDs stored under
    ``root`` (``Store.unique_prefixes``): from the index when it is current, else from the
    directory's names (what a refresh of the index would find, without its stats and writes).
    For a new chat's banner: it needs neither the store nor the index (schema.py)."""
    from golem_cli.store.files import CONVERSATIONS_DIR, INDEX_NAME, MESSAGES_NAME

    ids = None
    if os.path.isfile(root / INDEX_NAME):  # sqlite3 is loaded only for a store that has an index
        from golem_cli.store.schema import current_neighbours

        ids = current_neighbours(root / INDEX_NAME, root / CONVERSATIONS_DIR, [cid])
    if ids is None:
        try:
            names = os.listdir(root / CONVERSATIONS_DIR)
        except FileNotFoundError:
            names = []
        ids = sorted({cid, *(name[:36] for name in names if MESSAGES_NAME.match(name))})
    return unique_prefix_among(ids, cid)
