"""How an adapter uses its provider's prompt cache, as the configuration sets it (ADR 0024).

Anthropic caches only what a request marks (``cache_control`` breakpoints), so marking is on
by default there; OpenAI-compatible servers cache every long prefix by themselves, and golem's
part is to keep the prefix byte-stable and, where the endpoint documents it, to say which
conversation a request continues (``prompt_cache_key``), so requests of one conversation and
its forks reach the same cache. Apart from the adapters so that resolving a model reads it
without importing httpx.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

Ttl = Literal["5m", "1h"]


class Caching(Struct, frozen=True, kw_only=True):
    """``enabled``: mark breakpoints (Anthropic) and send the cache key (OpenAI-compatible);
    ``ttl``: how long Anthropic keeps what is written; ``send_key``: whether the endpoint
    takes ``prompt_cache_key`` (OpenAI and Azure document it; elsewhere a table says so)."""

    enabled: bool = True
    ttl: Ttl = "5m"
    send_key: bool = False
