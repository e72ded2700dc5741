"""The run ledger's records (store/sidecars/ledger.py): folded by run ID in file order, readable whatever
a crash, a newer golem or a person left in the log, and totals that count each run once."""

from __future__ import annotations

import json

import pytest
from golem_cli.core.usage import Usage
from golem_cli.store.sidecars.ledger import Ledger, Run, read_runs, totals
from hypothesis import given
from hypothesis import strategies as st

RUN_A = "019ad1c2-0000-7000-8000-00000000000a"
RUN_B = "019ad1c2-0000-7000-8000-00000000000b"


def write_two_runs(path):
    ledger = Ledger(path)
    ledger.started(RUN_A, kind="turn", model="openai:gpt-4o-mini", at=100.0)
    ledger.ended(RUN_A, usage=Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4), requests=1,
                 finish_reason="stop", failed=False, stopped=False, cost=0.5, at=101.0)  # fmt: skip
    ledger.started(RUN_B, kind="retry", model="anthropic:claude-haiku-4-5", at=200.0)


def test_records_fold_into_runs_in_file_order(tmp_path):
    path = tmp_path / "c.runs.jsonl"
    write_two_runs(path)
    runs = read_runs(path)
    assert list(runs) == [RUN_A, RUN_B]
    a, b = runs[RUN_A], runs[RUN_B]
    assert (a.kind, a.provider, a.model, a.started, a.ended, a.requests, a.finish_reason, a.cost) == (
        "turn", "openai", "openai:gpt-4o-mini", 100.0, 101.0, 1, "stop", 0.5)
    assert a.usage == Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4)
    assert (b.kind, b.ended, b.cost) == ("retry", None, None)  # started, never finished
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        assert record["v"] == 1 and record["key"] == record["run"] and record["event"] in ("run-start", "run-end")


@pytest.mark.parametrize("tail", [b'{"v":1,"key":"', b"\x00\x00garbage", b'{"v":1,"key":"x","run":"x","event":"run-e'])
def test_a_torn_last_line_is_skipped_and_the_next_append_follows_it(tmp_path, tail):
    path = tmp_path / "c.runs.jsonl"
    write_two_runs(path)
    with path.open("ab") as f:
        f.write(tail)  # a process killed in the middle of a write
    assert list(read_runs(path)) == [RUN_A, RUN_B]
    Ledger(path).ended(RUN_B, usage=Usage(input_tokens=3), requests=1, finish_reason="stop", failed=False,
                       stopped=False, cost=None, at=201.0)  # fmt: skip
    runs = read_runs(path)
    assert runs[RUN_B].ended == 201.0 and runs[RUN_B].usage.input_tokens == 3


def test_what_a_reader_does_not_understand_is_skipped(tmp_path):
    path = tmp_path / "c.runs.jsonl"
    write_two_runs(path)
    good = path.read_bytes()
    odd = [
        b'{"v":2,"key":"' + RUN_A.encode() + b'","run":"' + RUN_A.encode() + b'","event":"run-end","cost":99}',  # newer
        b'{"v":1,"key":"call_1","run":"' + RUN_A.encode() + b'","event":"tool-start","name":"x"}',  # another event
        b'{"v":1,"key":"' + RUN_A.encode() + b'","run":"' + RUN_A.encode() + b'","event":"run-end","requests":"many"}',
        b"[1, 2, 3]", b"not json", b"",
    ]
    path.write_bytes(good + b"\n".join(odd) + b"\n")
    runs = read_runs(path)
    assert runs[RUN_A].cost == 0.5 and runs[RUN_A].requests == 1


def test_a_missing_or_unreadable_ledger_has_no_runs(tmp_path):
    assert read_runs(tmp_path / "none.runs.jsonl") == {}
    (tmp_path / "dir.runs.jsonl").mkdir()
    assert read_runs(tmp_path / "dir.runs.jsonl") == {}
    (tmp_path / "bin.runs.jsonl").write_bytes(bytes(range(256)) * 10)
    assert read_runs(tmp_path / "bin.runs.jsonl") == {}


def test_totals_count_each_run_id_once():
    a = Run(run_id=RUN_A, usage=Usage(input_tokens=10, output_tokens=1), requests=2, cost=0.25)
    b = Run(run_id=RUN_B, usage=Usage(input_tokens=5, output_tokens=1), requests=1, cost=None)
    t = totals([a, b, a])  # a fork's ledger repeats its parent's runs
    assert (t.runs, t.requests, t.usage.input_tokens, t.cost, t.unpriced) == (2, 3, 15, 0.25, 1)


@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans(), st.integers(0, 10**6)), max_size=12),
    st.binary(max_size=40),
)
def test_any_log_with_any_torn_tail_reads_every_whole_record(tmp_path_factory, events, tail):
    """Whatever runs were written, and whatever a crash left after them, reading gives each
    run's last word: its start, and its end when one was written; the next append reads too."""
    path = tmp_path_factory.mktemp("log") / "c.runs.jsonl"
    ledger = Ledger(path)
    expected: dict[str, int | None] = {}
    for name, end, tokens in events:
        run = f"019ad1c2-0000-7000-8000-00000000000{name}"
        if end and run in expected:
            ledger.ended(run, usage=Usage(input_tokens=tokens), requests=1, finish_reason="stop", failed=False,
                         stopped=False, cost=None)  # fmt: skip
            expected[run] = tokens
        elif run not in expected:
            ledger.started(run, kind="turn", model="m:x")
            expected[run] = None
    with path.open("ab") as f:
        f.write(tail.replace(b"\n", b" "))  # a torn last line: no newline ends it
    runs = read_runs(path)
    assert {rid: (r.usage.input_tokens if r.ended else None) for rid, r in runs.items()} == expected
    Ledger(path).started("019ad1c2-0000-7000-8000-00000000000f", kind="turn", model="m:x")
    assert list(read_runs(path)) == [*expected, "019ad1c2-0000-7000-8000-00000000000f"]


def test_a_run_started_before_its_conversation_exists_is_recorded(tmp_path):
    """The first turn of a new store records its start before the conversation is created (and
    before the store made its folder): the record is kept, in a private folder."""
    folder = tmp_path / "conversations"
    ledger = Ledger(folder / "c.runs.jsonl")
    ledger.started("r1", kind="turn", model="offline:echo")
    assert ledger.problem == "" and folder.stat().st_mode & 0o777 == 0o700
    assert read_runs(ledger.path)["r1"].model == "offline:echo"
