"""Conversation IDs and the references users type for them.

A conversation ID is a canonical lowercase UUID (golem mints UUIDv7, so IDs sort by creation
time). A reference is an ID, a unique prefix of at least four characters, or ``last``. The
syntax is checked here, before anything touches the file system: a reference that passes can
only name a file inside the store's directory, so ``../x`` or ``/etc/passwd`` never reach it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from golem_cli.store.errors import AmbiguousReference, ConversationNotFound, InvalidReference

LAST = "last"
MIN_PREFIX = 4
ID_LENGTH = 36
_DASHES = (8, 13, 18, 23)
_HEX = frozenset("0123456789abcdef")
_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
MAX_CANDIDATES_SHOWN = 10


def is_conversation_id(text: str) -> bool:
    """Whether ``text`` is a full conversation ID (canonical lowercase UUID)."""
    return len(text) == ID_LENGTH and _ID_RE.match(text) is not None


def _is_id_prefix(text: str) -> bool:
    if not MIN_PREFIX <= len(text) <= ID_LENGTH:
        return False
    for i, ch in enumerate(text):
        if (ch != "-") if i in _DASHES else (ch not in _HEX):
            return False
    return True


def parse_reference(ref: str) -> str:
    """Validate what a user typed and return it normalized (lowercase), or ``last``.

    Raises ``InvalidReference`` for anything that is not an ID prefix; the message says what
    an ID looks like.
    """
    text = ref.strip().lower()
    if text == LAST or _is_id_prefix(text):
        return text
    if len(text) < MIN_PREFIX and text and all(c in _HEX for c in text):
        reason = f"an ID prefix needs at least {MIN_PREFIX} characters"
    else:
        reason = "conversation IDs look like 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    raise InvalidReference(f"not a conversation ID: {ref!r} ({reason}; `golem list` shows them, `last` is the newest)")


def match_prefix(prefix: str, ids: Iterable[str]) -> str:
    """The one ID in ``ids`` that starts with ``prefix`` (already validated).

    Raises ``ConversationNotFound`` or ``AmbiguousReference`` (naming the candidates).
    """
    found = sorted(i for i in ids if i.startswith(prefix))
    if not found:
        raise ConversationNotFound(f"no conversation matches {prefix!r} (`golem list` shows them)")
    if len(found) > 1:
        shown = ", ".join(found[:MAX_CANDIDATES_SHOWN])
        more = f" and {len(found) - MAX_CANDIDATES_SHOWN} more" if len(found) > MAX_CANDIDATES_SHOWN else ""
        raise AmbiguousReference(
            f"{prefix!r} matches {len(found)} conversations: {shown}{more}; type more characters",
            found,
        )
    return found[0]


def short_id_length(sorted_ids: list[str], wanted: Iterable[str], minimum: int = 8) -> int:
    """The shortest common display length (at least ``minimum``) that keeps every ID in
    ``wanted`` unique among ``sorted_ids``; used for the short IDs ``golem list`` prints."""
    import bisect

    length = minimum
    for cid in wanted:
        i = bisect.bisect_left(sorted_ids, cid)
        for j in (i - 1, i + 1):
            if 0 <= j < len(sorted_ids) and sorted_ids[j] != cid:
                other = sorted_ids[j]
                common = 0
                for a, b in zip(cid, other, strict=False):
                    if a != b:
                        break
                    common += 1
                length = max(length, common + 1)
    length = min(length, ID_LENGTH)
    while length < ID_LENGTH and length - 1 in _DASHES:  # never end a short ID on a dash
        length += 1
    return length
