"""``golem context ID``: what the next request carries, through the real command, against a
conversation made by the real ``golem ask`` on the loopback server; and the warning before a
request the estimate says will not fit the context window."""

from __future__ import annotations

import json

import pytest

from tests.providerserver import ProviderServer, Reply, Scenario


@pytest.fixture
def home(home, server: ProviderServer):
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.openai]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n\n'
        f'[providers.local]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n'
    )
    return home


def conversation(golem, turns: int, *args: str) -> str:
    first = golem("ask", "--json", "-m", "openai:gpt-4o-mini", "-s", "You answer in one word.", *args, "turn 0")
    assert first.code == 0, first.err
    for n in range(1, turns):
        assert golem("ask", "-c", *args, f"turn {n}").code == 0
    return json.loads(first.out)["conversationId"]


def test_context_counts_what_the_window_sends_and_what_it_leaves(golem_main, server):
    cid = conversation(golem_main, 12)
    out = json.loads(golem_main("context", cid[:8], "--json").out)
    assert (out["conversationId"], out["model"], out["contextWindow"]) == (cid, "openai:gpt-4o-mini", 128_000)
    assert out["history"]["messages"] == 20 and out["notSent"]["messages"] == 4  # 24 stored, the window of 20
    assert out["instructions"] > 0 and out["tools"] == []
    assert out["total"] == out["instructions"] + out["history"]["tokens"]
    assert out["share"] == pytest.approx(out["total"] / 128_000)
    assert out["lastRun"]["inputTokens"] == 11 and out["lastRun"]["runId"]  # the server's count, from the ledger
    narrow = json.loads(golem_main("context", cid, "--json", "--max-messages", "6").out)
    assert (narrow["history"]["messages"], narrow["notSent"]["messages"]) == (6, 18)
    text = golem_main("context", cid).out
    assert "history sent (20 messages)" in text and "of the context window of 128,000" in text
    assert "stored but not sent: 4 messages" in text and "/trim N" in text


def test_context_shows_the_tools_by_source(golem_main, server, home):
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."local:echo"]\ncontext_window = 9000\n')
    text = (home / "config.toml").read_text()
    (home / "config.toml").write_text('tools = ["fs"]\n' + text)
    server.enqueue(Scenario(reply=Reply(text="ok")))
    cid = json.loads(golem_main("ask", "--json", "-m", "local:echo", "hi").out)["conversationId"]
    out = json.loads(golem_main("context", cid, "--json").out)
    assert [(t["source"], t["tools"]) for t in out["tools"]] == [("builtin", 5)]
    assert out["tools"][0]["tokens"] > 100 and out["contextWindow"] == 9000
    assert "tools: builtin (5)" in golem_main("context", cid).out


def test_a_request_that_will_not_fit_gets_one_warning_line_and_is_sent(golem_main, server, home):
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."local:echo"]\ncontext_window = 100\n')
    server.enqueue(Scenario(reply=Reply(text="ok")))
    result = golem_main("ask", "-m", "local:echo", "word " * 400)
    assert result.code == 0 and result.out == "ok\n"
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "more than the 100 of local:echo's context window" in warnings[0]
    assert "/trim N" in warnings[0] and len(server.requests) == 1
    server.enqueue(Scenario(reply=Reply(text="ok")))
    assert "warning" not in golem_main("ask", "-m", "local:echo", "short").err


def test_context_counts_the_tools_and_window_kept_with_the_conversation(golem_main, server, home):
    """What ``golem resume`` would send next: the tools named with ``-T`` when it was made (the
    config names none) and a tool server's among them, and the window ``--max-messages`` set."""
    from tests.mcpservers import url_toml
    from tests.mcpservers.threaded import http_demo

    with http_demo() as url:
        with (home / "config.toml").open("a") as f:
            f.write(url_toml("demo", url))
        cid = conversation(golem_main, 6, "-T", "fs", "-T", "demo", "--max-messages", "4")
        turn = server.requests[-1].json
        done = golem_main("context", cid, "--json")
    assert done.code == 0, done.err
    out = json.loads(done.out)
    assert [t["source"] for t in out["tools"]] == ["builtin", "mcp:demo"]
    assert sum(t["tools"] for t in out["tools"]) == len(turn["tools"])  # the tools the last turn sent
    assert out["history"]["messages"] == 4 and out["notSent"]["messages"] == 8
    assert "Restored this chat's settings" in done.err
