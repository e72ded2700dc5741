"""Arguments that certainly fail a tool server's input schema, found before anyone is asked.

A server judges its own arguments (``isError``), but a call it is bound to refuse should not
cost the person an approval question first. So golem checks what is certain and cheap: the
arguments' required properties, the JSON type of each property whose schema names plain
types (as leniently as servers read them: ``"3"`` may be an integer), and properties a schema
closed with ``additionalProperties: false``. Everything else
(``$ref``, ``anyOf``, patterns, formats, ranges) is left to the server: a schema comes from a
program golem does not control, and nothing here can be made slow by it (no regular
expressions, no references followed, one pass over the top-level properties).
"""

from __future__ import annotations

from typing import Any

_KINDS = ("string", "number", "integer", "boolean", "array", "object", "null")


def schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Why ``arguments`` fail ``schema`` for certain, in a few words; "" when they may not."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    return _missing(schema, arguments) or _unknown(schema, properties, arguments) or _mistyped(properties, arguments)


def _missing(schema: dict[str, Any], arguments: dict[str, Any]) -> str:
    required = schema.get("required")
    if not isinstance(required, list):
        return ""
    missing = [name for name in required if isinstance(name, str) and name not in arguments]
    return f"missing required {_names(missing)}" if missing else ""


def _unknown(schema: dict[str, Any], properties: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Arguments a schema closed with ``additionalProperties: false`` does not name."""
    if schema.get("additionalProperties") is not False or schema.get("patternProperties"):
        return ""
    unknown = [name for name in arguments if name not in properties]
    if not unknown:
        return ""
    names = sorted(map(str, properties))
    known = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "") or "none"
    return f"unknown {_names(unknown)} (the tool takes: {known})"


def _mistyped(properties: dict[str, Any], arguments: dict[str, Any]) -> str:
    for name, value in arguments.items():
        expected = _types(properties.get(name))
        if expected and not any(_may_be(value, kind) for kind in expected):
            return f"property {name!r} must be {' or '.join(expected)}, not {_kind(value)}"
    return ""


def _types(schema: object) -> list[str]:
    """The plain JSON types a property's schema allows; [] when it says more than that."""
    if not isinstance(schema, dict) or any(k in schema for k in ("$ref", "anyOf", "oneOf", "allOf", "not", "if")):
        return []
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) and k in _KINDS for k in kinds):
        return []
    return kinds


def _may_be(value: object, kind: str) -> bool:
    """Whether a server could take ``value`` as ``kind``. Lenient validators (pydantic's lax
    mode, which the MCP SDK's servers use) turn ``"3"`` into 3, 1 into True and a string of
    JSON into a list, so only what none of them takes fails here."""
    if value is None or kind == "null":
        return value is None and kind == "null"
    if kind == "string":
        return isinstance(value, str)
    if isinstance(value, str):
        return True
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind in ("number", "boolean"):
        return isinstance(value, int | float)  # a bool is an int
    return isinstance(value, list if kind == "array" else dict)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    names = {float: "a number", str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _names(names: list[Any]) -> str:
    shown = ", ".join(repr(str(n))[:80] for n in names[:5]) + (", ..." if len(names) > 5 else "")
    return f"propert{'y' if len(names) == 1 else 'ies'} {shown}"
