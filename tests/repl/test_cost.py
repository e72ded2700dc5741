"""The chat's footer with cost and cache share, ``/context``, and ``--max-cost`` in the REPL: the
real ``golem`` on a terminal (pexpect) against the loopback server."""

from __future__ import annotations

import re

import pytest

from tests.providerserver import Reply, Scenario


@pytest.fixture
def home(home):
    with (home / "config.toml").open("a") as f:
        f.write('\n[models."local:echo"]\nprice = { input = 2.0, output = 8.0, cache_read = 0.5 }\ncontext_window = 64000\n')
    return home


def test_the_footer_fits_80_columns_with_cost_and_cache_share(spawn, server):
    server.enqueue(Scenario(reply=Reply(text="first", input_tokens=1000, output_tokens=50)),
                   Scenario(reply=Reply(text="second", input_tokens=2000, output_tokens=100, cache_read_tokens=1600)))  # fmt: skip
    chat = spawn("chat", env={"COLUMNS": "80"})
    chat.child.setwinsize(40, 80)
    chat.prompt()
    first = chat.say("one")
    # 1000 in at $2 and 50 out at $8 per million: $0.0024
    footer = re.search(r"\S+ · 2 stored, 1 sent[^\n]*", first).group(0)
    assert "$0.0024" in footer and "total" not in footer and len(footer.rstrip()) <= 80
    second = chat.say("two")
    # 400 at $2, 1600 cached at $0.50, 100 out at $8: $0.0024; the conversation $0.0048
    footer = re.search(r"\S+ · 4 stored, 3 sent[^\n]*", second).group(0)
    assert "$0.0024 (total $0.0048) · cache 80%" in footer and len(footer.rstrip()) <= 80
    assert "run " not in footer  # what does not fit 80 columns goes, the run ID first
    chat.leave()


def test_an_unknown_price_shows_tokens_and_says_once_how_to_set_it(spawn, server):
    server.enqueue(Scenario(reply=Reply(text="a", input_tokens=10, output_tokens=2)),
                   Scenario(reply=Reply(text="b", input_tokens=20, output_tokens=2)))  # fmt: skip
    chat = spawn("chat", "-m", "claude:claude-x")
    chat.prompt()
    first = chat.say("one")
    assert "10 in / 2 out tokens" in first and "$" not in first.split("you>")[0].split("one")[-1]
    assert 'The price of claude:claude-x is unknown: set it in config.toml: [models."claude:claude-x"] price' in first
    second = chat.say("two")
    assert "20 in / 2 out tokens" in second and "is unknown" not in second
    chat.leave()


def test_context_in_the_chat_shows_what_the_next_request_carries(spawn, server):
    server.enqueue(Scenario(reply=Reply(text="hello", input_tokens=321, output_tokens=5)))
    chat = spawn("chat", "-s", "Answer briefly.")
    chat.prompt()
    chat.say("hi")
    out = chat.command("/context", r"provider counted[^\n]*")
    assert "The next request to local:echo carries about" in out
    assert "history sent (2 messages)" in out and "of the context window of 64,000" in out
    assert "the provider counted 321 input tokens in the last run's last request" in out
    chat.leave()


def test_a_budget_passed_while_running_finishes_the_turn_and_refuses_the_next(spawn, server):
    server.enqueue(Scenario(reply=Reply(text="expensive", input_tokens=100, output_tokens=2000)))
    chat = spawn("chat", "--max-cost", "0.01")
    chat.prompt()
    out = chat.say("one")  # 2000 out at $8 per million: $0.0162
    assert "expensive" in out and "Budget: $0.0162 spent, past the budget of $0.01; the next turn is refused." in out
    chat.child.sendline("two")
    refused = chat.expect(r"is spent[^\n]*") + chat.prompt()
    assert "error: the budget of $0.01 is spent ($0.0162 so far)" in refused
    assert len(server.requests) == 1
    chat.leave()


def test_cost_in_the_chat_shows_this_conversation_by_model(spawn, server):
    server.enqueue(Scenario(reply=Reply(text="a", input_tokens=1000, output_tokens=100, cache_read_tokens=200)),
                   Scenario(reply=Reply(text="b", input_tokens=3000, output_tokens=300)))  # fmt: skip
    chat = spawn("chat")
    chat.prompt()
    chat.say("one")
    chat.command("/model claude:claude-x", r"claude:claude-x[^\n]*")
    chat.say("two")
    out = chat.command("/cost", r"This chat spent[^\n]*")
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("local:", "claude:", "total"))}
    # local:echo: 800 at $2, 200 cached at $0.50, 100 out at $8 = $0.0025; claude:claude-x has no price
    assert rows["local:echo"][1:] == ["1", "1", "1,000", "200", "100", "$0.0025"]
    assert rows["claude:claude-x"][1:] == ["1", "1", "3,000", "0", "300", "$0.00*"]
    assert rows["total"][1:] == ["2", "2", "4,000", "200", "400", "$0.0025*"]
    assert "no known price are not in the cost" in out and "This chat spent $0.0025." in out
    chat.leave()


def test_a_resumed_conversation_totals_its_earlier_runs_from_the_ledger(spawn, golem_main, server, home):
    import json

    server.enqueue(Scenario(reply=Reply(text="first", input_tokens=1000, output_tokens=50)))  # $0.0024
    done = golem_main("ask", "--json", "one")  # the earlier run, in the ledger
    assert done.code == 0, done.err
    cid = json.loads(done.out)["conversationId"]
    server.enqueue(Scenario(reply=Reply(text="second", input_tokens=1000, output_tokens=50)))
    chat = spawn("resume", cid)
    chat.prompt()
    out = chat.say("two")
    assert "$0.0024 (total $0.0048)" in out
    chat.leave()


def test_a_retry_is_a_run_of_kind_retry_and_its_fork_keeps_the_first(spawn, server, home):
    from golem_cli.store import Store
    from golem_cli.store.sidecars.ledger import runs_of

    from tests.repl.test_chat import banner_cid

    chat = spawn("chat")
    cid = banner_cid(chat.prompt())
    chat.say("one")
    out = chat.say("/retry")
    kept = re.search(r"kept in conversation ([0-9a-f-]+)", out).group(1)
    chat.leave()
    store = Store(home)
    runs = list(runs_of(store, cid).values())
    assert [r.kind for r in runs] == ["turn", "retry"] and all(r.ended for r in runs)
    (fork,) = [c for c in (i.id for i in store.list()) if c.endswith(kept)]  # the note names its handle
    assert [r.run_id for r in runs_of(store, fork).values()] == [runs[0].run_id]  # the reply it keeps
