"""``golem usage`` through the real command: totals across conversations from the usage index,
each run counted once (a fork's ledger repeats its parent's), by model, day and conversation,
``--since``, ``--json``; the index follows new runs, deleted conversations and a rebuild."""

from __future__ import annotations

import json
import os

import pytest
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error
from tests.providerserver import ProviderServer, Reply, Scenario


@pytest.fixture
def home(home, server: ProviderServer):
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.openai]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n\n'
        f'[providers.anthropic]\nbase_url = "{server.url}"\napi_key = "sk-test"\n'
    )
    return home


def ask(golem, server, *args: str, tokens: tuple[int, int] = (1_000_000, 100_000)) -> dict:
    server.enqueue(Scenario(reply=Reply(text="ok", input_tokens=tokens[0], output_tokens=tokens[1])))
    result = golem("ask", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def usage(golem, *args: str) -> list[dict]:
    result = golem("usage", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_totals_by_model_count_each_run_once_across_forks(golem_main, server):
    a = ask(golem_main, server, "-m", "openai:gpt-4o-mini", "one")["conversationId"]  # $0.15 + $0.06
    ask(golem_main, server, "--cid", a, "two")
    b = ask(golem_main, server, "-m", "anthropic:claude-haiku-4-5", "three")["conversationId"]  # $1 + $0.50
    fork = golem_main("fork", a, "--no-chat").out.strip()  # copies both runs of a
    ask(golem_main, server, "--cid", fork, "four")
    rows = {r["model"]: r for r in usage(golem_main)}
    assert rows["openai:gpt-4o-mini"]["runs"] == 3  # two in a (and the fork's copies of them), one in the fork
    assert rows["openai:gpt-4o-mini"]["cost"] == pytest.approx(3 * 0.21)
    assert rows["openai:gpt-4o-mini"]["usage"]["inputTokens"] == 3_000_000
    assert rows["anthropic:claude-haiku-4-5"]["cost"] == pytest.approx(1.5)
    assert list(rows) == ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"]  # largest cost first
    by_conversation = {r["conversation"]: r["runs"] for r in usage(golem_main, "--by", "conversation")}
    assert by_conversation == {a: 2, b: 1, fork: 1}  # a copied run counts under the oldest conversation
    text = golem_main("usage").out
    assert "openai:gpt-4o-mini" in text and "total" in text and "$2.13" in text


def test_the_index_follows_new_runs_a_deleted_conversation_and_a_lost_index(golem_main, golem, server, home):
    a = ask(golem_main, server, "-m", "openai:gpt-4o-mini", "one")["conversationId"]
    assert usage(golem_main)[0]["runs"] == 1
    ask(golem_main, server, "--cid", a, "two")
    assert usage(golem_main)[0]["runs"] == 2  # a turn's records are seen on the next query
    b = ask(golem_main, server, "-m", "openai:gpt-4o-mini", "three")["conversationId"]
    assert usage(golem_main)[0]["runs"] == 3
    assert golem_main("delete", b, "--yes").code == 0
    assert usage(golem_main)[0]["runs"] == 2
    (home / "usage.sqlite").unlink()
    assert usage(golem_main)[0]["runs"] == 2  # rebuilt from the sidecars
    (home / "usage.sqlite").write_bytes(b"not a database")
    result = golem_main("usage", "--json")
    assert result.code == 0 and json.loads(result.out)[0]["runs"] == 2
    (home / "usage.sqlite").unlink()
    os.mkfifo(home / "usage.sqlite")  # would block SQLite's first read
    result = golem("usage", "--json", timeout=60)  # a process: a hang fails the test instead
    assert result.code == 0 and json.loads(result.out)[0]["runs"] == 2


def test_since_and_by_day(golem_main, server, home):
    cid = ask(golem_main, server, "-m", "openai:gpt-4o-mini", "one")["conversationId"]
    log = Store(home).messages_path(cid).with_name(f"{cid}.runs.jsonl")
    lines = log.read_bytes().splitlines()
    old = json.loads(lines[0]) | {"started": 1_700_000_000.0}  # 2023-11-14 UTC: the same run, started earlier
    log.write_bytes(b"\n".join([json.dumps(old).encode(), *lines[1:]]) + b"\n")
    assert [r["day"] for r in usage(golem_main, "--by", "day")] == ["2023-11-14"]
    assert usage(golem_main, "--since", "2023-11-14")[0]["runs"] == 1
    assert usage(golem_main, "--since", "2023-11-15") == []
    assert "No runs recorded since 2023-11-15." in golem_main("usage", "--since", "2023-11-15").out
    for bad in (["--since", "yesterday"], ["--by", "week"]):
        assert_one_line_error(golem_main("usage", *bad))


def test_an_unknown_price_is_counted_apart(golem_main, server, home):
    with (home / "config.toml").open("a") as f:
        f.write(f'\n[providers.local]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n')
    ask(golem_main, server, "-m", "local:echo", "one")
    (row,) = usage(golem_main)
    assert (row["model"], row["cost"], row["unpricedRuns"]) == ("local:echo", 0.0, 1)
    assert 'runs of models with no known price are not in the cost' in golem_main("usage").out


def test_a_run_that_failed_after_its_retries_counts_every_request_it_sent(golem_main, server, home):
    (home / "config.toml").write_text((home / "config.toml").read_text().replace('api_key = "sk-test"\n', 'api_key = "sk-test"\nmax_retries = 2\n', 1))
    server.enqueue(*[Scenario(status=503, retry_after="0")] * 3)
    failed = golem_main("ask", "-m", "openai:gpt-4o-mini", "one")
    assert failed.code != 0
    assert len(server.requests) == 3
    [row] = usage(golem_main)
    assert (row["runs"], row["requests"]) == (1, 3)
