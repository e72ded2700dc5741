"""golem's tools layer against the published reference server, ``@modelcontextprotocol/
server-everything`` (npm, installed into an ignored folder: ``tests/mcpservers/everything.py``;
skipped, saying why, when it cannot be): its prompts (with arguments and an embedded
resource), resources and templates (text and base64), argument completions, the roots golem
offers, progress, and an elicitation golem declines without a terminal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from golem_cli.cli.repl.prompts import prompt_text
from golem_cli.core.tools import ToolContext
from golem_cli.tools.mcp.resources import contents
from golem_cli.tools.toolbox import Toolbox, toolbox

from tests.mcpservers import server_tables
from tests.mcpservers.everything import everything_table

pytestmark = pytest.mark.slow
CTX = ToolContext(call_id="c1", tool_name="t", args="{}")


def with_everything(body, root: Path | None = None, enabled: tuple[str, ...] = ("ev",)) -> object:
    table = everything_table()

    async def go() -> object:
        box = toolbox(enabled=enabled, servers=server_tables({"ev": table}), root=root)
        assert await box.start() == []
        try:
            return await body(box)
        finally:
            await box.close()

    return asyncio.run(go())


async def call(box: Toolbox, name: str, **args: object):
    entry = box.registry.entry(name)
    assert entry is not None, f"{name} not in {[e.name for e in box.registry.entries()]}"
    return await entry.tool.call(args, CTX)


def test_its_prompts_are_listed_and_got_with_arguments_and_an_embedded_resource():
    async def body(box: Toolbox) -> None:
        (source,) = box.servers()
        names = [p["name"] for p in source.prompt_list]
        assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(names)
        (args,) = [p for p in source.prompt_list if p["name"] == "args-prompt"]
        assert [(a["name"], a.get("required", False)) for a in args["arguments"]] == [("city", True), ("state", False)]
        got = await source.get_prompt("args-prompt", {"city": "Paris", "state": "IDF"})
        assert "Paris" in prompt_text(got["messages"]) and "IDF" in prompt_text(got["messages"])
        embedded = prompt_text((await source.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"}))
                               ["messages"])  # fmt: skip
        assert "[resource: demo://resource/dynamic/text/1]\nResource 1: This is a plaintext resource" in embedded
        departments = await source.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "", {})
        assert departments == ["Engineering", "Sales", "Marketing", "Support"]
        narrowed = await source.complete({"type": "ref/prompt", "name": "completable-prompt"}, "name", "",
                                         {"department": "Sales"})  # fmt: skip
        assert narrowed and set(narrowed).isdisjoint(departments)  # the first argument narrows the second

    with_everything(body)


def test_its_resources_and_templates_are_read_as_text_and_bytes_and_links_name_them():
    async def body(box: Toolbox) -> None:
        (source,) = box.servers()
        uris = [r["uri"] for r in source.resource_list]
        assert "demo://resource/static/document/architecture.md" in uris
        templates = [t["uriTemplate"] for t in source.template_list]
        assert templates == ["demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"]
        (doc,) = contents(await source.read_resource("demo://resource/static/document/architecture.md"))
        assert doc.text is not None and doc.media_type == "text/markdown" and len(doc.text) > 100
        (blob,) = contents(await source.read_resource("demo://resource/dynamic/blob/1"))
        assert blob.text is None and blob.data.startswith(b"Resource 1: This is a base64 blob")
        links = (await call(box, "ev__get-resource-links", count=2)).text
        assert "[resource link: @ev:demo://resource/dynamic/blob/1 (Blob Resource 1 text/plain)]" in links
        read = await call(box, "read_resource", resource="@ev:demo://resource/dynamic/text/2")
        assert read.text.startswith("[resource: demo://resource/dynamic/text/2]\nResource 2: This is a plaintext")

    with_everything(body, enabled=("ev", "read_resource"))


def test_the_tool_root_is_its_one_root_and_progress_reaches_the_hooks(tmp_path: Path):
    async def body(box: Toolbox) -> tuple[str, list[tuple[object, ...]], str]:
        heard: list[tuple[object, ...]] = []
        box.hooks.progress = lambda *said: heard.append(said)
        roots = (await call(box, "ev__get-roots-list")).text
        done = (await call(box, "ev__trigger-long-running-operation", duration=0.3, steps=3)).text
        return roots, heard, done

    roots, heard, done = with_everything(body, root=tmp_path)
    assert "Current MCP Roots (1 total)" in roots and f"URI: {tmp_path.resolve().as_uri()}" in roots
    assert "Long running operation completed" in done
    assert [(call_id, progress, total) for call_id, progress, total, _ in heard] == [
        ("c1", 1.0, 3.0), ("c1", 2.0, 3.0), ("c1", 3.0, 3.0)
    ]  # fmt: skip


def test_its_elicitation_is_declined_when_nobody_can_be_asked():
    async def body(box: Toolbox) -> str:
        return (await call(box, "ev__trigger-elicitation-request")).text

    assert "decline" in str(with_everything(body)).lower()
