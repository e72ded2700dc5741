"""Model options people set: ``-o temperature 0.2``, ``/option max_tokens 4000``, or in the
config file per provider (``[providers.NAME]``) and per model (``[models."provider:model"]``).

One table says what each option is and what values it takes; a value of the wrong type or out
of range is refused here, with a line naming the option and where it was set, before any
request is sent. Which options a provider accepts, and how its wire spells them, is the
adapter's business (``check_settings`` in each ``wire``): an option a provider has no use for
is refused when the model is chosen, not answered with a 400.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import Struct

from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelSettings

_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


class OptionSpec(Struct, frozen=True, kw_only=True):
    """One option: its value type, its bounds, and what it does (for ``/option`` and --help)."""

    kind: type
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()


#: Token counts are 32-bit integers on the APIs, and OpenAI's seed a 64-bit one.
_INT32, _INT64 = 2**31 - 1, 2**63 - 1

OPTIONS: dict[str, OptionSpec] = {
    "temperature": OptionSpec(
        kind=float, help="sampling temperature (0 to 2; Anthropic 0 to 1)", minimum=0.0, maximum=2.0
    ),
    "top_p": OptionSpec(
        kind=float, help="nucleus sampling: the probability mass to sample from", minimum=0.0, maximum=1.0
    ),
    "max_tokens": OptionSpec(kind=int, help="most tokens the reply may have", minimum=1, maximum=_INT32),
    "seed": OptionSpec(
        kind=int, help="sampling seed, for repeatable replies (OpenAI-compatible)", minimum=-_INT64 - 1, maximum=_INT64
    ),
    "stop": OptionSpec(kind=str, help="stop when the model writes this text (repeat for several)"),
    "reasoning_effort": OptionSpec(kind=str, help="how hard a reasoning model thinks", choices=_EFFORTS),
    "thinking_budget": OptionSpec(
        kind=int, help="Anthropic extended thinking: tokens it may think for", minimum=1024, maximum=_INT32
    ),
}


def parse_value(key: str, value: object, where: str = "") -> Any:
    """``value`` (text from the command line, or a TOML value) as option ``key`` takes it;
    ``ModelError`` names the option, what it takes and ``where`` it was set."""
    at = f" {where}" if where else ""
    spec = OPTIONS.get(key)
    if spec is None:
        import difflib

        close = difflib.get_close_matches(key, OPTIONS, n=1, cutoff=0.7)
        guess = f" (did you mean {close[0]}?)" if close else ""
        raise ModelError(f"unknown model option {key!r}{at}{guess}", hint=f"the options are {', '.join(OPTIONS)}")
    if key == "stop" and isinstance(value, list):
        return tuple(parse_value(key, item, where)[0] for item in value)
    parsed = _typed(spec, value)
    if parsed is None:
        raise ModelError(f"option {key} = {_value_shown(spec, value)}{at} {_refusal(spec, value)}",
                         hint=f"{key}: {spec.help}")  # fmt: skip
    return (parsed,) if key == "stop" else parsed


def _value_shown(spec: OptionSpec, value: object) -> str:
    """The value as typed: a number without quotes (``-o temperature 3`` typed 3, not '3')."""
    if spec.kind is not str and isinstance(value, str) and _number(spec, value) is not None:
        return value.strip()
    return repr(value) if len(repr(value)) <= 40 else repr(value)[:30] + "…"


def _refusal(spec: OptionSpec, value: object) -> str:
    """Why ``value`` is refused: out of range when it is a number of the right kind."""
    number = None if isinstance(value, bool) or spec.kind is str else _number(spec, value)
    if number is not None and math.isfinite(number):
        return f"is out of range: it takes {_what(spec)}"
    return f"is not {_what(spec)}"


def _number(spec: OptionSpec, value: object) -> float | None:
    return _whole(value) if spec.kind is int else _real(value)


def _typed(spec: OptionSpec, value: object) -> Any:
    """``value`` as ``spec`` takes it, or None. Text from the command line is converted; a TOML
    value must already have the type (``true`` is not a number, ``0.5`` not a whole number)."""
    if isinstance(value, bool):
        return None
    if spec.kind is str:
        taken = isinstance(value, str) and value and (not spec.choices or value in spec.choices)
        return value if taken else None
    number = _whole(value) if spec.kind is int else _real(value)
    return number if number is not None and _within(spec, number) else None


def _whole(value: object) -> int | None:
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value)
    return value if isinstance(value, int) else None


def _real(value: object) -> float | None:
    try:
        return float(value) if isinstance(value, int | float | str) else None
    except ValueError:
        return None


def _within(spec: OptionSpec, number: float) -> bool:
    if not math.isfinite(number):
        return False
    return (spec.minimum is None or number >= spec.minimum) and (spec.maximum is None or number <= spec.maximum)


_WHOLE = re.compile(r"-?[0-9]{1,40}")  # longer is out of every range, and int() of 4,300 digits raises


def _shown(bound: float) -> str:
    return str(bound) if isinstance(bound, int) else f"{bound:g}"  # an int bound exactly, not as 9.22337e+18


def _what(spec: OptionSpec) -> str:
    if spec.choices:
        return "one of " + ", ".join(spec.choices)
    noun = "a whole number" if spec.kind is int else "a number" if spec.kind is float else "a text"
    if spec.minimum is not None and spec.maximum is not None:
        return f"{noun} from {_shown(spec.minimum)} to {_shown(spec.maximum)}"
    if spec.minimum is not None:
        return f"{noun} of at least {_shown(spec.minimum)}"
    return noun


def settings_from(
    pairs: Iterable[tuple[str, object]], where: str = "", base: ModelSettings | None = None
) -> ModelSettings:
    """``base`` with the options ``pairs`` set (later pairs win; ``stop`` values add up)."""
    values: dict[str, Any] = {}
    for key, value in pairs:
        parsed = parse_value(key, value, where)
        values[key] = (values.get(key) or ()) + parsed if key == "stop" else parsed
    return msgspec.structs.replace(base or ModelSettings(), **values)


def merged(defaults: ModelSettings, overrides: ModelSettings) -> ModelSettings:
    """``defaults`` with every option ``overrides`` sets (the request's own settings win)."""
    changes = {f.name: getattr(overrides, f.name) for f in msgspec.structs.fields(overrides)}
    return msgspec.structs.replace(defaults, **{k: v for k, v in changes.items() if v is not None})


def describe(settings: ModelSettings) -> list[str]:
    """``key = value`` lines for the options that are set, for ``/option``."""
    lines = []
    for f in msgspec.structs.fields(settings):
        value = getattr(settings, f.name)
        if value is not None:
            lines.append(f"{f.name} = {' | '.join(value) if isinstance(value, tuple) else value}")
    return lines
