"""Answers golem once mishandled: refusals, replies cut off by a limit or a filter, and a whole
JSON message answering a streaming request (issue 11)."""

from __future__ import annotations

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.providers._wire import REFUSED_WITHOUT_TEXT

from tests.providers.helpers import complete, make_model, stream
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec
from tests.providerserver.render import anthropic_body, openai_body

KINDS = ["openai", "anthropic"]
REFUSAL = "I'm sorry, but I can't help with that."


def answer(server: ProviderServer, kind: str, streaming: bool):  # type: ignore[no-untyped-def]
    model = make_model(kind, server)
    return stream(model).done.response if streaming else complete(model)


@pytest.mark.parametrize("streaming", [True, False])
def test_openai_refusal_is_the_reply_and_marked(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(refusal=REFUSAL)))
    response = answer(server, "openai", streaming)
    assert response.refusal and response.message.content == REFUSAL
    assert response.stop_reason == "stop"


@pytest.mark.parametrize("streaming", [True, False])
def test_openai_streamed_refusal_is_shown_as_it_arrives(server: ProviderServer, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(refusal=REFUSAL)))
    out = stream(make_model("openai", server))
    assert out.accumulator.text == REFUSAL and out.done.response.refusal


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("text", ["", "I will not"])
def test_anthropic_refusal_keeps_what_was_said_or_says_it_refused(server: ProviderServer, streaming: bool, text: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=text, refusal="-")))
    response = answer(server, "anthropic", streaming)
    assert response.refusal and response.stop_reason == "refusal" and response.finish_reason == "content_filter"
    assert response.message.content == (text or REFUSED_WITHOUT_TEXT)


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(("kind", "word", "golem"), [("openai", "length", "length"), ("openai", "content_filter", "content_filter"),
                                                     ("anthropic", "max_tokens", "length")])  # fmt: skip
def test_cut_off_replies_say_why_in_the_providers_word(server: ProviderServer, kind: str, word: str, golem: str, streaming: bool) -> None:
    server.enqueue(Scenario(reply=Reply(text="The beginning of a long", finish=word)))
    response = answer(server, kind, streaming)
    assert (response.stop_reason, response.finish_reason) == (word, golem) and not response.refusal
    assert response.message.content == "The beginning of a long"


@pytest.mark.parametrize("kind", KINDS)
def test_a_json_body_answering_a_streaming_request_is_the_whole_answer(server: ProviderServer, kind: str) -> None:
    reply = Reply(text="All of it, at once.", thinking="hm", signature="sig", tool_calls=[ToolCallSpec("call_1", "roll", '{"n": 2}')])
    server.enqueue(Scenario(body=(openai_body if kind == "openai" else anthropic_body)(reply, "m")))
    out = stream(make_model(kind, server))
    message = out.done.response.message
    assert message.content == "All of it, at once." and out.accumulator.text == "All of it, at once."
    assert [(c.id, c.name, c.args) for c in message.tool_calls] == [("call_1", "roll", '{"n": 2}')]
    assert message.thinking[0].text == "hm" and server.requests[0].json["stream"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_a_json_error_answering_a_streaming_request_is_that_error(server: ProviderServer, kind: str) -> None:
    body = (b'{"error": {"message": "model is loading", "code": 503}}' if kind == "openai"
            else b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}')  # fmt: skip
    server.enqueue(Scenario(body=body))
    error = stream(make_model(kind, server)).error
    assert isinstance(error, ModelError) and ("model is loading" in str(error) or "Overloaded" in str(error))
    assert "cut off" not in str(error) and "mid-reply" not in str(error)
