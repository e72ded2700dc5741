"""``config.tables``: a TOML table as the typed value a declaration says, or every way it is not.
The file's own declaration is tested through ``load_settings`` (test_settings.py,
test_mcp_config.py); here, the shapes the keys to come need (ADR 0019) read as plainly."""

from __future__ import annotations

from typing import Annotated, ClassVar

import pytest
from golem_cli.config.schema import Seconds, Table
from golem_cli.config.tables import Problems, convert
from msgspec import Meta, field

Dollars = Annotated[float, Meta(ge=0, description="US dollars per million tokens, 0 or more")]
Fraction = Annotated[float | bool, Meta(description="a fraction of the context window, or false")]
Aliases = Annotated[dict[str, str], Meta(description='a table of names, like { fast = "openai:gpt-4o-mini" }')]


class Price(Table, frozen=True, kw_only=True):
    NOUN: ClassVar[str] = "a price"

    input: Dollars
    output: Dollars


class Model(Table, frozen=True, kw_only=True):
    OTHERS: ClassVar[str] = "options"

    price: Price | None = None
    auto_compact: Fraction = False
    aliases: Aliases = field(default_factory=dict)
    timeout: Seconds | None = None
    options: dict[str, object] = field(default_factory=dict)


def problems(table: dict) -> list[str]:
    with pytest.raises(Problems) as caught:
        convert(Model, table)
    return caught.value.problems


def test_a_nested_table_a_union_and_a_table_of_strings_read_typed():
    model = convert(Model, {"price": {"input": 3, "output": 15.0}, "auto_compact": 0.8, "aliases": {"f": "a:b"}, "top_p": 1})
    assert model == Model(price=Price(input=3.0, output=15.0), auto_compact=0.8, aliases={"f": "a:b"}, options={"top_p": 1})
    assert convert(Model, {"auto_compact": False}).auto_compact is False


def test_every_problem_names_its_key_in_declaration_order():
    assert problems({"timeout": 0, "aliases": {"f": 1}, "auto_compact": "x", "price": {"input": -1, "outptu": 2}}) == [
        "price.input must be US dollars per million tokens, 0 or more, not -1",
        "price.output is missing",
        "price.outptu is not a key of a price (known: input, output)",
        'auto_compact must be a fraction of the context window, or false, not "x"',
        'aliases.f must be a table of names, like { fast = "openai:gpt-4o-mini" }, not 1',
        "timeout must be a number of seconds above 0, not 0",
    ]
    assert problems({"price": 3}) == ["price must be a table, not 3"]
