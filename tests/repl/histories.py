"""Conversations written as files through golem's own store: the state a test starts from when
the turns that built it are not what the test is about. Each ``golem ask`` is a process (about
0.4 CPU-s); a history of N turns written here costs none, and holds what N asks against the
loopback server's echo model would have left: the same messages with their run and
conversation stamps, the metadata sidecar with the chat's settings, one ledger run per turn
(the server's usage: 11 tokens in, 7 out a request, no cost) and ``last`` pointing at it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from golem_cli.core.ids import new_id
from golem_cli.core.messages import Message, ToolCall
from golem_cli.core.usage import Usage
from golem_cli.store.meta import ChatSettings
from golem_cli.store.sidecars import RUNS
from golem_cli.store.sidecars.calls import CallLog
from golem_cli.store.sidecars.ledger import Ledger
from golem_cli.store.store import Store

#: one turn's messages from (its prompt, its number in the conversation, its run ID, the conversation's ID)
Turn = Callable[[str, int, str, str], list[Message]]


def store(home: Path) -> Store:
    """The store golem opens under ``GOLEM_HOME=home`` (``last`` recorded where golem records it)."""
    return Store(home, state=home / "state")


def echo_turn(prompt: str, n: int, run: str, cid: str) -> list[Message]:
    """A prompt and the echo model's answer to it (``echo: <prompt>``)."""
    return [
        Message(role="user", content=prompt, run_id=run, conversation_id=cid),
        Message(role="assistant", content=f"echo: {prompt}", run_id=run, conversation_id=cid),
    ]


def tool_turn(prompt: str, n: int, run: str, cid: str, *, call_prefix: str = "call") -> list[Message]:
    """A prompt answered by one ``read_file notes.txt`` round (``reading n``, the file's
    ``hello``), then ``read n``: what ``tests.repl.test_cache_prefix.rounds`` scripts."""
    stamp = {"run_id": run, "conversation_id": cid}
    call = ToolCall(id=f"{call_prefix}_{n}", name="read_file", args='{"path": "notes.txt"}')
    return [
        Message(role="user", content=prompt, **stamp),
        Message(role="assistant", content=f"reading {n}", tool_calls=[call], **stamp),
        Message(role="tool", content="hello\n", tool_call_id=call.id, tool_name="read_file", **stamp),
        Message(role="assistant", content=f"read {n}", **stamp),
    ]


def write_conversation(
    home: Path,
    prompts: Sequence[str],
    *,
    model: str = "local:echo",
    system: str = "",
    tools: Sequence[str] = (),
    tool_rounds: bool = False,
    call_prefix: str = "call",
    settings: ChatSettings | None = None,
) -> str:
    """A conversation of one turn per prompt, as ``golem ask`` (then ``ask -c``) with ``-m model``,
    ``-s system`` and ``-T tools`` would have stored it; its ID. With ``tool_rounds`` each turn
    is a ``read_file`` round (``tool_turn``), else the echo's answer (``echo_turn``).
    ``settings`` replaces the ones those flags keep (what a chat's commands chose)."""
    cid = new_id()
    place = store(home)
    place.create([Message(role="system", content=system)] if system else [], cid=cid, model=model)
    if settings is None and (tools or system):
        settings = ChatSettings(tools=list(tools), system="-s" if system else "")
    if settings is not None:
        place.set_settings(cid, settings)
    turn = partial(tool_turn, call_prefix=call_prefix) if tool_rounds else echo_turn
    append_turns(home, cid, prompts, model=model, turn=turn)
    return cid


def append_turns(home: Path, cid: str, prompts: Sequence[str], *, model: str = "local:echo",
                 turn: Turn = echo_turn) -> None:  # fmt: skip
    """Add one turn per prompt to a stored conversation, with its ledger run and call records."""
    place = store(home)
    messages = place.load(cid)
    start = sum(m.role == "user" for m in messages)
    path = place.sidecar_path(cid, RUNS)
    ledger, calls = Ledger(path), CallLog(path)
    for n, prompt in enumerate(prompts, start):
        run = new_id()
        said = turn(prompt, n, run, cid)
        requests = 1 + sum(len(m.tool_calls) > 0 for m in said)
        ledger.started(run, kind="turn", model=model)
        for call in (c for m in said for c in m.tool_calls):
            calls.started(call.id, run, call.name)
            calls.ended(call.id, run)
        ledger.ended(run, usage=Usage(input_tokens=11 * requests, output_tokens=7 * requests), requests=requests,
                     finish_reason="stop", failed=False, stopped=False, cost=None, last_input_tokens=11)  # fmt: skip
        messages += said
    place.append(cid, messages)
