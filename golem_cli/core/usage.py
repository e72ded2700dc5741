"""Token usage, summed over the model calls of a run, and the bounds a run may set on it."""

from __future__ import annotations

from msgspec import Struct

__all__ = ["Usage", "UsageLimits"]


class Usage(Struct, frozen=True, kw_only=True):
    """Tokens reported by the provider (Go ``model.Usage``); zero when unknown.

    One meaning whatever the API: ``input_tokens`` counts every token of the input, those read
    from or written to the provider's cache included (OpenAI's ``prompt_tokens``; Anthropic's
    ``input_tokens`` plus its two cache counts), so ``cache_read_tokens / input_tokens`` is the
    share read from cache. ``cache_write_1h_tokens`` is the part of ``cache_write_tokens``
    written for an hour (Anthropic prices it apart); ``reasoning_tokens`` are part of
    ``output_tokens``, as both APIs bill them.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )

    @property
    def uncached_input_tokens(self) -> int:
        """Input neither read from nor written to the cache (billed at the plain input price)."""
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    @property
    def cache_share(self) -> float | None:
        """The share of the input read from cache, None when there was no input."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def is_zero(self) -> bool:
        return self == Usage()

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_write_1h_tokens": self.cache_write_1h_tokens,
        }

    @classmethod
    def from_json(cls, data: object) -> Usage:
        """The inverse of ``to_json``, forgiving: a missing or malformed count is 0 (a ledger
        written by another version must not stop a conversation from loading)."""
        if not isinstance(data, dict):
            return cls()
        return cls(**{name: _count(data.get(name)) for name in _FIELDS})


_FIELDS = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
    "cache_write_1h_tokens",
)  # fmt: skip


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class UsageLimits(Struct, frozen=True, kw_only=True):
    """Bounds on one run; 0 leaves a dimension unbounded (Go ``UsageLimit``).

    Token, request and tool-call bounds are checked after every model response and tool
    batch against the run's totals; the crossing response is kept in ``partial``.
    ``per_request_input_tokens`` is checked before each request with the run's
    ``token_counter``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    per_request_input_tokens: int = 0

    def is_valid(self) -> bool:
        """No bound is negative."""
        return 0 <= min(
            self.input_tokens,
            self.output_tokens,
            self.total_tokens,
            self.requests,
            self.tool_calls,
            self.per_request_input_tokens,
        )

    def crossed(self, usage: Usage, requests: int, tool_calls: int) -> tuple[str, int, int] | None:
        """The first bound the totals so far cross, as (kind, limit, actual), else None."""
        checks = (
            ("input token", self.input_tokens, usage.input_tokens),
            ("output token", self.output_tokens, usage.output_tokens),
            ("total token", self.total_tokens, usage.total_tokens),
            ("request", self.requests, requests),
            ("tool call", self.tool_calls, tool_calls),
        )
        for kind, limit, actual in checks:
            if limit and actual > limit:
                return kind, limit, actual
        return None
