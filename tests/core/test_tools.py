"""Function tools: schema from the signature, argument decoding, return values, errors."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

import msgspec
import pytest
from golem_cli.core.messages import Part
from golem_cli.core.model import ToolDefinition
from golem_cli.core.tools import (
    ModelRetry,
    Tool,
    ToolCanceled,
    ToolContext,
    ToolFailed,
    ToolResult,
    ToolTimeoutError,
    to_tool_result,
    tool,
)

CTX = ToolContext(call_id="c1", tool_name="t", args="{}")


def run(coro):
    return asyncio.run(coro)


class Point(msgspec.Struct):
    x: int
    y: int


@tool
def roll_dice(sides: int, times: int = 1, label: Annotated[str, "shown to the user"] = "") -> str:
    """Roll a die.

    Longer explanation on a second paragraph.

    Args:
        sides: how many sides
            the die has (at least 2)
        times: how many rolls
    """
    return f"{label}{sides}x{times}"



def execute(tool, args, context):
    """A call as a run makes it: the model's argument text decoded, then the call."""
    return tool.call(tool.decode_args(args), context)

def test_schema_from_signature_and_docstring():
    assert roll_dice.name == "roll_dice"
    assert roll_dice.description == "Roll a die.\n\nLonger explanation on a second paragraph."
    assert roll_dice.parameters == {
        "type": "object",
        "properties": {
            "sides": {"type": "integer", "description": "how many sides the die has (at least 2)"},
            "times": {"type": "integer", "description": "how many rolls", "default": 1},
            "label": {"type": "string", "description": "shown to the user", "default": ""},
        },
        "required": ["sides"],
    }
    assert roll_dice.definition() == ToolDefinition(name="roll_dice", description=roll_dice.description, parameters=roll_dice.parameters)


def test_nested_types_literals_and_no_parameters():
    def place(at: Point, path: list[Point], mode: Literal["fast", "safe"] = "safe", tags: list[str] = []) -> None:  # noqa: B006
        return None

    t = Tool(place, name="place-item", description="Place it.")
    params = t.parameters
    assert params["properties"]["at"] == {"$ref": "#/$defs/Point"}
    assert params["$defs"]["Point"]["required"] == ["x", "y"]
    assert params["properties"]["mode"] == {"enum": ["fast", "safe"], "default": "safe"}
    assert params["required"] == ["at", "path"]
    assert t.decode_args('{"at": {"x": 1, "y": 2}, "path": []}')["tags"] == []

    def now() -> str:
        return "noon"

    assert Tool(now).parameters == {"type": "object", "properties": {}}
    assert Tool(now).description == ""


def test_mutable_defaults_are_not_shared():
    def f(items: list[int] = [1]) -> list[int]:  # noqa: B006
        return items

    t = Tool(f)
    a = t.decode_args("{}")["items"]
    a.append(2)
    assert t.decode_args("{}")["items"] == [1]


def test_arguments_decode_and_call():
    result = run(execute(roll_dice, '{"sides": 6, "times": 2}', CTX))
    assert result == ToolResult(text="6x2")
    assert run(execute(roll_dice, ' {"sides":20} \n', CTX)).text == "20x1"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ('{"sides": "six"}', "invalid arguments: Expected `int`, got `str` - at `$.sides`"),
        ("{}", "invalid arguments: Object missing required field `sides`"),
        ('{"sides":', "arguments are not a valid JSON object"),
        ("[6]", "invalid arguments: Expected `object`, got `array`"),
        ("", "invalid arguments: Object missing required field `sides`"),
    ],
)
def test_bad_arguments_ask_the_model_to_retry(args, fragment):
    with pytest.raises(ModelRetry) as info:
        run(execute(roll_dice, args, CTX))
    assert fragment in info.value.reason


def test_unknown_argument_keys_are_ignored():
    assert run(execute(roll_dice, '{"sides": 4, "color": "red"}', CTX)).text == "4x1"


def test_async_tools_and_context_injection():
    seen = []

    @tool(name="lookup", sequential=True, max_retries=3)
    async def lookup(query: str, ctx: ToolContext) -> str:
        seen.append(ctx)
        await asyncio.sleep(0)
        return query.upper()

    assert lookup.sequential and lookup.max_retries == 3
    assert "ctx" not in lookup.parameters["properties"]
    context = ToolContext(call_id="c9", tool_name="lookup", args='{"query":"x"}', run_id="r", conversation_id="c")
    assert run(execute(lookup, '{"query": "abc"}', context)).text == "ABC"
    assert seen == [context]


def test_sync_tools_run_in_a_worker_thread():
    import threading

    main = threading.get_ident()

    def where() -> str:
        return "main" if threading.get_ident() == main else "worker"

    assert run(execute(Tool(where), "{}", CTX)).text == "worker"


def test_timeout_raises_timeout_error():
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    with pytest.raises(ToolTimeoutError, match=r"^tool timed out after 0\.01s$"):
        run(execute(Tool(slow, timeout=0.01), "{}", CTX))

    async def own_timeout() -> str:
        raise TimeoutError("socket timed out")  # a tool's own timeout is just an error

    with pytest.raises(TimeoutError, match="socket") as info:
        run(execute(Tool(own_timeout, timeout=5), "{}", CTX))
    assert not isinstance(info.value, ToolTimeoutError)


def test_return_values_become_results():
    image = Part(kind="image", url="https://x/a.png")
    assert to_tool_result("hi") == ToolResult(text="hi")
    assert to_tool_result(None) == ToolResult()
    assert to_tool_result(image) == ToolResult(parts=(image,))
    assert to_tool_result(["look:", image, "done"]) == ToolResult(text="look:\ndone", parts=(image,))
    assert to_tool_result({"a": [1, 2]}) == ToolResult(text='{"a":[1,2]}')
    assert to_tool_result(["a", "b"]) == ToolResult(text='["a","b"]')
    assert to_tool_result(42) == ToolResult(text="42")
    assert to_tool_result(Point(1, 2)) == ToolResult(text='{"x":1,"y":2}')
    explicit = ToolResult(text="t", parts=(image,))
    assert to_tool_result(explicit) is explicit


def test_steering_exceptions_carry_their_reason():
    for cls in (ToolFailed, ModelRetry, ToolCanceled):
        exc = cls("because")
        assert exc.reason == "because" and str(exc) == "because"


def test_bad_declarations_fail_at_construction():
    def star(*args: int) -> None: ...

    def kw(**kwargs: int) -> None: ...

    def pos(a: int, /) -> None: ...

    for f in (star, kw, pos):
        with pytest.raises(TypeError):
            Tool(f)
    with pytest.raises(TypeError, match="unsupported parameter types"):
        Tool(_takes_object)
    with pytest.raises(ValueError):
        Tool(lambda: None, name="neg", max_retries=-1)
    with pytest.raises(TypeError):
        Tool("not callable")  # type: ignore[arg-type]


def _takes_object(x: object) -> None: ...
