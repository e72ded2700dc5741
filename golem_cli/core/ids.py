"""Run and conversation identifiers: UUID version 7 (spec §6.1), as Go golem's ``NewID``."""

from __future__ import annotations

import os
import re
import time

__all__ = ["new_id"]


def new_id() -> str:
    """A fresh UUIDv7: 48 bits of Unix milliseconds, then random bits (version 7, RFC variant).

    Time-ordered across milliseconds, so conversation files sort by creation; no monotonic
    counter, exactly like the reference, so IDs minted in one millisecond are unordered.
    """
    millis = time.time_ns() // 1_000_000
    rand = bytearray(os.urandom(10))
    rand[0] = (rand[0] & 0x0F) | 0x70
    rand[2] = (rand[2] & 0x3F) | 0x80
    h = (millis.to_bytes(6, "big") + rand).hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def id_time_ms(value: str) -> int | None:
    """The Unix millisecond timestamp inside a UUIDv7, or None if ``value`` is not one."""
    if not is_uuid7(value):
        return None
    return int(value[0:8] + value[9:13], 16)


def is_uuid7(value: str) -> bool:
    """Whether ``value`` is a canonical lowercase UUIDv7 string."""
    return _UUID7(value) is not None


# One C-level match: a rebuild of the index asks this of every conversation it reads.
_UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}").fullmatch
