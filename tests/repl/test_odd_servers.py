"""`golem ask` against servers that misbehave the way real ones do, through golem's entry point
(``golem_main``) and the loopback server: rate limits with Retry-After, a 500 before the answer, a stream that
drops in the middle of a tool call's arguments, Anthropic's ``overloaded_error`` event mid-stream;
and the credential and configuration cases of issue 8 (items 4 and 7) as a user meets them.

Each must end in one clear line on stderr, the right exit code, and every turn stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from golem_cli.core.messages import INTERRUPTED_REPLY_MARK as INTERRUPTED
from golem_cli.store import Store

from tests.inprocess import Result
from tests.providerserver import ProviderServer, Reply, Scenario, ToolCallSpec

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}


@pytest.fixture
def ask(golem_main: Any) -> Callable[..., Result]:
    """``ask(*args, env=...)``: ``golem ask`` through golem's entry point in this process
    (``golem_main``): each test here is about what the command prints, stores and sends."""

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return golem_main("ask", *args, env=env)

    return run


def one_line(done: Result) -> str:
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("golem: ") and "Traceback" not in done.err, done.err
    return lines[0]


def stored(home: Path) -> list:
    (row,) = Store(home).list()
    return Store(home).load(row.id)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_429_with_retry_after_is_waited_out_then_answered(ask: Callable[..., Result], home: Path, server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(status=429, retry_after="1"))
    done = ask("-m", MODELS[kind], "hello")
    assert (done.code, done.out, done.err) == (0, "echo: hello\n", "")
    first, second = server.requests
    assert second.at - first.at >= 0.9  # the wait the server asked for, not the backoff's milliseconds
    assert [m.content for m in stored(home)] == ["hello", "echo: hello"]


def test_a_rate_limit_that_lasts_is_one_line_and_the_prompt_is_kept(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    server.enqueue(*[Scenario(status=429, retry_after="1")] * 3)  # max_retries = 2 in the test config
    done = ask("hello")
    line = one_line(done)
    assert done.code == 1 and done.out == ""
    assert "HTTP 429" in line and "after 3 attempts" in line and "rate limiting" in line and "asked for 1 s" in line
    server.enqueue(Scenario(status=429, retry_after="600"))  # longer than golem waits: at once, not after ten minutes
    again = ask("-c", "still there?")
    assert again.code == 1 and "asked for 600 s" in one_line(again) and len(server.requests) == 4
    assert [m.content for m in stored(home)] == ["hello", "still there?"]
    assert ask("-c", "now?").out == "echo: now?\n"  # and the conversation goes on
    assert [m.content for m in stored(home)] == ["hello", "still there?", "now?", "echo: now?"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_server_error_then_success_is_one_answer(ask: Callable[..., Result], home: Path, server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(status=500), Scenario(status=503))
    done = ask("-m", MODELS[kind], "hello")
    assert (done.code, done.out, done.err) == (0, "echo: hello\n", "")
    assert len(server.requests) == 3 and [m.content for m in stored(home)] == ["hello", "echo: hello"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_stream_dropped_inside_tool_arguments_keeps_the_text_and_runs_nothing(ask: Callable[..., Result], home: Path, server: ProviderServer, kind: str) -> None:
    root = home / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())
    call_id = "call_1" if kind == "openai" else "toolu_1"
    call = ToolCallSpec(call_id, "read_file", '{"path": "notes.txt", "why": "a long enough argument to be cut"}')
    server.enqueue(Scenario(reply=Reply(text="Let me look.", tool_calls=[call]), cut_in_tool_args=True))
    done = ask("-m", MODELS[kind], "-T", "fs", "read the notes")
    line = one_line(done)
    assert done.code == 1 and done.out == "Let me look.\n"
    assert "closed the connection before the reply was complete" in line and "the partial reply is saved in conversation" in line
    assert len(server.requests) == 1  # text had arrived: never retried
    history = stored(home)
    assert [m.role for m in history] == ["user", "assistant"]  # the half call was not run
    assert history[1].content == "Let me look.\n\n" + INTERRUPTED and history[1].tool_calls[0].id == call_id
    assert history[1].tool_calls[0].args.startswith('{"path": "notes.txt"')
    # The next turn sends the cut call with a result saying it was interrupted, and both APIs take it.
    again = ask("-c", "-m", MODELS[kind], "-T", "fs", "and now?")
    assert again.code == 0 and again.out == "echo: and now?\n", again.err
    roles = [m.role for m in stored(home)]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]


ANTHROPIC_START = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                   "content": [], "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}  # fmt: skip
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
TEXT = [{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "The answer begins"}}]  # fmt: skip


def events(*items: dict) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in items)


def test_anthropic_overloaded_error_mid_stream(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    server.enqueue(Scenario(sse=events(ANTHROPIC_START, *TEXT, OVERLOADED)))
    done = ask("-m", "claude:claude-test", "tell me")
    line = one_line(done)
    assert done.code == 1 and done.out == "The answer begins\n"
    assert "reported an error mid-reply: Overloaded; the partial reply is saved in conversation" in line
    assert "the provider is overloaded: try again" in line and "nothing" not in line
    assert len(server.requests) == 1
    assert [m.content for m in stored(home)] == ["tell me", "The answer begins\n\n" + INTERRUPTED]
    # Before any content the same event is worth another attempt, which answers.
    server.enqueue(Scenario(sse=events(ANTHROPIC_START, OVERLOADED)))
    again = ask("-c", "-m", "claude:claude-test", "try again")
    assert (again.code, again.err) == (0, "") and again.out.startswith("echo: ")
    assert len(server.requests) == 3 and len(stored(home)) == 4


OPENAI_ERROR = b'data: {"error": {"message": "Upstream overloaded", "type": "server_error", "code": 503}}\n\n'
FIRST_EVENT_ERRORS = {  # the error is the stream's first event, on every attempt (3 for local, 4 for claude)
    "openai": [Scenario(sse=OPENAI_ERROR)] * 3,
    "anthropic": [Scenario(sse=events(ANTHROPIC_START, OVERLOADED))] * 4,
}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_error_event_before_any_content_says_nothing_arrived(ask: Callable[..., Result], home: Path, server: ProviderServer, kind: str) -> None:
    server.enqueue(*FIRST_EVENT_ERRORS[kind])
    done = ask("-m", MODELS[kind], "tell me")
    line = one_line(done)
    assert done.code == 1 and done.out == ""
    assert "reported an error: " in line and "attempts); nothing of the reply arrived; the provider" in line
    assert "mid-reply" not in line and "kept" not in line and "partial" not in line
    assert [m.content for m in stored(home)] == ["tell me"]
    server.enqueue(*FIRST_EVENT_ERRORS[kind])
    as_json = ask("-c", "-m", MODELS[kind], "--json", "again")
    result = json.loads(as_json.out)
    assert as_json.code == 1 and (result["reply"], result["interrupted"]) == ("", True)
    assert "nothing of the reply arrived" in one_line(as_json)


def test_a_whole_reply_cut_mid_body_says_nothing_is_saved(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    """--no-stream: part of the body came, but a whole reply cut short keeps nothing of it."""
    server.enqueue(Scenario(reply=Reply(text="a long enough reply to be cut in the middle"), drop="after_first_byte"))
    line = one_line(done := ask("--no-stream", "tell me"))
    assert done.code == 1 and "cut off" in line and "nothing of the reply is saved" in line and "arrived" not in line
    assert [m.content for m in stored(home)] == ["tell me"]


CUT = {  # how a reply is cut short: (provider, scenarios, whether part of the reply arrived first)
    "dropped mid-reply": ("openai", [Scenario(reply=Reply(text="a reply that will be cut off"), cut_after_frames=3)], True),
    "error event mid-reply": ("anthropic", [Scenario(sse=events(ANTHROPIC_START, *TEXT, OVERLOADED))], True),
    "dropped after the first byte": ("openai", [Scenario(drop="after_first_byte")], False),
    "dropped before the reply": ("openai", [Scenario(drop="before_reply")] * 3, False),
    "error event first": ("openai", FIRST_EVENT_ERRORS["openai"], False),
}


@pytest.mark.parametrize("case", list(CUT))
def test_ask_json_marks_a_reply_the_model_did_not_finish_as_interrupted(ask: Callable[..., Result], home: Path, server: ProviderServer, case: str) -> None:
    """``interrupted`` is true whenever the model did not finish its reply (docs/json.md), so a
    script tells a cut reply from a complete one without reading ``error``."""
    kind, scenarios, partial = CUT[case]
    server.enqueue(*scenarios)
    done = ask("-m", MODELS[kind], "--json", "tell me")
    result = json.loads(done.out)
    assert done.code == 1 and result["interrupted"] is True and result["error"]
    assert result["ending"] == "error"  # one field says how it ended
    # what arrived, without the mark the stored reply ends in (``interrupted`` says it)
    assert (result["reply"] and INTERRUPTED not in result["reply"]) if partial else result["reply"] == ""
    assert ("the partial reply is saved" if partial else "nothing of the reply arrived") in one_line(done)
    kept = [f"{result['reply']}\n\n{INTERRUPTED}"] if partial else []
    assert [m.content for m in stored(home)] == ["tell me", *kept]
    finished = json.loads(ask("-c", "-m", MODELS[kind], "--json", "and now?").out)
    assert (finished["interrupted"], finished["error"], finished["reply"]) == (False, None, "echo: and now?")
    assert finished["ending"] == "complete"


# --- issue 8, items 4 and 7, as a user meets them ------------------------------------------


def test_a_malformed_openai_base_url_is_a_configuration_error(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    done = ask("-m", "openai:gpt-4o", "hi", env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://[::1"})
    line = one_line(done)
    assert done.code == 1 and "OPENAI_BASE_URL" in line and "not a valid URL" in line and "internal error" not in line


def test_a_base_url_with_userinfo_is_refused_and_nothing_is_sent(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    url = server.openai_base_url.replace("http://", "http://me:sk-secret123456@")
    done = ask("-m", "openai:gpt-4o", "hi", env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url})
    line = one_line(done)
    assert done.code == 1 and "user name or password" in line and "sk-secret" not in done.err
    assert server.requests == []  # httpx would have sent the userinfo as Basic auth


def test_models_shows_no_userinfo_and_no_query(golem_main: Any) -> None:
    for url in ("http://u:sk-secret123456@host.example/v1?key=sk-other987654", "http://host.example/v1?key=sk-other987654"):
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url}
        for args in ([], ["--json"]):
            done = golem_main("models", *args, env=env)
            assert done.code == 0 and "sk-secret" not in done.out + done.err
            assert "sk-other" not in done.out + done.err and "key=" not in done.out


def test_a_key_the_provider_quotes_is_redacted_from_the_error_line(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    server.api_key = "sk-the-right-one"
    done = ask("hi")  # the config's sk-test is wrong: the server says "Incorrect API key provided: sk-***test"
    line = one_line(done)
    assert done.code == 1 and "HTTP 401" in line and "[key]" in line and "***" not in line
    assert [m.content for m in stored(home)] == ["hi"]


def with_local(home: Path, lines: str) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text().replace("[providers.local]\n", "[providers.local]\n" + lines))


def test_keep_alive_alone_ends_after_max_idle_from_the_config(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    with_local(home, "max_idle = 0.5\n")
    server.enqueue(Scenario(hostile="keepalive", delay=0.05))
    done = ask("are you there?")
    line = one_line(done)
    assert done.code == 1 and "no content for 0.5 s, only keep-alive" in line
    assert [m.content for m in stored(home)][0] == "are you there?"


@pytest.mark.parametrize("streaming", [True, False])
def test_a_gzip_bomb_stops_at_max_reply_bytes(ask: Callable[..., Result], home: Path, server: ProviderServer, streaming: bool) -> None:
    with_local(home, "max_reply_bytes = 2000000\n")
    server.enqueue(Scenario(hostile="bomb", size=300 * 2**20))
    done = ask(*([] if streaming else ["--no-stream"]), "inflate")
    line = one_line(done)
    assert done.code == 1 and "max_reply_bytes (2,000,000 bytes)" in line
    assert [m.content for m in stored(home)][0] == "inflate"


def test_an_enormous_error_body_is_one_short_line(ask: Callable[..., Result], home: Path, server: ProviderServer) -> None:
    server.enqueue(Scenario(hostile="error-flood", size=200 * 2**20))
    done = ask("hi")
    line = one_line(done)
    assert done.code == 1 and "HTTP 400" in line and len(line) < 600
    assert server.hostile_done.wait(10)  # the server noticed golem hang up
    assert 0 < server.hostile_sent < 20 * 2**20  # golem read the first 64 KB and hung up, not 200 MB
