"""``export --format golem`` and ``import``: a conversation moves with its title, model and
lineage (``export --format json`` then ``import`` lost the title and the model); plain
``json`` stays the bare Go-compatible array."""

from __future__ import annotations

import json

from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error


def _forked(home) -> tuple[str, str]:
    store = Store(home)
    parent = store.create([Message("user", "what is a monad"), Message("assistant", "a monoid")],
                          title="Monads", model="local:echo")  # fmt: skip
    return parent, store.fork(parent, 1)


def test_the_golem_format_carries_title_model_and_lineage_through_import(golem_main, home, tmp_path):
    parent, fork = _forked(home)
    out = tmp_path / "fork.golem.json"
    assert golem_main("export", fork, "--format", "golem", "-o", str(out)).code == 0
    doc = json.loads(out.read_text())
    assert (doc["format"], doc["version"]) == ("golem-conversation", 1)
    assert doc["messages"] == json.loads(golem_main("export", fork).out)  # the Go-compatible array, as is
    meta = doc["meta"]
    assert (meta["title"], meta["model"], meta["parent"], meta["forkAt"]) == ("Monads (fork)", "local:echo", parent, 1)
    assert meta["created"].endswith("+00:00")
    Store(home).delete(fork)
    done = golem_main("import", str(out), "--json")
    assert done.code == 0, done.err
    imported = json.loads(done.out)["id"]
    got = Store(home).meta(imported)
    assert (got.title, got.model, got.parent, got.fork_at) == ("Monads (fork)", "local:echo", parent, 1)
    assert imported == fork  # its own ID again, free once more


def test_plain_json_stays_the_bare_array(golem_main, home):
    parent, _ = _forked(home)
    assert isinstance(json.loads(golem_main("export", parent, "--format", "json").out), list)


def test_a_newer_or_foreign_document_is_one_line(golem_main, home, tmp_path):
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": "golem-conversation", "version": 2, "messages": [], "meta": {}}))
    done = golem_main("import", str(newer))
    assert done.code == 2 and "version 2, newer than golem reads" in done.err
    assert_one_line_error(done)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    done = golem_main("import", str(other))
    assert done.code == 2 and "not a golem conversation file" in done.err
    assert_one_line_error(done)


def test_the_golem_format_carries_the_run_ledger_through_import(golem_main, home, tmp_path):
    """The issue asked for the ledger in ``meta`` when there is one: it was left behind, so an
    imported conversation said nothing of which model wrote each reply, nor what it cost."""
    from golem_cli.store.sidecars.ledger import runs_of

    assert golem_main("ask", "-m", "offline:echo", "hello").code == 0
    store = Store(home)
    (cid,) = [info.id for info in store.list()]
    runs = runs_of(store, cid)
    assert len(runs) == 1
    out = tmp_path / "it.golem.json"
    assert golem_main("export", cid, "--format", "golem", "-o", str(out)).code == 0
    records = json.loads(out.read_text())["meta"]["runs"]
    assert {r["event"] for r in records} >= {"run-start", "run-end"}
    store.delete(cid)
    done = golem_main("import", str(out), "--json")
    assert done.code == 0, done.err
    assert json.loads(done.out)["id"] == cid
    assert runs_of(Store(home), cid) == runs
    assert "[2] assistant · offline:echo" in golem_main("show", cid).out  # which model wrote it, from the ledger


def test_a_hand_made_ledger_in_meta_is_taken_as_records_or_skipped(golem_main, home, tmp_path):
    doc = tmp_path / "odd.json"
    doc.write_text(json.dumps({"format": "golem-conversation", "version": 1,
                               "messages": [{"role": "user", "content": "hi"}],
                               "meta": {"runs": ["not a record", 5, {"event": "from-the-future", "v": 1, "key": "x"},
                                                 {"event": "run-start", "text": "a\nb"}]}}))  # fmt: skip
    done = golem_main("import", str(doc), "--json")
    assert done.code == 0, done.err
    cid = json.loads(done.out)["id"]
    assert golem_main("show", cid).code == 0 and golem_main("usage").code == 0
