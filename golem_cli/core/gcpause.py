"""Pausing the cyclic garbage collector around work on whole histories.

A history is millions of objects that hold no reference cycles (messages, their strings and
lists). Allocating more of them triggers collections, and each full collection walks every
tracked object alive, the history included: at a million messages that cost a third of a load
and half of a repair. Reference counting still frees everything as usual; only cycles wait for
the collector to be resumed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Keep the cyclic collector off for the block (re-entrant: an inner pause leaves it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def keep_from_collections() -> None:
    """Leave every object alive now out of later collections (``gc.freeze``): after a whole
    history is loaded for a chat that keeps it, each full collection would walk it again
    (at 150,000 messages, half a second once a prompt's imports allocate enough to trigger
    one). Reference counting still frees what is dropped; only cycles among the frozen
    objects would outlive them, and a history has none. For a process, not a library: a
    caller that loads histories again and again would keep every cycle made before."""
    gc.freeze()
