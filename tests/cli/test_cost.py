"""What a turn costs and what a budget refuses, through the real ``golem ask`` against the
loopback server of both protocols (every body validated by the SDK types: tests/conftest.py)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import assert_one_line_error
from tests.providerserver import ProviderServer, Reply, Scenario


@pytest.fixture
def home(home, server: ProviderServer):
    """``openai`` and ``anthropic`` are the test server (so the built-in prices apply);
    ``local`` is an OpenAI-compatible server golem knows no price of."""
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.openai]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n\n'
        f'[providers.anthropic]\nbase_url = "{server.url}"\napi_key = "sk-test"\n\n'
        f'[providers.local]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n'
    )
    return home


def ask_json(golem, *args: str) -> dict:
    result = golem("ask", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_openai_cost_counts_the_cached_part_at_the_cached_price(golem_main, server):
    server.enqueue(Scenario(reply=Reply(text="hi", input_tokens=1000, output_tokens=100, cache_read_tokens=800)))
    out = ask_json(golem_main, "-m", "openai:gpt-4o-mini", "hello")
    assert out["usage"] == {"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 800, "cacheWriteTokens": 0,
                            "reasoningTokens": 0, "cacheWrite1hTokens": 0}  # fmt: skip
    assert out["cacheShare"] == 0.8
    # 200 uncached at 0.15, 800 cached at 0.075, 100 out at 0.60 (USD per million)
    assert out["cost"] == pytest.approx((200 * 0.15 + 800 * 0.075 + 100 * 0.60) / 1e6)
    assert out["spent"] == out["cost"]


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_cost_prices_reads_and_both_writes_apart(golem_main, server, stream):
    reply = Reply(text="hi", input_tokens=10_000, output_tokens=500, cache_read_tokens=6000, cache_write_tokens=3000,
                  cache_write_1h_tokens=1000)  # fmt: skip
    server.enqueue(Scenario(reply=reply))
    out = ask_json(golem_main, "-m", "anthropic:claude-sonnet-4-5-20250929", "hello", *([] if stream else ["--no-stream"]))
    assert server.requests[-1].path.endswith("/messages")
    assert (out["usage"]["inputTokens"], out["usage"]["cacheWrite1hTokens"], out["cacheShare"]) == (10_000, 1000, 0.6)
    # 1000 uncached at 3, 6000 read at 0.30, 2000 written for 5 minutes at 3.75, 1000 for an hour at 6, 500 out at 15
    assert out["cost"] == pytest.approx((1000 * 3 + 6000 * 0.3 + 2000 * 3.75 + 1000 * 6 + 500 * 15) / 1e6)


def test_a_price_in_config_adds_a_model_and_an_unknown_one_is_null(golem_main, server, home):
    server.enqueue(Scenario(reply=Reply(text="hi", input_tokens=100, output_tokens=10)))
    assert ask_json(golem_main, "-m", "local:echo", "hello")["cost"] is None
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."local:echo"]\nprice = { input = 1.0, output = 2.0 }\n')
    server.enqueue(Scenario(reply=Reply(text="hi", input_tokens=100, output_tokens=10)))
    assert ask_json(golem_main, "-m", "local:echo", "hello")["cost"] == pytest.approx((100 * 1 + 10 * 2) / 1e6)


def test_a_configured_price_overrides_the_built_in_one(golem_main, server, home):
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."openai:gpt-4o-mini"]\nprice = { input = 10.0, output = 20.0 }\n')
    server.enqueue(Scenario(reply=Reply(text="hi", input_tokens=1000, output_tokens=100, cache_read_tokens=800)))
    out = ask_json(golem_main, "-m", "openai:gpt-4o-mini", "hello")
    # the configured input and output prices; the cache price it leaves out is the built-in one
    assert out["cost"] == pytest.approx((200 * 10 + 800 * 0.075 + 100 * 20) / 1e6)


def test_a_bad_price_in_config_is_one_line_naming_the_key(golem_main, home):
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."local:echo"]\nprice = { input = -1.0, output = 2.0 }\n')
    result = golem_main("ask", "-m", "local:echo", "hello")
    assert_one_line_error(result)
    assert 'models."local:echo".price.input' in result.err or "price.input" in result.err


def test_a_turn_whose_input_alone_passes_the_budget_is_refused_before_sending(golem_main, server, home):
    big = "word " * 40_000  # about 40,000 tokens: $0.10 at gpt-4o's $2.50 per million
    result = golem_main("ask", "-m", "openai:gpt-4o", "--max-cost", "0.01", input=big)
    assert result.code != 0 and result.out == ""
    assert_one_line_error(result)
    assert "more than the $0.01" in result.err and "--max-cost" in result.err
    assert server.requests == []
    assert golem_main("list", "--json").out.strip() == "[]"  # nothing was created for the refused turn
    server.enqueue(Scenario(reply=Reply(text="ok", input_tokens=10, output_tokens=2)))
    assert golem_main("ask", "-m", "openai:gpt-4o", "--max-cost", "0.01", "a small question").code == 0
    assert len(server.requests) == 1


def test_max_cost_in_config_is_the_budget_too(golem_main, server, home):
    text = (home / "config.toml").read_text()
    (home / "config.toml").write_text("max_cost = 0.001\n" + text)
    result = golem_main("ask", "-m", "openai:gpt-4o", "word " * 4000)
    assert_one_line_error(result)
    assert "budget of $0.001" in result.err and server.requests == []


def test_a_budget_with_an_unknown_price_is_refused_saying_how_to_set_it(golem_main, server):
    result = golem_main("ask", "-m", "local:echo", "--max-cost", "5", "hello")
    assert result.code != 0
    assert_one_line_error(result)
    assert "price of local:echo is unknown" in result.err and '[models."local:echo"] price' in result.err
    assert server.requests == []


def test_a_turn_passing_the_budget_while_running_is_finished_and_said(golem_main, server):
    server.enqueue(Scenario(reply=Reply(text="a long answer", input_tokens=100, output_tokens=200_000)))
    result = golem_main("ask", "-m", "openai:gpt-4o-mini", "--max-cost", "0.01", "hello")
    assert result.code == 0 and result.out == "a long answer\n"
    assert "golem: budget: $0.12 spent, past the budget of $0.01" in result.err
