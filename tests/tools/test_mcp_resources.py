"""A tool server's resources, prompts and completions through the tools layer, against the
SDK-built demo server (over HTTP, from a thread of this process): ``read_resource`` (off unless named), a ``resource_link`` named the way
it is opened, the server's argument completions, and lists it changes read again between turns.
What a ``resources/read`` answer may hold is bounded (``tools/mcp/resources.py``)."""

from __future__ import annotations

import asyncio
import base64

import pytest
from golem_cli.core.tools import ToolContext, ToolFailed
from golem_cli.tools.mcp.resources import MAX_BYTES, MENTION, ResourceProblem, contents
from golem_cli.tools.toolbox import Toolbox, toolbox

from tests.mcpservers import server_tables
from tests.mcpservers.threaded import http_demo
from tests.tools.test_mcp_protocol import call

CTX = ToolContext(call_id="c1", tool_name="t", args="{}")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).decode()


def demo_box(enabled: list[str], url: str = "http://127.0.0.1:1/mcp") -> Toolbox:
    return toolbox(enabled=enabled, servers=server_tables({"demo": {"url": url}}))


def with_box(enabled: list[str], body) -> object:
    """``body(box)``'s answer, the box's servers started: a fresh demo server over HTTP from a
    thread of this process."""

    async def go(url: str) -> object:
        box = demo_box(enabled, url)
        assert await box.start() == []
        try:
            return await body(box)
        finally:
            await box.close()

    with http_demo() as url:
        return asyncio.run(go(url))


async def until(condition, seconds: float = 30) -> None:
    """Until ``condition()`` holds (the client handles a server's notifications as they come)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "it never happened"
        await asyncio.sleep(0.01)


# --- the contents of an answer, bounded ---------------------------------------------------------


def test_contents_take_text_and_bytes_and_refuse_what_is_too_large_or_not_base64():
    text, blob = contents({"contents": [{"uri": "a://t", "text": "hi"}, {"uri": "a://b", "blob": PNG,
                                                                          "mimeType": "IMAGE/PNG"}]})  # fmt: skip
    assert (text.text, text.data) == ("hi", b"")
    assert (blob.text, blob.media_type, blob.data) == (None, "image/png", base64.b64decode(PNG))
    with pytest.raises(ResourceProblem, match="larger than 20 MB"):
        contents({"contents": [{"uri": "a://t", "text": "x" * (MAX_BYTES + 1)}]})
    with pytest.raises(ResourceProblem, match="larger than 20 MB"):  # refused before it is decoded
        contents({"contents": [{"uri": "a://b", "blob": "A" * (MAX_BYTES * 4 // 3 + 8)}]})
    with pytest.raises(ResourceProblem, match="not valid base64"):
        contents({"contents": [{"uri": "a://b", "blob": "not base64!"}]})
    with pytest.raises(ResourceProblem, match="no contents"):
        contents({"contents": []})
    with pytest.raises(ResourceProblem, match="larger than 20 MB"):  # the limit holds for all items together
        contents({"contents": [{"uri": f"a://{i}", "text": "x" * (MAX_BYTES // 3)} for i in range(4)]})
    lone = contents({"contents": [{"uri": "a://t", "text": "bad \ud800 text"}]})[0].text
    assert lone is not None and lone.encode("utf-8")  # storable


def test_a_mention_is_a_server_name_a_colon_and_a_uri_with_a_scheme():
    found = [m.groups() for m in MENTION.finditer("see @demo:demo://readme and mail a@b.c or @x:y, @docs:file:///a b")]
    assert found == [("demo", "demo://readme"), ("docs", "file:///a")]
    assert MENTION.search("user@demo:demo://readme") is None  # inside a word: not a mention
    ended = [m.groups() for m in MENTION.finditer("read @demo:demo://readme. Then (@docs:file:///a.md), ok?")]
    assert ended == [("demo", "demo://readme"), ("docs", "file:///a.md")]  # a sentence's punctuation is not the URI's
    assert MENTION.fullmatch("@demo:demo://notes/a.b") is not None


# --- against the demo server --------------------------------------------------------------------


def test_read_resource_is_off_unless_named_and_reads_text_and_images():
    assert "read_resource" not in [e.name for e in demo_box(["demo", "all"]).enabled]

    async def body(box: Toolbox) -> None:
        assert box.is_enabled("read_resource")
        entry = box.registry.entry("read_resource")
        assert entry is not None and not entry.needs_approval
        text = await entry.tool.call({"resource": "@demo:demo://readme"}, CTX)
        assert text.text == "[resource: demo://readme]\n# Demo\nA server for golem's tests."
        image = await entry.tool.call({"resource": "@demo:demo://pixel.png"}, CTX)
        assert [(p.kind, p.media_type) for p in image.parts] == [("image", "image/png")]
        assert image.text.startswith("[resource: demo://pixel.png (image/png, ")
        assert (await entry.tool.call({"resource": "@demo:demo://notes/alpha"}, CTX)).text.endswith("notes on alpha")
        with pytest.raises(ToolFailed, match="no running tool server named 'other'"):
            await entry.tool.call({"resource": "@other:demo://readme"}, CTX)
        with pytest.raises(ToolFailed, match="could not read demo://nothing"):
            await entry.tool.call({"resource": "@demo:demo://nothing"}, CTX)

    with_box(["demo", "read_resource"], body)


def test_a_resource_link_in_a_result_is_named_the_way_it_is_opened():
    async def body(box: Toolbox) -> str:
        return (await call(box, "demo__linked")).text

    assert with_box(["demo"], body) == "see the readme\n[resource link: @demo:demo://readme (readme text/markdown)]"


def test_the_servers_completions_for_a_prompts_argument_and_a_templates_variable():
    async def body(box: Toolbox) -> tuple[list[str], list[str], list[str]]:
        (source,) = box.servers()
        style = await source.complete({"type": "ref/prompt", "name": "greet"}, "style", "", {"name": "Ada"})
        topic = await source.complete({"type": "ref/resource", "uri": "demo://notes/{topic}"}, "topic", "b", {})
        none = await source.complete({"type": "ref/prompt", "name": "greet"}, "name", "", {})
        return style, topic, none

    hostile = "beta\x1b]0;pwned\x07"  # the tools layer passes it on; the chat's Tab never offers it
    assert with_box(["demo"], body) == (["plain", "warm", "very warm", "formal"], ["beta", hostile], [])


def test_changed_prompts_and_resources_are_read_again_between_turns():
    async def body(box: Toolbox) -> None:
        (source,) = box.servers()
        assert [p["name"] for p in source.prompt_list] == ["greet"]
        assert [r["uri"] for r in source.resource_list] == ["demo://readme", "demo://pixel.png"]
        assert [t["uriTemplate"] for t in source.template_list] == ["demo://notes/{topic}"]
        await call(box, "demo__grow")
        await until(lambda: {"tools", "prompts", "resources"} <= source.changed())  # its three notifications
        await box.refresh_servers()
        assert [p["name"] for p in source.prompt_list] == ["greet", "grown"]
        assert [r["uri"] for r in source.resource_list] == ["demo://readme", "demo://pixel.png", "demo://grown"]
        assert source.changed() == set()

    with_box(["demo"], body)
