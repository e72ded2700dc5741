"""How people number a conversation's messages: one numbering for ``golem show``, the hits of
``golem search`` and ``golem fork --at``.

Messages are numbered from 1 in the file's order, system messages aside (they are shown as
system prompts, without a number). A system prompt set during a chat goes first in the file
and so does not shift the numbers people already saw; a file imported from elsewhere may hold
a system message mid-history, and every command skips it alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from golem_cli.core.messages import SYSTEM, Message


def numbers(messages: Sequence[Message]) -> list[int | None]:
    """The number of each message (None for a system message)."""
    out: list[int | None] = []
    n = 0
    for m in messages:
        if m.role == SYSTEM:
            out.append(None)
        else:
            n += 1
            out.append(n)
    return out


def number_of(messages: Sequence[Message], index: int) -> int | None:
    """The number of ``messages[index]`` (None for a system message)."""
    if messages[index].role == SYSTEM:
        return None
    return index + 1 - sum(m.role == SYSTEM for m in messages[:index])


def numbered(messages: Sequence[Message]) -> int:
    """How many messages have a number (the highest number)."""
    return sum(m.role != SYSTEM for m in messages)


def through(messages: Sequence[Message], n: int) -> int:
    """The length of the prefix that holds messages 1 to ``n`` and every system message before
    message ``n + 1``: what ``fork --at n`` copies (for 0, the system prompts that open the
    conversation; past the last number, everything)."""
    seen = 0
    for index, m in enumerate(messages):
        if m.role != SYSTEM:
            if seen == n:
                return index
            seen += 1
    return len(messages)
