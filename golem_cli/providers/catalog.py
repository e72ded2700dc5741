"""What golem knows of a model before any configuration, and what the configuration adds: its
price and its context window. The built-in figures are one data file, ``catalog.toml`` (each
with its source and the day it was read); a ``[models."provider:model"]`` table's ``price``
and ``context_window`` win over them.

A model is looked up by its ``provider:model`` name, then without a dated or ``-latest``
suffix (``claude-sonnet-4-5-20250929``, ``gpt-4o-mini-2024-07-18``): a snapshot costs what its
family costs.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct

from golem_cli.config.schema import ModelTable, PriceTable
from golem_cli.core.cost import Price

_FILE = Path(__file__).with_name("catalog.toml")
_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class Known(Struct, frozen=True, kw_only=True):
    """A model's figures as golem knows them, and where each came from (for people)."""

    price: Price | None = None
    context_window: int | None = None
    source: str = ""  # "built-in (URL, read DAY)", "config", or "" when nothing is known


@functools.cache
def _builtin() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    data = tomllib.loads(_FILE.read_text(encoding="utf-8"))
    return data.get("models", {}), data.get("sources", {})


def builtin_names() -> list[str]:
    """The models the built-in table holds, for people and tests."""
    return sorted(_builtin()[0])


def _builtin_entry(name: str) -> dict[str, Any] | None:
    models, _ = _builtin()
    if name in models:
        return models[name]
    provider, _, model = name.partition(":")
    bare = _SUFFIX.sub("", model)
    return models.get(f"{provider}:{bare}") if bare != model else None


def _builtin_known(name: str) -> Known:
    entry = _builtin_entry(name)
    if entry is None:
        return Known()
    raw = entry.get("price")
    price = Price(**raw) if isinstance(raw, dict) else None
    source = _builtin()[1].get(entry.get("source", ""), {})
    where = f"built-in ({source.get('url', '?')}, read {source.get('read', '?')})"
    return Known(price=price, context_window=entry.get("context_window"), source=where)


def known(name: str, models: Mapping[str, ModelTable] | None = None) -> Known:
    """What golem knows of ``name`` (``provider:model``): the config's figures over the
    built-in ones, a configured price's missing cache prices taken from the built-in price."""
    base = _builtin_known(name)
    table = (models or {}).get(name)
    if table is None or (table.price is None and table.context_window is None):
        return base
    price = base.price if table.price is None else _configured(table.price, base.price)
    window = table.context_window or base.context_window
    return Known(price=price, context_window=window, source="config")


def _configured(table: PriceTable, builtin: Price | None) -> Price:
    def pick(value: float | None, fallback: float | None) -> float | None:
        return value if value is not None else fallback

    return Price(
        input=table.input,
        output=table.output,
        cache_read=pick(table.cache_read, builtin.cache_read if builtin else None),
        cache_write=pick(table.cache_write, builtin.cache_write if builtin else None),
        cache_write_1h=pick(table.cache_write_1h, builtin.cache_write_1h if builtin else None),
    )


def price_hint(name: str) -> str:
    """How to set a price golem does not know, in one sentence."""
    return f'set it in config.toml: [models."{name}"] price = {{ input = 1.0, output = 2.0 }} (USD per million tokens)'
