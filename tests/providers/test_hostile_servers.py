"""A server cannot exhaust golem's memory or time (issue 8, item 4), and credentials never
appear in what golem prints (item 7): each case against a real misbehaving server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.providers._endpoint import Endpoint
from golem_cli.providers._sse import sse_events
from golem_cli.providers.resolve import provider_statuses, resolve
from msgspec.structs import replace

from tests.providers.helpers import FAST, complete, make_model, provider_tables, stream
from tests.providerserver import ProviderServer, Scenario

KINDS = ["openai", "anthropic"]
SMALL = replace(FAST, max_reply_bytes=2 * 2**20)


@pytest.mark.parametrize("kind", KINDS)
def test_an_endless_stream_is_cut_at_max_reply_bytes_and_kept(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="flood"))
    out = stream(make_model(kind, server, settings=SMALL))
    assert isinstance(out.error, ModelError) and "passed max_reply_bytes (2 MB)" in str(out.error)
    assert "kept" not in str(out.error) and "max_reply_bytes in [providers." in out.error.hint
    assert 2**19 < len(out.accumulator.text) < 2 * 2**20 and out.accumulator.text.startswith("All work")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("streaming", [True, False])
def test_a_gzip_bomb_stops_at_the_bound(server: ProviderServer, kind: str, streaming: bool) -> None:
    server.enqueue(Scenario(hostile="bomb", size=300 * 2**20))
    model = make_model(kind, server, settings=SMALL)
    error = stream(model).error if streaming else complete(model)
    assert isinstance(error, ModelError) and "max_reply_bytes" in str(error)
    assert server.hostile_sent < 2 * 2**20  # 300 MB inflated from a body of well under 2 MB


@pytest.mark.parametrize("kind", KINDS)
def test_an_error_body_is_read_only_so_far(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="error-flood", size=200 * 2**20))
    error = complete(make_model(kind, server))
    assert isinstance(error, ModelError) and error.status == 400 and len(str(error)) < 600
    assert server.hostile_done.wait(10)  # the server noticed the client hang up
    assert 0 < server.hostile_sent < 20 * 2**20  # the client hung up long before 200 MB


@pytest.mark.parametrize("kind", KINDS)
def test_one_enormous_line_is_refused_past_the_bound(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="long-line", size=3 * 2**20))
    out = stream(make_model(kind, server, settings=SMALL))
    assert isinstance(out.error, ModelError) and "max_reply_bytes" in str(out.error)


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_line_within_the_bound_is_read_whole(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="long-line", size=1_500_000))
    assert stream(make_model(kind, server, settings=SMALL)).done.response.message.content == "y" * 1_500_000


@pytest.mark.parametrize("kind", KINDS)
def test_keep_alive_alone_ends_after_max_idle(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="keepalive", delay=0.05))
    started = time.monotonic()
    out = stream(make_model(kind, server, settings=replace(FAST, max_idle=0.6)))
    assert isinstance(out.error, ModelError) and "no content for 0.6 s, only keep-alive" in str(out.error)
    assert "max_idle" in out.error.hint and time.monotonic() - started < 30  # ended, not forever


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_to_the_same_host_is_followed(server: ProviderServer, status: int) -> None:
    server.enqueue(Scenario(hostile="redirect", status=status, location=server.url + "/proxy/v1/chat/completions"))
    assert complete(make_model("openai", server)).message.content == "echo: hello there"
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/proxy/v1/chat/completions"]
    assert server.requests[1].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize("kind", KINDS)
def test_a_redirect_elsewhere_is_reported_not_taken_for_an_empty_stream(server: ProviderServer, kind: str) -> None:
    server.enqueue(Scenario(hostile="redirect", status=301, location="https://login.example.com/sso?token=abc"))
    out = stream(make_model(kind, server))
    assert isinstance(out.error, ModelError) and "redirected to https://login.example.com/sso" in str(out.error)
    assert "token" not in str(out.error) and "base_url" in out.error.hint and len(server.requests) == 1


def test_a_redirect_loop_stops(server: ProviderServer) -> None:
    loop = Scenario(hostile="redirect", status=307, location=server.url + "/v1/chat/completions")
    server.enqueue(*[loop] * 10)
    error = complete(make_model("openai", server))
    assert isinstance(error, ModelError) and "redirected to" in str(error) and len(server.requests) == 4


def test_sse_parsing_scans_each_byte_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 16 MB line in 4 KB pieces: the parser looks for line ends in each new piece only, once
    (it used to rescan the whole buffer on every piece: 44 s for a 40 MB line)."""
    import golem_cli.providers._sse as sse

    scanned = [0]
    real = sse._line_ends

    def counting(data: bytes):  # type: ignore[no-untyped-def]
        scanned[0] += len(data)
        return real(data)

    monkeypatch.setattr(sse, "_line_ends", counting)  # the parser's only way to find line ends

    async def pieces() -> AsyncIterator[bytes]:
        yield b"data: "
        for _ in range(4096):
            yield b"z" * 4096
        yield b"\n\n"

    async def parse() -> list[tuple[str, str]]:
        return [e async for e in sse_events(pieces())]

    [(_, data)] = asyncio.run(parse())
    assert len(data) == 4096 * 4096 and scanned[0] == 4096 * 4096 + 8


