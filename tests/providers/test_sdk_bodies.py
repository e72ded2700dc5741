"""Request bodies checked against the official SDKs' request types (``tests/providerserver/sdk``).

The bodies come from what the runtime really sends for a history (the agent's request: repaired,
system messages out, the new prompt last): the spec vectors, replies parsed from the recordings
continued on both protocols, and generated histories. Histories the APIs cannot carry (a part
kind the protocol has no block for) fail with a ``ModelError`` before anything is sent; every
body that is built must validate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from golem_cli.core.agent import Agent
from golem_cli.core.errors import GolemError, ModelError
from golem_cli.core.messages import Message
from golem_cli.core.model import ModelRequest, ModelSettings
from golem_cli.providers.anthropic import wire as anthropic_wire
from golem_cli.providers.openai import wire as openai_wire
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES, messages
from tests.providers.helpers import anthropic_model, complete, openai_model, stream
from tests.providerserver import ProviderServer, Scenario, load_recording, recording_paths
from tests.providerserver.sdk import assert_valid
from tests.providerserver.validate import validate_anthropic, validate_openai
from tests.scripted import ScriptedModel, reply
from tests.vectors import load_vector, message_from_json, vector_files


def sent_request(history: Sequence[Message], prompt: str = "next", instructions: str = "be brief") -> ModelRequest | None:
    """The request the runtime sends to continue ``history``; None when the run refuses it."""
    model = ScriptedModel([reply("ok")])
    try:
        asyncio.run(Agent(model, instructions=instructions).run_with_history(history, prompt))
    except GolemError:
        if not model.requests:
            return None
    return model.requests[0]


def bodies(request: ModelRequest) -> list[tuple[str, Any]]:
    """Both protocols' bodies, streaming and not, as decoded JSON; a ``ModelError`` (content the
    protocol cannot carry) yields none for that protocol."""
    out: list[tuple[str, Any]] = []
    for stream_flag in (True, False):
        try:
            out.append(("openai", msgspec.json.decode(openai_wire.request_body("gpt-4o", request, stream=stream_flag))))
        except ModelError:
            pass
        try:
            body = anthropic_wire.request_body("claude-sonnet-4-5", 1024, request, stream=stream_flag)
            out.append(("anthropic", msgspec.json.decode(body)))
        except ModelError:
            pass
    return out


def check(history: Sequence[Message]) -> int:
    request = sent_request(history)
    if request is None:
        return 0
    built = bodies(request)
    for protocol, body in built:
        assert_valid(protocol, body)
        # and the test server's rules, which know what the SDK types cannot say (pairing, empty text)
        problem = validate_openai(body) if protocol == "openai" else validate_anthropic({"anthropic-version": "x"}, body)
        assert problem is None, (protocol, problem)
    return len(built)


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.stem)
def test_spec_vectors(path: Path) -> None:
    vector = load_vector(path)
    histories = [vector["input"]] + ([vector["output"]] if isinstance(vector.get("output"), list) else [])
    for history in histories:
        check([message_from_json(m) for m in history])


def _recorded_reply(server: ProviderServer, path: Path) -> Message:
    recording = load_recording(str(path))
    streamed = recording["response"]["headers"]["content-type"].startswith("text/event-stream")
    model = openai_model(server) if path.parent.name == "openai" else anthropic_model(server)
    server.enqueue(Scenario(replay=str(path)))
    if streamed:
        out = stream(model)
        return out.received() if out.error else out.done.response.message
    return complete(model).message


SUCCESSES = [p for p in recording_paths("openai") + recording_paths("anthropic") if load_recording(str(p))["response"]["status"] == 200]


@pytest.mark.parametrize("path", SUCCESSES, ids=lambda p: p.stem)
def test_recorded_replies_continue_on_both_protocols(server: ProviderServer, path: Path) -> None:
    answer = _recorded_reply(server, path)
    history = [Message(role="user", content="the recorded question"), answer]
    history += [Message(role="tool", content="42", tool_call_id=c.id, tool_name=c.name) for c in answer.tool_calls]
    assert check(history) == 4


@given(HISTORIES)
def test_generated_histories(history: list[Message]) -> None:
    check(history)


TEXT_ONLY = st.lists(messages().map(lambda m: msgspec.structs.replace(m, parts=[])), max_size=10)


@given(TEXT_ONLY)
def test_generated_histories_without_media_always_give_bodies(history: list[Message]) -> None:
    """Without media parts nothing is beyond either protocol: both must build valid bodies."""
    request = sent_request(history)
    if request is not None:
        assert len(bodies(request)) == 4


def test_settings_are_valid_options() -> None:
    request = ModelRequest(
        messages=[Message(role="user", content="hi")], settings=ModelSettings(max_tokens=50, temperature=0.5, top_p=0.9)
    )
    assert len(bodies(request)) == 4 and all(body for _, body in bodies(request))


def test_the_oracle_rejects_what_the_apis_reject() -> None:
    """The oracle is not a rubber stamp: the shapes issue 11 found rejected are rejected here."""
    from tests.providerserver.sdk import sdk_problem

    base = {"model": "m", "max_tokens": 5}
    assert sdk_problem("anthropic", {**base, "messages": [{"role": "user", "content": [{"type": "text"}]}]})
    assert sdk_problem("anthropic", {**base, "messages": [{"role": "assistant", "content": None}]})
    assert sdk_problem("anthropic", {**base, "messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}]})
    assert sdk_problem("anthropic", {**base, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}]})
    assert sdk_problem("openai", {"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]})
    assert sdk_problem("openai", {"model": "m", "messages": [], "stream": True, "stream_options": "yes"})
    assert sdk_problem("anthropic", {**base, "messages": [{"role": "user", "content": "hi"}]}) is None
