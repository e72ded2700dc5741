"""The check of a tool server's arguments before anyone is asked: certain failures only."""

from __future__ import annotations

from golem_cli.tools.mcp.arguments import schema_problem

SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "n": {"type": "integer"}, "tags": {"type": ["array", "null"]},
                   "any": {"anyOf": [{"type": "string"}]}, "ref": {"$ref": "#/$defs/x"}},
    "required": ["text"],
}  # fmt: skip


def test_what_certainly_fails_is_named():
    assert schema_problem(SCHEMA, {"txt": "hi"}) == "missing required property 'text'"
    assert schema_problem(SCHEMA, {"text": 3}) == "property 'text' must be string, not an integer"
    assert schema_problem(SCHEMA, {"text": "a", "n": 1.5}) == "property 'n' must be integer, not a number"
    assert schema_problem(SCHEMA, {"text": "a", "n": [1]}) == "property 'n' must be integer, not an array"
    assert schema_problem(SCHEMA, {"text": None}) == "property 'text' must be string, not null"
    assert schema_problem(SCHEMA, {"text": "a", "tags": 3}) == "property 'tags' must be array or null, not an integer"
    closed = {**SCHEMA, "additionalProperties": False}
    assert schema_problem(closed, {"text": "a", "zz": 1}) == "unknown property 'zz' (the tool takes: any, n, ref, tags, text)"


def test_what_may_pass_is_left_to_the_server():
    assert schema_problem(SCHEMA, {"text": "a", "n": 2.0, "tags": None, "extra": object()}) == ""
    # what a lenient server converts: "3" to 3, True to 1, a string of JSON to a list
    assert schema_problem(SCHEMA, {"text": "a", "n": "3", "tags": "[1]"}) == ""
    assert schema_problem(SCHEMA, {"text": "a", "n": True}) == ""
    assert schema_problem(SCHEMA, {"text": "a", "any": 5, "ref": [1]}) == ""  # combinators and references: not judged
    for odd in ({}, {"properties": [1, 2]}, {"required": "text"}, {"properties": {"text": {"type": "strange"}}},
                {"properties": {"text": "not a schema"}}, {"additionalProperties": False, "patternProperties": {"^x": {}}}):
        assert schema_problem(odd, {"text": 1, "x1": 2}) == ""  # fmt: skip
