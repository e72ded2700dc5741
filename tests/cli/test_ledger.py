"""The run ledger through the real ``golem`` against the loopback server of both protocols: one
record pair per run beside the history (never in it), each reply shown and exported under the
model that wrote it, forks carrying the ledger of what they copy, import starting none, delete
and restore moving it, a SIGKILL mid-turn leaving a log that reads, and a damaged ledger."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import Store
from golem_cli.store.sidecars.ledger import read_runs, runs_of

from tests.cli.conftest import GOLEM_CMD
from tests.providerserver import ProviderServer, Reply, Scenario


@pytest.fixture
def home(home, server: ProviderServer):
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.openai]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n\n'
        f'[providers.anthropic]\nbase_url = "{server.url}"\napi_key = "sk-test"\n'
    )
    return home


def ask(golem, *args: str) -> dict:
    result = golem("ask", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_each_run_is_recorded_beside_the_history_and_each_reply_shown_under_its_model(golem_main, server, home):
    server.enqueue(Scenario(reply=Reply(text="from openai", input_tokens=100, output_tokens=10, cache_read_tokens=40)))
    first = ask(golem_main, "-m", "openai:gpt-4o-mini", "one")
    cid = first["conversationId"]
    server.enqueue(Scenario(reply=Reply(text="from claude", input_tokens=200, output_tokens=20, cache_write_tokens=50)))
    second = ask(golem_main, "--cid", cid, "-m", "anthropic:claude-haiku-4-5", "two")
    store = Store(home)
    runs = runs_of(store, cid)
    assert list(runs) == [first["runId"], second["runId"]]
    a, b = runs.values()
    assert (a.kind, a.provider, a.model, a.requests, a.finish_reason, a.failed, a.stopped) == (
        "turn", "openai", "openai:gpt-4o-mini", 1, "stop", False, False)
    assert (a.usage.input_tokens, a.usage.cache_read_tokens, a.cost) == (100, 40, pytest.approx(first["cost"]))
    assert (b.model, b.usage.cache_write_tokens, b.cost) == ("anthropic:claude-haiku-4-5", 50, pytest.approx(second["cost"]))
    assert a.started <= a.ended <= b.started <= b.ended
    history = json.loads(store.messages_path(cid).read_bytes())  # Go's []model.Message, nothing else
    assert all(set(m) <= set(Message.__struct_encode_fields__) for m in history) and len(history) == 4
    shown = golem_main("show", cid, env={"TZ": "UTC"}).out
    assert "--- [2] assistant · openai:gpt-4o-mini · " in shown and "--- [4] assistant · anthropic:claude-haiku-4-5 · " in shown
    exported = golem_main("export", cid, "--format", "markdown").out
    assert "## 2. Assistant (openai:gpt-4o-mini · " in exported and f"run `{first['runId']}`" in exported
    assert "## 4. Assistant (anthropic:claude-haiku-4-5 · " in exported


def test_a_fork_carries_the_runs_it_copies_and_totals_count_them_once(golem_main, server, home):
    ids = []
    cid = ""
    for n in range(3):
        server.enqueue(Scenario(reply=Reply(text=f"r{n}", input_tokens=1000, output_tokens=100)))
        out = ask(golem_main, *(["--cid", cid] if cid else ["-m", "openai:gpt-4o-mini"]), f"q{n}")
        cid, ids = out["conversationId"], [*ids, out["runId"]]
    fork = golem_main("fork", cid, "--at", "4", "--no-chat").out.strip()
    store = Store(home)
    assert list(runs_of(store, fork)) == ids[:2]  # the runs whose messages it copied
    assert list(runs_of(store, cid)) == ids
    from golem_cli.store.sidecars.ledger import totals

    both = [*runs_of(store, cid).values(), *runs_of(store, fork).values()]
    assert totals(both).runs == 3


def test_import_of_a_plain_history_starts_no_ledger_and_delete_restore_move_it(golem_main, server, home, tmp_path):
    server.enqueue(Scenario(reply=Reply(text="ok")))
    cid = ask(golem_main, "-m", "openai:gpt-4o-mini", "one")["conversationId"]
    store = Store(home)
    log = store.messages_path(cid).with_name(f"{cid}.runs.jsonl")
    assert log.exists()
    plain = tmp_path / "plain.json"
    plain.write_bytes(store.messages_path(cid).read_bytes())
    imported = json.loads(golem_main("import", str(plain), "--json").out)["id"]
    assert runs_of(store, imported) == {} and not log.with_name(f"{imported}.runs.jsonl").exists()
    before = log.read_bytes()
    assert golem_main("delete", cid, "--yes").code == 0
    assert not log.exists()
    assert golem_main("restore", cid).code == 0
    assert log.read_bytes() == before


def test_a_sigkill_mid_turn_leaves_a_log_that_reads_and_the_next_run_appends_after(golem_main, server, home):
    server.enqueue(Scenario(reply=Reply(text="ok")))
    cid = ask(golem_main, "-m", "openai:gpt-4o-mini", "one")["conversationId"]
    server.enqueue(Scenario(reply=Reply(text=" ".join(["slow"] * 400)), delay=0.2))
    env = os.environ | {"GOLEM_HOME": str(home)}
    child = subprocess.Popen([*GOLEM_CMD, "ask", "--cid", cid, "two"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while len(server.requests) < 2 and time.monotonic() < deadline:  # the request is out: the run started
        time.sleep(0.02)
    assert len(server.requests) == 2
    child.send_signal(signal.SIGKILL)
    child.wait()
    store = Store(home)
    log = store.messages_path(cid).with_name(f"{cid}.runs.jsonl")
    killed = read_runs(log)
    assert len(killed) == 2 and list(killed.values())[1].ended is None  # started, never finished
    assert log.read_bytes().endswith(b"\n")
    with log.open("ab") as f:
        f.write(b'{"event":"run-end","v":1,"key":"')  # and a write torn in the middle
    server.enqueue(Scenario(reply=Reply(text="three")))
    third = ask(golem_main, "--cid", cid, "three")
    runs = read_runs(log)
    assert len(runs) == 3 and runs[third["runId"]].ended is not None
    assert all(json.loads(line) for line in log.read_bytes().splitlines()[:2])


@pytest.mark.parametrize("damage", ["garbage", "directory", "fifo", "huge-line"])
def test_a_damaged_ledger_still_loads_the_conversation(golem_main, golem, server, home, damage):
    server.enqueue(Scenario(reply=Reply(text="ok")))
    cid = ask(golem_main, "-m", "openai:gpt-4o-mini", "one")["conversationId"]
    log = Store(home).messages_path(cid).with_name(f"{cid}.runs.jsonl")
    log.unlink()
    if damage == "garbage":
        log.write_bytes(bytes(range(256)) * 40)
    elif damage == "directory":
        log.mkdir()
    elif damage == "fifo":
        os.mkfifo(log)
    else:
        log.write_bytes(b'{"v":1,"key":"' + b"x" * 100_000 + b'"}\n')
    run = golem if damage == "fifo" else golem_main  # a process where opening it could block: a hang fails
    assert "--- [2] assistant\n" in run("show", cid).out  # no model to say: the ledger says nothing
    server.enqueue(Scenario(reply=Reply(text="again")))
    out = ask(run, "--cid", cid, "two")
    assert out["reply"] == "again"
    assert "again" in run("export", cid, "--format", "markdown").out
