"""A byte-stable prefix: while the window does not move, each request repeats the one before it
byte for byte (tools, instructions, every message already sent) and differs only where cache
breakpoints sit, through golem's entry point (``golem ask -c`` in this process, ``golem_run``)
and the REPL on a terminal, on both protocols, with tool rounds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from tests.providerserver import ProviderServer, Received, Reply, Scenario, ToolCallSpec
from tests.repl import inprocess_golem

pytestmark = pytest.mark.slow

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}
_MARKER = re.compile(rb',"cache_control":\{[^{}]*\}')
golem_run = inprocess_golem.golem_run  # golem's entry point in this process, its exit code checked


class _Parts(msgspec.Struct):
    """A request's parts as the bytes golem sent (``msgspec.Raw`` keeps them as they were)."""

    messages: list[msgspec.Raw]
    tools: msgspec.Raw = msgspec.Raw(b"null")
    system: msgspec.Raw = msgspec.Raw(b"null")


def parts(request: Received) -> tuple[bytes, bytes, list[bytes]]:
    """(tools, system, messages) of a request, cache breakpoints taken out."""
    found = msgspec.json.decode(request.body, type=_Parts)
    unmark = lambda raw: _MARKER.sub(b"", bytes(raw))  # noqa: E731
    return unmark(found.tools), unmark(found.system), [unmark(m) for m in found.messages]


def assert_each_repeats_the_one_before(requests: list[Received]) -> None:
    assert len(requests) >= 4
    for before, after in zip(requests, requests[1:], strict=False):
        tools, system, messages = parts(before)
        later_tools, later_system, later = parts(after)
        assert (later_tools, later_system) == (tools, system)
        assert len(later) > len(messages) and later[: len(messages)] == messages


def project(home: Path) -> None:
    root = home / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())


def rounds(kind: str, n: int) -> list[Scenario]:
    """A tool round then a reply, for each of ``n`` turns."""
    out = []
    for turn in range(n):
        call = ToolCallSpec(
            f"{'toolu' if kind == 'anthropic' else 'call'}_{turn}", "read_file", '{"path": "notes.txt"}'
        )
        out += [
            Scenario(reply=Reply(text=f"reading {turn}", tool_calls=[call])),
            Scenario(reply=Reply(text=f"read {turn}")),
        ]
    return out


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_ask_continued_repeats_the_request_before(golem_run, server: ProviderServer, home: Path, kind: str) -> None:
    project(home)
    server.enqueue(*rounds(kind, 3))
    for n in range(3):
        golem_run("ask", *(["-c"] if n else ["-s", "You are terse."]), "-m", MODELS[kind], "-T", "fs", f"turn {n}")
    assert len(server.requests) == 6
    assert_each_repeats_the_one_before(server.requests)
    tools = [t.get("name") or t["function"]["name"] for t in server.requests[-1].json["tools"]]
    assert tools == sorted(tools)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_the_repl_repeats_the_request_before(golem_run, server: ProviderServer, home: Path, kind: str) -> None:
    """One chat's turns, its prompts read from standard input (in this process): the requests
    are what is checked, the terminal is other tests'."""
    project(home)
    server.enqueue(*rounds(kind, 2))
    out = golem_run("chat", "-m", MODELS[kind], "-T", "fs", "--yes", input="turn 0\nturn 1\nand a last one\n").out
    assert "read 0" in out and out.index("read 0") < out.index("read 1")
    assert len(server.requests) == 5
    assert_each_repeats_the_one_before(server.requests)
    assert json.loads(server.requests[-1].body)["messages"]  # a real body, not an empty one


def test_ask_with_a_trim_stride_moves_the_window_in_steps(golem_run, server: ProviderServer, home: Path) -> None:
    """``--max-messages 6 --trim-stride 3``: the history sent starts at the same message for
    three appended messages at a time, and a stride that does not fit is one line."""
    starts = []
    for n in range(8):
        golem_run("ask", *(["-c"] if n else []), "--max-messages", "6", "--trim-stride", "3", f"turn {n}")
        starts.append(server.requests[-1].json["messages"][0]["content"])
    # two messages a turn: the cut is at message 3, 6, 9 (the first step that leaves at most 6)
    assert starts == ["turn 0"] * 4 + ["echo: turn 1", "turn 3", "turn 3", "echo: turn 4"]
    assert all(len(r.json["messages"]) <= 7 for r in server.requests)
    done = golem_run("ask", "-c", "--max-messages", "6", "--trim-stride", "6", "x", code=2)
    assert done.err.startswith("golem: a trim stride of 6 does not fit a window of 6")
    # a chat's too; neither keeps the conversation's lock after (golem_run checks what is left)
    done = golem_run("resume", "last", "--max-messages", "6", "--trim-stride", "6", input="x\n", code=2)
    assert done.err.startswith("golem: a trim stride of 6 does not fit a window of 6")
