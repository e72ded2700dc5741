"""What tokens cost: a model's prices and the cost of a run's usage at them.

Prices are USD per million tokens, as providers publish them. The usage's one meaning
(``core/usage.py``: the input counts its cached part) makes the cost one sum: the input neither
read from nor written to the cache at the input price, cache reads and writes (the one-hour part
apart) at theirs, and the output (reasoning included) at the output price. A cache price a
provider does not publish is the input price: a server without a cache discount bills that way.
"""

from __future__ import annotations

from msgspec import Struct

from golem_cli.core.usage import Usage

__all__ = ["Price", "cost_of", "usd"]

PER = 1_000_000


class Price(Struct, frozen=True, kw_only=True):
    """USD per million tokens; None where the provider publishes no separate price."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None

    def input_cost(self, tokens: int) -> float:
        """What ``tokens`` of input cost when none is read from the cache (the most a
        request's input can cost: what a budget checks before sending)."""
        return tokens * self.input / PER


def cost_of(usage: Usage, price: Price) -> float:
    """The cost in USD of ``usage`` at ``price``."""
    read = price.input if price.cache_read is None else price.cache_read
    write = price.input if price.cache_write is None else price.cache_write
    write_1h = write if price.cache_write_1h is None else price.cache_write_1h
    hour = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
    total = (
        usage.uncached_input_tokens * price.input
        + usage.cache_read_tokens * read
        + (usage.cache_write_tokens - hour) * write
        + hour * write_1h
        + usage.output_tokens * price.output
    )
    return total / PER


def usd(amount: float) -> str:
    """An amount in USD as people read one: cents from a dollar up, else up to four decimals
    ($0.0162, $0.01), and a figure too small for those as under a hundredth of a cent."""
    if amount >= 0.995:
        return f"${amount:.2f}"
    if 0 < amount < 0.00005:
        return "<$0.0001"
    digits = f"{amount:.4f}".rstrip("0")
    return f"${digits}{'0' * max(0, 4 - len(digits))}"