@pytest.mark.parametrize(
    ("value", "says"),
    [("http://[::1", "not a valid URL"), ("http://host:port/v1", "not a valid URL"), ("ftp://x", "not an http(s) URL")],
)
def test_a_malformed_base_url_is_a_configuration_error(value: str, says: str) -> None:
    with pytest.raises(ModelError) as caught:
        resolve("openai:gpt-4o", env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": value})
    assert says in str(caught.value) and "OPENAI_BASE_URL" in str(caught.value) and caught.value.hint
    with pytest.raises(ModelError):
        resolve("ollama:x", env={"OLLAMA_HOST": "host:notaport"})


def test_url_userinfo_is_never_sent_and_urls_are_shown_without_credentials() -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://u:sk-secret123@host/v1?key=sk-other456"}
    with pytest.raises(ModelError) as caught:
        resolve("openai:gpt-4o", env=env)
    assert "user name or password" in str(caught.value) and "sk-secret" not in str(caught.value)
    statuses = {s.name: s for s in provider_statuses({}, env)}
    assert "sk-" not in repr(statuses["openai"].to_json())
    shown = {s.name: s for s in provider_statuses({}, {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://host/v1?key=sk-x"})}
    assert shown["openai"].base_url == "http://host/v1"


@pytest.mark.parametrize(
    "quoted",
    ["Incorrect API key provided: sk-***3456.", "invalid x-api-key sk-ant-api03-AbC_dEf-123", "key gsk_0123456789abcdef",
     "API key not valid: AIzaSyA-1234567890abcdefghijk", "header Authorization: Bearer eyJhbGciOi.x-y_z"],
)  # fmt: skip
def test_key_shaped_strings_are_redacted_from_provider_messages(server: ProviderServer, quoted: str) -> None:
    server.enqueue(Scenario(status=401, message=quoted))
    error = complete(make_model("openai", server))
    assert "[key]" in str(error) and not any(w in str(error) for w in ("***3456", "api03", "gsk_0", "AIzaSy", "eyJhb"))
    assert Endpoint("p", "m", "https://h/v1").scrub("scikit-learn and the risk-taking desk") == "scikit-learn and the risk-taking desk"


@pytest.mark.parametrize("kind", KINDS)
def test_a_base_url_with_a_query_keeps_it_after_the_path_and_never_shows_it(server: ProviderServer, kind: str) -> None:
    """Gateways that take their key in the query (``https://gw/v1?key=...``): the path goes before
    the query, not into it (it once made ``/v1?key=.../chat/completions``, a 404)."""
    base = (server.openai_base_url if kind == "openai" else server.url) + "?key=sk-query123456"
    model = resolve(f"gw:m-{kind}", providers=provider_tables({"gw": {"type": kind, "base_url": base, "api_key": "sk-test"}}), env={})
    assert complete(model).message.content == "echo: hello there"
    path = "/v1/chat/completions" if kind == "openai" else "/v1/messages"
    assert [r.path for r in server.requests] == [path + "?key=sk-query123456"]
    server.enqueue(Scenario(status=404))
    error = complete(resolve(f"gw:m-{kind}", providers=provider_tables({"gw": {"type": kind, "base_url": base, "api_key": "sk-test"}}), env={}))
    assert isinstance(error, ModelError) and f"at {server.url}{path}:" in str(error) and "sk-query" not in str(error)


def test_azure_api_version_joins_a_query_the_endpoint_has(server: ProviderServer) -> None:
    model = resolve("azure:dep", env={"AZURE_OPENAI_API_KEY": "sk-test", "AZURE_OPENAI_ENDPOINT": server.url + "/?tenant=a"})
    assert complete(model).message.content == "echo: hello there"
    assert server.requests[0].path == "/openai/deployments/dep/chat/completions?tenant=a&api-version=2024-10-21"
