"""Conversation IDs as people see them: the part that is enough to type, highlighted.

Every stored ID can be typed as its shortest unique prefix (or its tail: store/refs.py). Where
golem shows an ID (``list``, ``show``, the chat's footer and hints), that prefix is bold and the
rest dim, as jj shows change IDs, so a person sees at a glance what to type. Hints print at
least ``HINT_LENGTH`` characters, so a command copied today still works after more
conversations exist.
"""

from __future__ import annotations

HINT_LENGTH = 8


def hint(cid: str, unique: int) -> str:
    """The ID as a hint spells it: the unique prefix, at least ``HINT_LENGTH`` characters."""
    return cid[: max(unique, HINT_LENGTH)]


def markup(cid: str, unique: int, length: int | None = None) -> str:
    """rich markup for the first ``length`` characters of ``cid`` (all of it by default), its
    unique prefix highlighted."""
    shown = cid if length is None else cid[: max(length, unique)]
    return (
        f"[bold cyan]{shown[:unique]}[/][dim cyan]{shown[unique:]}[/]"
        if unique < len(shown)
        else f"[bold cyan]{shown}[/]"
    )
