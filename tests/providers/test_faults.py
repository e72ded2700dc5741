"""Every fault the server can inject, against both adapters: retries, errors, cut streams.

An adapter makes one attempt and classifies the failure; retries happen only in the run loop
(``core.retry``). So every retry test runs the real loop over the adapter (``through_agent``).
"""

from __future__ import annotations

import pytest
from golem_cli.core.errors import ContextTooLong, ModelError, RunError
from golem_cli.providers._wording import HINT_CONTEXT
from msgspec.structs import replace

from tests.providers.helpers import FAST, complete, fast, make_model, stream, through_agent
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

KINDS = ["openai", "anthropic"]
LONG_TEXT = "A reply long enough to be cut somewhere in the middle of a word, surely. " * 3
CALL = ToolCallSpec("call_1", "roll_dice", '{"sides": 20, "label": "a long enough label to cut"}')


def failure(outcome: object) -> ModelError:
    """The provider error a failed run ended with."""
    assert isinstance(outcome, RunError) and outcome.stage == "model", outcome
    assert isinstance(outcome.cause, ModelError)
    return outcome.cause


@pytest.mark.parametrize("kind", KINDS)
def test_the_adapter_makes_one_attempt_and_classifies_the_failure(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(status=429, retry_after="2"), Scenario(status=400))
    error = complete(make_model(kind, server))
    assert isinstance(error, ModelError) and error.retryable and error.retry_after == 2.0
    assert len(server.requests) == 1
    error = complete(make_model(kind, server))
    assert isinstance(error, ModelError) and not error.retryable and len(server.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streaming", [True, False])
def test_429_with_retry_after_is_honoured_then_succeeds(server: ProviderServer, kind: str, streaming: bool) -> None:
    server.enqueue(Scenario(status=429, headers={"retry-after-ms": "120"}))
    result = through_agent(make_model(kind, server), streaming=streaming)
    assert result.output == "echo: hello there" and result.requests == 2
    first, second = server.requests
    assert second.at - first.at >= 0.12


def test_retry_after_in_seconds(server: ProviderServer) -> None:
    server.enqueue(Scenario(status=429, retry_after="1"))
    assert through_agent(make_model("openai", server), streaming=False).output == "echo: hello there"
    assert server.requests[1].at - server.requests[0].at >= 1.0


@pytest.mark.parametrize("kind", KINDS)
def test_retry_after_longer_than_we_wait_fails_at_once(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(status=429, retry_after="3600", message="slow down"))
    error = failure(through_agent(make_model(kind, server)))
    assert error.status == 429 and error.retry_after == 3600 and error.attempts == 1
    assert "slow down" in str(error) and "3600 s" in error.hint
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors_are_retried(server: ProviderServer, kind: str, status: int) -> None:
    server.enqueue(Scenario(status=status), Scenario(status=status))
    assert through_agent(make_model(kind, server), streaming=False).output == "echo: hello there"
    assert len(server.requests) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_retries_give_up_after_max_retries(server: ProviderServer, kind: str) -> None:
    server.enqueue(*[Scenario(status=500, message="upstream exploded")] * 10)
    outcome = through_agent(make_model(kind, server, settings=fast(max_retries=2)))
    error = failure(outcome)
    assert error.status == 500 and error.retryable and error.attempts == 3 and "server error" in error.hint
    assert str(error).startswith("runner: model failed after 3 attempts: HTTP 500") and "upstream exploded" in str(error)
    assert outcome.partial is None and len(server.requests) == 3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("status", "hint"), [(401, "check the API key"), (404, "check the model name"), (400, "rejected")])
