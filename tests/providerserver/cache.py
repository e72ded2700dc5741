"""A prompt cache that counts the way each API reports it, for the loopback server.

What a request shares with earlier ones is worked out over its *blocks*: the prompt in the
order the provider reads it (tools, then the system prompt, then each message's content
blocks), each block spelled canonically (sorted keys, ``cache_control`` left out, since a
breakpoint moving does not change the prefix) and hashed in a chain, so a block's hash stands
for everything up to it. A block's tokens are its canonical bytes over four (at least one):
an estimate, the same for every request, which is all a prefix comparison needs.

- **Anthropic** caches only at breakpoints (``cache_control`` on a tool, a system or content
  block, or the top-level automatic form, which sits on the last block). Each breakpoint
  looks back up to 20 blocks for a prefix written before; the longest hit is read
  (``cache_read_input_tokens``), everything from there to the last breakpoint is written
  (``cache_creation_input_tokens``, split by TTL in ``cache_creation``), and ``input_tokens``
  is what follows the last breakpoint. A prefix under ``min_tokens`` is not cached.
- **OpenAI** caches every prompt of at least ``min_tokens`` by itself: ``cached_tokens`` is the
  longest prefix it shares with an earlier prompt, in steps of 128 tokens from 1,024, and
  ``prompt_tokens`` counts the whole prompt, cached part included.

Entries expire after their TTL (5 minutes, or an hour; a hit refreshes it), on ``clock``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: How far back (in blocks) an Anthropic breakpoint looks for a prefix cached before.
LOOKBACK = 20
#: OpenAI's cache granularity past its minimum.
OPENAI_STEP = 128
_TTL = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class CacheFigures:
    """One request's usage as the cache sees it. ``input_tokens`` is in the provider's own
    sense: Anthropic's excludes the cached and written parts, OpenAI's is the whole prompt."""

    input_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0


@dataclass(frozen=True)
class _Block:
    chain: str  # the hash of this block and everything before it
    tokens: int  # tokens up to and including this block
    ttl: str | None  # the block's breakpoint TTL, None when it is no breakpoint


class PromptCache:
    """The cache one server keeps across the requests it answers."""

    def __init__(self, *, min_tokens: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self.min_tokens = min_tokens
        self.clock = clock
        self._anthropic: dict[str, float] = {}  # chain hash -> when it expires
        self._openai: dict[str, float] = {}

    # --- Anthropic -------------------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> CacheFigures:
        blocks = anthropic_blocks(body)
        total = blocks[-1].tokens if blocks else 0
        breakpoints = [i for i, block in enumerate(blocks) if block.ttl]
        if not breakpoints:
            return CacheFigures(input_tokens=total)
        now = self.clock()
        read_at = -1
        for point in breakpoints:
            for back in range(point, max(-1, point - LOOKBACK - 1), -1):
                if self._anthropic.get(blocks[back].chain, 0.0) > now:
                    read_at = max(read_at, back)
                    break
        read = blocks[read_at].tokens if read_at >= 0 else 0
        last = breakpoints[-1]
        written_1h = written = 0
        if blocks[last].tokens >= self.min_tokens and last > read_at:
            written = blocks[last].tokens - read
            one_hour = [p for p in breakpoints if p > read_at and blocks[p].ttl == "1h"]
            written_1h = (blocks[one_hour[-1]].tokens - read) if one_hour else 0
        for point in breakpoints:
            if blocks[point].tokens >= self.min_tokens:
                self._anthropic[blocks[point].chain] = now + _TTL[blocks[point].ttl or "5m"]
        if read_at >= 0:
            self._anthropic[blocks[read_at].chain] = now + _TTL[blocks[read_at].ttl or "5m"]
        return CacheFigures(
            input_tokens=total - read - written,
            cache_read_tokens=read,
            cache_write_tokens=written,
            cache_write_1h_tokens=written_1h,
        )

    # --- OpenAI ----------------------------------------------------------------------------

    def openai(self, body: dict[str, Any]) -> CacheFigures:
        blocks = openai_blocks(body)
        total = blocks[-1].tokens if blocks else 0
        now = self.clock()
        shared = 0
        for block in blocks:
            if self._openai.get(block.chain, 0.0) <= now:
                break
            shared = block.tokens
        cached = 0 if shared < self.min_tokens else self.min_tokens + (shared - self.min_tokens) // OPENAI_STEP * OPENAI_STEP
        if total >= self.min_tokens:
            for block in blocks:
                self._openai[block.chain] = now + _TTL["5m"]
        return CacheFigures(input_tokens=total, cache_read_tokens=cached)


def canonical(value: Any) -> bytes:
    """A block's bytes for comparison: sorted keys, compact, ``cache_control`` left out."""
    return json.dumps(_without_markers(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _chain(pieces: list[tuple[Any, str | None]]) -> list[_Block]:
    out: list[_Block] = []
    digest, tokens = "", 0
    for value, ttl in pieces:
        data = canonical(value)
        digest = hashlib.sha256(digest.encode() + data).hexdigest()
        tokens += max(1, len(data) // 4)
        out.append(_Block(digest, tokens, ttl))
    return out


def _ttl(block: Any) -> str | None:
    marker = block.get("cache_control") if isinstance(block, dict) else None
    if not isinstance(marker, dict):
        return None
    return str(marker.get("ttl") or "5m")


def anthropic_blocks(body: dict[str, Any]) -> list[_Block]:
    """A Messages request as blocks in the order the API caches them; the top-level
    ``cache_control`` (automatic caching) marks the last one."""
    pieces: list[tuple[Any, str | None]] = [(tool, _ttl(tool)) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        pieces.append(({"type": "text", "text": system}, None))
    elif isinstance(system, list):
        pieces += [(block, _ttl(block)) for block in system]
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        pieces += [({"role": message.get("role"), **block}, _ttl(block)) for block in blocks]
    automatic = _ttl(body)
    if automatic and pieces:
        pieces[-1] = (pieces[-1][0], automatic)
    return _chain(pieces)


def openai_blocks(body: dict[str, Any]) -> list[_Block]:
    """A chat-completions prompt as blocks: the tools (rendered before the conversation),
    then each message whole."""
    pieces: list[tuple[Any, str | None]] = [(tool, None) for tool in body.get("tools") or []]
    pieces += [(message, None) for message in body.get("messages") or []]
    return _chain(pieces)
