"""Tool servers through the tools layer, against real servers: the SDK's own server class
(tests/mcpservers/demo_app.py) over stdio, a program of its own, and over streamable HTTP from
a thread of this process; and a published server from PyPI (mcp-server-time). The tests about
a server's process use a real one, and so are its crashes, kills and cancellations."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from golem_cli.core.tools import ToolContext, ToolFailed
from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.toolbox import Toolbox, toolbox

from tests.mcpservers import demo_table, published, server_tables
from tests.mcpservers.threaded import http_demo

pytestmark = pytest.mark.slow
CTX = ToolContext(call_id="c1", tool_name="t", args="{}")


def box_for(servers: dict[str, dict], enabled: list[str], **keys) -> Toolbox:
    return toolbox(enabled=enabled, servers=server_tables(servers), **keys)


async def call(box: Toolbox, name: str, **args):
    entry = box.registry.entry(name)
    assert entry is not None, f"{name} not in {[e.name for e in box.registry.entries()]}"
    return await entry.tool.call(args, CTX)


async def failed(box: Toolbox, name: str, **args) -> str:
    with pytest.raises(ToolFailed) as info:
        await call(box, name, **args)
    return info.value.reason


def wait_for(path: Path, seconds: float = 15) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def wait_for_async(path: Path, seconds: float = 15) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def gone(pid: int) -> bool:
    """The process is gone and reaped (a zombie still has a /proc entry)."""
    return not os.path.exists(f"/proc/{pid}")


@pytest.fixture
def demo_url() -> Iterator[str]:
    """The demo server, over HTTP from a thread of this process."""
    with http_demo() as url:
        yield url


def test_tools_are_listed_named_and_called(demo_url: str):
    box = box_for({"demo": {"url": demo_url}}, ["demo"], output_limit=2000)

    async def go() -> None:
        assert box.waiting == ["demo"] and [s.name for s in box.to_start()] == ["mcp:demo"]
        assert await box.start() == []
        try:
            names = [e.name for e in box.enabled]
            assert names[:3] == ["demo__echo", "demo__shout", "demo__slow"] and "demo__picture" in names
            echo = box.registry.entry("demo__echo")
            assert echo is not None and echo.source == "mcp:demo" and echo.group == "demo" and echo.own_name == "echo"
            assert echo.tool.description == "Say the text back."
            assert echo.tool.parameters["properties"]["text"]["type"] == "string"
            assert echo.needs_approval  # the server's read-only claim waives nothing by itself
            shout = box.registry.entry("demo__shout")
            assert shout is not None and shout.destructive and not echo.destructive
            assert (await call(box, "demo__echo", text="hi")).text == "demo says: hi"
            picture = await call(box, "demo__picture")
            assert picture.text == "a red pixel"
            assert [(p.kind, p.media_type, p.data[:4]) for p in picture.parts] == [("image", "image/png", b"\x89PNG")]
            assert (await call(box, "demo__structured")).text == '{"answer":42,"unit":"m"}'
            assert await failed(box, "demo__fail", why="no disk") == "Error executing tool fail: no disk"
            assert "Input should be a valid string" in await failed(box, "demo__echo", text=5)
            flood = (await call(box, "demo__flood", characters=100_000)).text
            assert len(flood) < 2100 and "characters cut here" in flood and flood.endswith("END")
        finally:
            await box.close()

    asyncio.run(go())


def test_a_server_that_exits_at_start_is_one_line_and_the_chat_goes_on():
    box = box_for({"bad": demo_table("--exit-at-start", "3")}, ["bad", "read_file"])

    async def go() -> list[str]:
        try:
            return await box.start()
        finally:
            await box.close()

    problems = asyncio.run(go())
    assert problems == ["tool server 'bad' did not start: exited at start "
                        "(exit status 3; it said: demo: refusing to start (told to))"]  # fmt: skip
    assert [e.name for e in box.enabled] == ["read_file"]


def test_a_missing_program_and_a_server_that_never_answers(tmp_path: Path):
    pidfile = tmp_path / "pid"
    servers = {
        "nosuch": {"command": str(tmp_path / "no-such-program")},
        "mute": {"command": "sh", "args": ["-c", f"echo $$ > {pidfile}; exec sleep 60"], "startup_timeout_sec": 1.0},
    }
    box = box_for(servers, ["nosuch", "mute"])
    began = time.monotonic()
    problems = asyncio.run(box.start())
    assert time.monotonic() - began < 8
    assert f"tool server 'nosuch' did not start: cannot run '{tmp_path / 'no-such-program'}': no such program" in problems
    assert "tool server 'mute' did not start: did not start within 1 s (killed by SIGTERM)" in problems
    assert gone(int(pidfile.read_text()))  # stopped and reaped, no zombie


def test_a_crashed_server_fails_the_call_and_is_restarted_once(tmp_path: Path):
    box = box_for({"demo": demo_table("--marks", str(tmp_path))}, ["demo"])

    async def go() -> None:
        await box.start()
        try:
            first = (await call(box, "demo__pid")).text
            said = await failed(box, "demo__crash")
            assert said == ("tool server 'demo' stopped (exit status 7; it said: demo: crashing now) during the call; "
                            "its next call starts it again")  # fmt: skip
            assert gone(int(first))
            second = (await call(box, "demo__pid")).text  # started again
            assert second != first
            assert "it stopped twice, so golem does not start it again in this chat" in await failed(box, "demo__crash")
            assert "is not running" in await failed(box, "demo__echo", text="x")
            assert gone(int(second))
            assert box.notices == []  # said by the calls' results, not again
        finally:
            await box.close()

    asyncio.run(go())


def test_a_server_killed_mid_call_and_one_that_stops_between_calls(tmp_path: Path):
    box = box_for({"demo": demo_table("--marks", str(tmp_path))}, ["demo"])

    async def go() -> None:
        await box.start()
        try:
            pending = asyncio.ensure_future(call(box, "demo__slow", seconds=60))
            pid = int(await wait_for_async(tmp_path / "slow-started"))
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(ToolFailed, match=r"stopped \(killed by SIGKILL\) during the call; its next call"):
                await pending
            again = int((await call(box, "demo__pid")).text)
            os.kill(again, signal.SIGTERM)  # between calls: a notice for the CLI to show
            for _ in range(200):
                if box.notices:
                    break
                await asyncio.sleep(0.05)
            assert box.notices == ["tool server 'demo' stopped (killed by SIGTERM); it stopped twice, so golem does "
                                   "not start it again in this chat"]  # fmt: skip
        finally:
            await box.close()

    asyncio.run(go())


def test_a_cancelled_call_reaches_the_server_and_closing_stops_it_and_what_it_started(tmp_path: Path):
    """One server process: a call cancelled (the server is told, and goes on), then the box
    closed (the server stops, and so does what it started)."""
    box = box_for({"demo": demo_table("--marks", str(tmp_path))}, ["demo"])

    async def go() -> tuple[int, int]:
        await box.start()
        try:
            pending = asyncio.ensure_future(call(box, "demo__slow", seconds=60))
            await wait_for_async(tmp_path / "slow-started")
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending
            assert await wait_for_async(tmp_path / "slow-cancelled", 10) == "yes", "notifications/cancelled never came"
            assert (await call(box, "demo__echo", text="still here")).text == "demo says: still here"
            return int((await call(box, "demo__pid")).text), int((await call(box, "demo__spawn_child")).text)
        finally:
            await box.close()

    server, child = asyncio.run(go())
    assert gone(server), "closing the box did not stop the server"
    deadline = time.monotonic() + 5
    while not gone(child) and time.monotonic() < deadline:  # init reaps the orphan
        time.sleep(0.05)
    assert gone(child), "closing the box did not stop what the server started"


def test_a_call_past_the_tool_timeout_is_cancelled(tmp_path: Path):
    box = box_for({"demo": demo_table("--marks", str(tmp_path), tool_timeout_sec=1.0)}, ["demo"])

    async def go() -> None:
        await box.start()
        try:
            said = await failed(box, "demo__slow", seconds=60)
            assert said == "tool server 'demo' did not answer within 1 s; the call was cancelled"
            assert await wait_for_async(tmp_path / "slow-cancelled", 10) == "yes"
        finally:
            await box.close()

    asyncio.run(go())


def test_a_message_over_the_limit_ends_the_connection(tmp_path: Path):
    from golem_cli.tools.mcp.connection import Connection

    async def go() -> str:
        connection = Connection(ServerConfig(name="demo", table=server_tables({"demo": demo_table()})["demo"]), max_message=64 * 1024)
        await connection.start()
        try:
            with pytest.raises(ToolFailed) as info:
                await connection.call("flood", {"characters": 200_000})
            return info.value.reason
        finally:
            await connection.close()

    said = asyncio.run(go())
    assert said.startswith("tool server 'demo' stopped (sent a message over 64 KiB; ")
    assert said.endswith(") during the call; its next call starts it again")


def test_two_servers_with_the_same_tool_names():
    with http_demo("alpha") as alpha, http_demo("beta") as beta:
        box = box_for({"alpha": {"url": alpha}, "beta": {"url": beta}}, ["alpha.echo", "beta"])

        async def go() -> tuple[str, str]:
            assert {s.group for s in box.to_start()} == {"alpha", "beta"}
            assert await box.start() == []
            try:
                return (await call(box, "alpha__echo", text="x")).text, (await call(box, "beta__echo", text="x")).text
            finally:
                await box.close()

        assert asyncio.run(go()) == ("alpha says: x", "beta says: x")
    enabled = [e.name for e in box.enabled]
    assert "alpha__echo" in enabled and "alpha__shout" not in enabled and "beta__shout" in enabled


def test_allow_patterns_hints_and_unknown_names(demo_url: str):
    servers = {"demo": {"url": demo_url, "allow": ["s*", "echo"], "allow_read_only": False}}
    box = box_for(servers, ["demo", "demo.nope"], allow=["demo.f*", "demo.nothing"])

    async def go() -> list[str]:
        try:
            return await box.start()
        finally:
            await box.close()

    problems = asyncio.run(go())
    assert problems[0].startswith("-T demo.nope: tool server 'demo' has no tool 'demo.nope' (it offers ask_user, authorization, ")
    assert problems[1].startswith("--allow demo.nothing: tool server 'demo' has no tool")
    need = {e.own_name: e.needs_approval for e in box.enabled}
    assert need["echo"] is False  # named in allow
    assert need["slow"] is False and need["spawn_child"] is False and need["structured"] is False  # "s*"
    assert need["shout"] is True  # "s*" matches, but the server says it is destructive
    assert need["pid"] is True
    assert box.approvals.allowed == {"demo__fail", "demo__flood"}  # --allow demo.f*


@pytest.fixture
def http_server() -> Iterator[str]:
    """A demo server named web-demo, over HTTP from a thread of this process."""
    with http_demo("web-demo") as url:
        yield url


def test_a_streamable_http_server(http_server: str, monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", "s3cret")
    box = box_for({"remote": {"url": http_server, "bearer_token_env_var": "DEMO_TOKEN", "headers": {"X-Test": "1"}}},
                  ["remote"])  # fmt: skip

    async def go() -> None:
        assert await box.start() == []
        try:
            assert (await call(box, "remote__echo", text="over http")).text == "web-demo says: over http"
            assert (await call(box, "remote__authorization")).text == "Bearer s3cret"
            assert (await call(box, "remote__picture")).parts[0].media_type == "image/png"
            assert await failed(box, "remote__fail") == "Error executing tool fail: it went wrong"
        finally:
            await box.close()

    asyncio.run(go())


def test_an_unreachable_http_server_is_one_line(refused_port: int):
    box = box_for({"remote": {"url": f"http://127.0.0.1:{refused_port}/mcp", "startup_timeout_sec": 5.0}}, ["remote"])
    (problem,) = asyncio.run(box.start())
    assert problem.startswith("tool server 'remote' did not start: ") and "\n" not in problem
    print(problem)


def test_a_published_server_from_pypi_mcp_server_time():
    command = published("mcp-server-time")  # a test dependency: missing is a failure, not a skip
    box = box_for({"time": {"command": command, "args": ["--local-timezone", "Etc/UTC"], "allow_read_only": True}},
                  ["time"])  # fmt: skip

    async def go() -> str:
        assert await box.start() == []
        try:
            return (await call(box, "time__convert_time", source_timezone="Europe/Paris", time="12:00",
                                target_timezone="Asia/Tokyo")).text  # fmt: skip
        finally:
            await box.close()

    said = json.loads(asyncio.run(go()))  # its text block: the result as indented JSON
    assert said["target"]["timezone"] == "Asia/Tokyo" and said["time_difference"] == "+8.0h"
    assert {e.name: e.needs_approval for e in box.enabled} == {"time__get_current_time": False,
                                                               "time__convert_time": False}  # fmt: skip
