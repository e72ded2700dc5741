"""How an adapter's HTTP client behaves: timeouts, limits and retries, as a provider's table
sets them. Apart from ``_http`` so that choosing a model reads them without importing httpx."""

from __future__ import annotations

from msgspec import Struct

from golem_cli.core.retry import RetryPolicy

#: Three retries (a provider table's ``max_retries`` default) of 429s, 5xx and lost connections.
DEFAULT_RETRY = RetryPolicy(max_attempts=4)


class HttpSettings(Struct, frozen=True, kw_only=True):
    """Timeouts, and the retry policy runs of this adapter use. ``timeout`` is the longest
    wait for the next byte: generous, because a local model on a CPU can think for minutes
    before its first token."""

    timeout: float = 300.0
    connect_timeout: float = 10.0
    retry: RetryPolicy = DEFAULT_RETRY
    #: Most bytes one reply may bring (after decompression); past it the reply is cut off and
    #: kept. Far above real replies: it bounds memory against a server that never stops.
    max_reply_bytes: int = 16 * 2**20
    #: Longest a stream may go on without content (keep-alive comments and pings only).
    max_idle: float = 600.0
