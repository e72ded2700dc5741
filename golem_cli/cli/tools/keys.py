"""The approval question's keys: one table, read by the question's hint line, by what a typed
answer means, by the line that explains a word it does not know, and by the typeahead that
drops the rest of a one-key answer's word.

A lone key answers once nothing is typed after it for a moment (``view.KEY_PAUSE``); the
word typed out, or a key with more after it (``n`` and a reason), is a line ended by Enter.
"""

from __future__ import annotations

from msgspec import Struct


class Key(Struct, frozen=True, kw_only=True):
    key: str  # what a person presses
    word: str  # the answer typed out, and how the question line shows a one-key answer
    hint: str  # how the question's hint line names it
    does: str  # what it does, for the line that explains the keys


KEYS = (
    Key(key="y", word="yes", hint="[y]es once", does="run it once"),
    Key(key="a", word="always", hint="[a]lways…", does="stop asking for calls like it (you choose which)"),
    Key(key="n", word="no", hint="[n]o + reason", does="deny it, with a reason the model reads"),
    Key(key="v", word="view", hint="[v]iew all", does="see all of it in a pager first"),
)
#: The keys that answer alone, and the word each stands for.
ONE_KEY = {k.key: k.word for k in KEYS if k.key != "n"}
BY_WORD = {k.word: k for k in KEYS} | {k.key: k for k in KEYS}


def hint(*, cut: bool) -> str:
    """The hint after ``Allow?``: ``v`` only when the question could not show everything."""
    return " · ".join(k.hint for k in KEYS if k.key != "v" or cut)


def explained(*, cut: bool) -> str:
    """The line for an answer the question does not know."""
    return "Answer " + ", ".join(f"{k.key} ({k.does})" for k in KEYS if k.key != "v" or cut) + "."
