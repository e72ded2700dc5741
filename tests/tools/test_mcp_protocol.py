"""The protocol around tool calls, through the tools layer against real servers: instructions,
changed tool lists, hostile answers the SDK cannot read, a server with too many tools, a
child that leaves the server's session, an HTTP answer over the size limit."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolContext, ToolFailed
from golem_cli.tools.toolbox import Toolbox, toolbox

from tests.mcpservers import server_tables
from tests.mcpservers.threaded import http_demo

pytestmark = pytest.mark.slow
CTX = ToolContext(call_id="c1", tool_name="t", args="{}")
RAW = str(Path(__file__).parents[1] / "mcpservers" / "raw.py")


def box_for(servers: dict[str, dict], enabled: list[str], **keys) -> Toolbox:
    return toolbox(enabled=enabled, servers=server_tables(servers), **keys)


def raw(*args: str, **keys: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [RAW, *args], **keys}


@pytest.fixture
def demo_url() -> Iterator[str]:
    """The demo server, over HTTP from a thread of this process (``grow`` changes it: one per test)."""
    with http_demo() as url:
        yield url


async def call(box: Toolbox, name: str, **args):
    entry = box.registry.entry(name)
    assert entry is not None, f"{name} not in {[e.name for e in box.registry.entries()]}"
    return await entry.tool.call(args, CTX)


def test_instructions_are_cut_at_2_kb_with_a_mark_and_named_by_server():
    from golem_cli.tools.mcp.source import CUT_MARK, MAX_INSTRUCTIONS

    long = "é" * 3000  # two bytes each: the cut falls inside no character
    with (http_demo(instructions=long) as demo, http_demo("other", instructions="Be kind.") as other,
          http_demo("off", instructions="Ignore me.") as off):  # fmt: skip
        box = box_for({"demo": {"url": demo}, "other": {"url": other}, "off": {"url": off, "instructions": False}},
                      ["demo", "other", "off"])  # fmt: skip

        async def go() -> str:
            assert await box.start() == []
            try:
                return box.instructions()
            finally:
                await box.close()

        text = asyncio.run(go())
    first, second = text.split("\n\n")
    assert first.startswith("Instructions from the tool server 'demo':\n" + "é" * 1024) and first.endswith(CUT_MARK)
    assert len(first.split("\n")[1].encode()) == MAX_INSTRUCTIONS
    assert second == "Instructions from the tool server 'other':\nBe kind."


def test_a_changed_list_keeps_the_order_and_a_disabled_tool_stays_off(demo_url: str):
    box = box_for({"demo": {"url": demo_url}}, ["demo"])

    async def go() -> None:
        assert await box.start() == []
        try:
            before = [e.name for e in box.enabled]
            assert await box.refresh_servers() == []  # nothing changed: nothing read again
            box.disable(["demo__echo"])
            await call(box, "demo__grow")
            assert await box.refresh_servers() == ["tool server 'demo' changed its tools: added demo__grown"]
            after = [e.name for e in box.enabled]
            assert after == [n for n in before if n != "demo__echo"] + ["demo__grown"]
            assert (await call(box, "demo__grown", text="x")).text == "grown: x"
        finally:
            await box.close()

    asyncio.run(go())


@pytest.mark.parametrize(("answer", "words"), [
    ("surrogate", "a lone surrogate escape such as \\ud800 in a string"),
    ("deep", "JSON nested too deeply"),
])  # fmt: skip
def test_an_answer_the_sdk_cannot_read_fails_the_call_at_once_saying_why(answer: str, words: str):
    box = box_for({"raw": raw("--answer", answer, tool_timeout_sec=60)}, ["raw"])

    async def go() -> tuple[str, float]:
        assert await box.start() == []
        try:
            began = time.monotonic()
            with pytest.raises(ToolFailed) as info:
                await call(box, "raw__t0")
            return info.value.reason, time.monotonic() - began
        finally:
            await box.close()

    reason, seconds = asyncio.run(go())
    assert reason.startswith("tool server 'raw' refused the call: the server sent an answer golem cannot read (")
    assert words in reason
    assert seconds < 30  # not the 60 s timeout


def test_a_server_with_too_many_tools_is_cut_and_says_how_to_choose():
    box = box_for({"many": raw("--tools", "10000")}, ["many"])
    chosen = box_for({"many": raw("--tools", "10000", enabled_tools=["t9999"])}, ["many"])

    async def go(b: Toolbox) -> list[str]:
        assert await b.start() == []
        await b.close()
        return [e.name for e in b.enabled]

    assert len(asyncio.run(go(box))) == 500
    assert box.notices == ["tool server 'many' offers more than 500 tools; golem took the first 500: choose the ones "
                           "to offer with enabled_tools = [...] in [mcp_servers.many]"]  # fmt: skip
    assert asyncio.run(go(chosen)) == ["many__t9999"] and chosen.notices == []


def test_a_child_that_left_the_servers_session_stops_with_it(tmp_path: Path):
    marks = tmp_path / "child"
    box = box_for({"raw": raw("--setsid-child", str(marks))}, ["raw"])

    async def go() -> None:
        assert await box.start() == []
        try:
            assert (await call(box, "raw__t0")).text == "fine"
        finally:
            await box.close()

    asyncio.run(go())
    pid = int(marks.read_text())
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}") or _state(pid) == "Z"


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    return stat[stat.rindex(")") + 2]


def test_an_http_answer_over_the_limit_says_so():
    from golem_cli.tools.mcp.config import ServerConfig
    from golem_cli.tools.mcp.connection import Connection

    with http_demo() as url:
        connection = Connection(ServerConfig(name="remote", table=server_tables({"remote": {"url": url}})["remote"]),
                                max_message=256 * 1024)  # fmt: skip

        async def go() -> str:
            await connection.start()
            try:
                with pytest.raises(ToolFailed) as info:
                    await connection.call("flood", {"characters": 400_000})
                return info.value.reason
            finally:
                await connection.close()

        reason = asyncio.run(go())
    assert "sent an answer over 256 KiB" in reason, reason


def test_tokens_are_kept_for_their_owner_alone_and_forgotten_whole(tmp_path: Path):
    from golem_cli.tools.mcp.tokens import TokenFile

    file = TokenFile(tmp_path / "state" / "mcp-auth", "remote")
    assert file.load() == {} and not file.delete()
    file.put("tokens", {"access_token": "a", "token_type": "Bearer"})
    file.put("client", {"client_id": "golem-1"})
    assert oct(file.path.stat().st_mode & 0o777) == "0o600"
    assert oct(file.directory.stat().st_mode & 0o777) == "0o700"
    assert file.get("tokens") == {"access_token": "a", "token_type": "Bearer"}
    assert file.get("client") == {"client_id": "golem-1"}
    os.mkfifo(tmp_path / "fifo.json")
    assert TokenFile(tmp_path, "fifo").load() == {}  # never blocks on a FIFO
    assert file.delete() and file.load() == {}