def test_client_errors_are_not_retried(server: ProviderServer, kind: str, status: int, hint: str) -> None:
    server.enqueue(Scenario(status=status, message=f"simulated {status}"))
    error = failure(through_agent(make_model(kind, server)))
    assert error.status == status and not error.retryable and error.attempts == 1
    assert f"HTTP {status}" in str(error) and f"simulated {status}" in str(error) and hint in error.hint
    assert "\n" not in str(error) and len(server.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_wrong_key_names_where_the_key_comes_from_and_never_shows_it(server: ProviderServer, kind: str) -> None:
    secret = "sk-live-0123456789abcdef"
    server.enqueue(Scenario(status=401, message=f"Incorrect API key provided: {secret}."))
    error = complete(make_model(kind, server, key=secret))
    assert secret not in str(error) and secret not in error.hint and "[key]" in str(error)
    assert ("OPENAI_API_KEY" if kind == "openai" else "ANTHROPIC_API_KEY") in error.hint
    real = complete(make_model(kind, server, key="sk-wrong-key"))  # the server's own auth check
    assert real.status == 401 and "sk-wrong-key" not in str(real)


@pytest.mark.parametrize(
    ("kind", "message", "code"),
    [
        ("openai", "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.", "context_length_exceeded"),
        ("anthropic", "prompt is too long: 210000 tokens > 200000 maximum", None),
    ],
)
def test_context_length_errors_say_the_history_is_too_long(server: ProviderServer, kind: str, message: str, code: str | None) -> None:
    server.enqueue(Scenario(status=400, message=message, code=code))
    error = complete(make_model(kind, server))
    assert isinstance(error, ContextTooLong) and error.hint == HINT_CONTEXT and message in str(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streaming", [True, False])
def test_a_prompt_past_the_models_window_is_its_own_error(server: ProviderServer, kind: str, streaming: bool) -> None:
    """The server's too-long answer is each API's own body (OpenAI's ``context_length_exceeded``
    with ``param: messages``, Anthropic's "prompt is too long: N tokens > M maximum"); it is
    not retried (the same request would fail again), and any other 400 is no ``ContextTooLong``."""
    server.context_window = 5
    error = failure(through_agent(make_model(kind, server), streaming=streaming))
    assert isinstance(error, ContextTooLong) and error.status == 400 and not error.retryable
    assert error.hint == HINT_CONTEXT and len(server.requests) == 1
    said = "maximum context length is 5 tokens" if kind == "openai" else "prompt is too long: "
    assert said in str(error) and "\n" not in str(error)
    server.context_window = 0
    server.enqueue(Scenario(status=400, message="max_tokens: 10000 > 4096"))
    other = failure(through_agent(make_model(kind, server), streaming=streaming))
    assert type(other) is ModelError and other.hint != HINT_CONTEXT


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streaming", [True, False])
def test_connection_dropped_before_the_reply_is_retried(server: ProviderServer, kind: str, streaming: bool) -> None:
    server.enqueue(Scenario(drop="before_reply"), Scenario(drop="before_reply"))
    result = through_agent(make_model(kind, server), streaming=streaming)
    assert result.output == "echo: hello there" and len(server.requests) == 3


def test_nothing_listening_is_retried_then_explained(refused_port: int) -> None:
    port = refused_port
    from golem_cli.providers.openai.model import OpenAIModel

    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", settings=fast(max_retries=2))
    error = failure(through_agent(model))
    assert error.retryable and error.attempts == 3 and "base URL" in error.hint
    assert f"127.0.0.1:{port}" in error.message and error.message.startswith("cannot reach")


@pytest.mark.parametrize("kind", KINDS)
def test_drop_after_the_first_byte_is_not_retried(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(drop="after_first_byte"), Scenario(drop="after_first_byte"))
    out = stream(make_model(kind, server))
    assert out.error is not None and "cut off" in str(out.error) and "kept" not in str(out.error)  # the command says what it saved
    assert not out.error.retryable
    outcome = through_agent(make_model(kind, server, settings=fast(max_retries=5)))
    assert failure(outcome).attempts == 1 and len(server.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_that_delivered_text_is_never_retried(server: ProviderServer, kind: str) -> None:
    """Even a retryable error (an overloaded provider) after the first text: retrying would
    show the user the same words twice. What arrived is kept instead."""
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT), cut_after_frames=6))
    outcome = through_agent(make_model(kind, server, settings=fast(max_retries=5)))
    assert isinstance(outcome, RunError) and outcome.partial is not None
    assert outcome.partial.new_messages[-1].role == "assistant" and len(server.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_non_streaming_reply_cut_mid_body(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT), drop="after_first_byte"))
    error = failure(through_agent(make_model(kind, server), streaming=False))
    assert "cut off" in str(error) and "kept" not in str(error) and not error.retryable
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_stream_cut_inside_tool_arguments_keeps_the_half_call(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text="Rolling.", tool_calls=[CALL]), cut_in_tool_args=True))
    out = stream(make_model(kind, server))
    assert out.error is not None and "cut off" in str(out.error) and "kept" not in str(out.error)  # the command says what it saved
    [call] = out.accumulator.tool_calls()
    assert (call.id, call.name) == (CALL.id, CALL.name)
    assert 0 < len(call.args) < len(CALL.args) and CALL.args.startswith(call.args)
    assert out.accumulator.text == "Rolling." and out.accumulator.done is None


@pytest.mark.parametrize("kind", KINDS)
def test_stream_cut_mid_text_keeps_the_prefix(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT), cut_after_frames=6))
    out = stream(make_model(kind, server))
    assert out.error is not None
    assert 0 < len(out.accumulator.text) < len(LONG_TEXT) and LONG_TEXT.startswith(out.accumulator.text)


@pytest.mark.parametrize("kind", KINDS)
def test_malformed_sse_lines_are_ignored(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT, tool_calls=[CALL]), malformed="lines"))
    response = stream(make_model(kind, server)).done.response
    assert response.message.content == LONG_TEXT and response.message.tool_calls[0].args == CALL.args


@pytest.mark.parametrize("kind", KINDS)
def test_data_that_is_not_json_ends_the_reply_and_keeps_what_arrived(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT), malformed="json"))
    out = stream(make_model(kind, server))
    assert out.error is not None and "not JSON" in str(out.error) and "kept" not in str(out.error)  # the command says what it saved
    assert LONG_TEXT.startswith(out.accumulator.text)


@pytest.mark.parametrize("kind", KINDS)
def test_slow_stream_within_the_timeout_completes(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text="slow but fine"), delay=0.03))
    assert stream(make_model(kind, server, settings=replace(FAST, timeout=2.0))).done.response.message.content == "slow but fine"


@pytest.mark.parametrize("kind", KINDS)
def test_stalled_stream_hits_the_read_timeout_and_keeps_what_arrived(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(reply=Reply(text=LONG_TEXT), delay=0.6))
    out = stream(make_model(kind, server, settings=replace(FAST, timeout=0.25)))
    assert out.error is not None and "no data for 0.25 s" in str(out.error) and "raise timeout" in out.error.hint
    assert len(server.requests) == 1 and out.accumulator.done is None


def test_an_error_inside_a_200_reply(server: ProviderServer) -> None:
    server.enqueue(Scenario(body=b'{"error": {"message": "Upstream timed out", "code": 502}, "user_id": "u"}'))
    error = complete(make_model("openai", server))
    assert isinstance(error, ModelError) and error.status == 502 and error.retryable
    assert "reported an error: Upstream timed out" in str(error) and "mid-reply" not in str(error)


@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_that_is_not_the_api_says_to_check_the_base_url(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(body=b"<html>login page</html>"))
    error = complete(make_model(kind, server))
    assert isinstance(error, ModelError) and "unreadable reply" in str(error) and "base URL" in error.hint
