"""Conversation IDs as people see them: the part that is enough to type, highlighted.

Every stored ID can be typed as its shortest unique prefix or as its tail (store/refs.py).
Where golem shows a whole ID (``list``, ``show``, ``/ids``) the unique prefix is bold and the
rest dim, as jj shows change IDs. Where it prints a handle to copy (the resume hint, the
``/retry`` and ``/fork`` notes, the footer, ``search``'s hits) it prints the ID's last ``HANDLE_LENGTH``
characters: golem's IDs are UUIDv7, whose first characters are a millisecond clock (IDs made
within a minute share them) and whose last twelve are random, so that handle stays unique as
more conversations are made, and a tail match wins over a prefix match when it is typed back.
"""

from __future__ import annotations

from golem_cli.store.refs import HANDLE_LENGTH as HANDLE_LENGTH  # the store's own messages print it too
from golem_cli.store.refs import handle as handle

PREFIX_LENGTH = 8  # the least a listing shows of an ID, its unique prefix highlighted


def handle_markup(cid: str) -> str:
    """rich markup for ``handle(cid)``."""
    return f"[bold cyan]{handle(cid)}[/]"


def markup(cid: str, unique: int, length: int | None = None) -> str:
    """rich markup for the first ``length`` characters of ``cid`` (all of it by default), its
    unique prefix highlighted."""
    shown = cid if length is None else cid[: max(length, unique)]
    return (
        f"[bold cyan]{shown[:unique]}[/][dim cyan]{shown[unique:]}[/]"
        if unique < len(shown)
        else f"[bold cyan]{shown}[/]"
    )
