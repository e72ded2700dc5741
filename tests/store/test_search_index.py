"""Search through the index: files changed behind golem's back are seen, saves write through
(appends index only what is new), queries keep their meaning, two processes are safe."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.store import Store
from golem_cli.store import index as index_mod
from golem_cli.store import search as search_mod
from golem_cli.store.schema import PART_BITS
from golem_cli.store.search import parse_query


def search(store: Store, text: str, **kw):
    return store.search(text, **kw).hits


OUTSIDE = "01a228ea-1414-732e-9d7a-7c1f891d89a7"


def found(store: Store, query: str, **kw) -> list[tuple[str, int, str]]:
    return [(h.meta.id, h.message_index, h.role) for h in search(store, query, **kw)]


def texts(store: Store, cid: str) -> list[set[str]]:
    """The parts of one conversation's indexed text, in order (the distinct words of its
    messages' texts, case-folded)."""
    db = store.index._connect()
    (rid,) = db.execute("SELECT rid FROM conversations WHERE id = ?", (cid,)).fetchone()
    low, high = rid << PART_BITS, ((rid + 1) << PART_BITS) - 1
    parts = db.execute("SELECT body FROM texts WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (low, high))
    return [set(b.split(" ")) for (b,) in parts]


def test_files_added_edited_and_deleted_behind_golems_back_are_seen(store):
    cid = store.create([Message("user", "about penguins")])
    assert found(store, "penguin") == [(cid, 0, "user")]
    # added by another program (a sync tool, a Go program)
    store.messages_path(OUTSIDE).write_bytes(b'[{"role":"user","content":"walruses and penguins"}]')
    assert {h[0] for h in found(store, "penguins")} == {cid, OUTSIDE}
    assert OUTSIDE in [c.id for c in store.list()]
    # edited in place: same inode, the directory's mtime unchanged
    mtime = os.stat(store.conversations_dir).st_mtime_ns
    with open(store.messages_path(cid), "r+b") as f:
        f.write(dump_history([Message("user", "about albatrosses now")]))
        f.truncate()
    os.utime(store.conversations_dir, ns=(mtime, mtime))
    assert [c.meta.summary for c in store.list() if c.id == cid] == ["about albatrosses now"]
    assert found(store, "albatross") == [(cid, 0, "user")]
    assert [h[0] for h in found(store, "penguins")] == [OUTSIDE]
    # deleted
    os.unlink(store.messages_path(OUTSIDE))
    assert found(store, "penguins") == [] and OUTSIDE not in [c.id for c in store.list()]


def test_an_append_indexes_only_the_new_messages_and_a_rewrite_replaces_them(store, monkeypatch):
    history = [Message("user", "first question"), Message("assistant", "first answer")]
    cid = store.create(history)
    assert texts(store, cid) == [{"first", "question", "answer"}]
    inserted: list[str] = []
    original = search_mod.message_text
    monkeypatch.setattr(search_mod, "message_text", lambda m: inserted.append(m.content) or original(m))
    history += [Message("user", "Second question"), Message("assistant", "second answer")]
    store.append(cid, history)
    assert inserted == ["Second question", "second answer"]  # an append: only the new ones
    assert texts(store, cid) == [{"first", "question", "answer"}, {"second", "question", "answer"}]
    inserted.clear()
    store.save(cid, [Message("user", "rewritten"), history[1]])  # not an append: all of it again
    assert inserted == ["rewritten", "first answer"]
    assert texts(store, cid) == [{"rewritten", "first", "answer"}]
    monkeypatch.setattr(search_mod, "message_text", original)
    assert found(store, "second") == [] and found(store, "rewritten") == [(cid, 0, "user")]


def test_thinking_and_tool_calls_are_searched_and_never_matched_across_pieces(store):
    cid = store.create([Message("assistant", "ab", thinking=[ThinkingBlock("cd sieve")],
                                tool_calls=[ToolCall("c1", "primes", '{"upto": 100}')])])  # fmt: skip
    assert found(store, "SIEVE") == [(cid, 0, "assistant")]
    assert found(store, "primes") == [(cid, 0, "assistant")]
    assert found(store, "upto") == [(cid, 0, "assistant")]
    assert found(store, "abcd") == []  # content and thinking are separate texts


def test_phrase_prefix_role_and_since(store):
    old = store.create([Message("user", "Run the go test suite"), Message("assistant", "ergo, tests pass")])
    time.sleep(0.05)
    cut = time.time()
    time.sleep(0.05)
    new = store.create([Message("user", "Testing frameworks?"), Message("assistant", "pytest is one")])
    assert {h[0] for h in found(store, "test")} == {old, new}  # plain text: anywhere, as before
    assert found(store, '"go test"') == [(old, 0, "user")]  # a phrase: the words, in order
    assert found(store, '"GO   TEST"') == [(old, 0, "user")]
    assert found(store, '"go tests"') == []
    assert {h[0] for h in found(store, "test*")} == {old, new}  # words that start with "test"
    assert found(store, "frame* testing") == [(new, 0, "user")]  # every term in one message
    assert found(store, "test* pytest") == []  # "pytest" is not in the message that has "Testing"
    assert found(store, "pytest*", role="user") == []
    assert found(store, "pass", role="assistant") == [(old, 1, "assistant")]
    assert found(store, "test", since=cut) == [(new, 0, "user")]
    assert found(store, "te") and found(store, "zz") == []  # too short for the trigram index: still right


def test_query_parsing():
    assert parse_query("a b").patterns == () and parse_query("a b").literals == ("a b",)
    q = parse_query('"exact words" pre* plain')
    assert q.literals == ("exact", "words", "pre", "plain") and len(q.patterns) == 3
    assert q.fts() == " AND ".join(
        f'"{t}"' for t in ("exa", "xac", "act", "wor", "ord", "rds", "pre", "pla", "lai", "ain")
    )
    assert parse_query("zebra zebra").fts() == '"zeb" AND "ebr" AND "bra"'  # each once, within words
    assert parse_query('say "hi"').fts() == '"say"'  # "hi" is too short for trigrams
    assert parse_query('a"b').fts() is None or '""' in (parse_query('a"b').fts() or "")


def test_search_with_many_candidates_returns_the_newest_first(store, monkeypatch):
    monkeypatch.setattr(index_mod, "CANDIDATE_CAP", 3)
    made = [store.create([Message("user", f"common word {i}")]) for i in range(6)]
    assert [h[0] for h in found(store, "common", limit=4)] == made[::-1][:4]
    monkeypatch.setattr(index_mod, "CANDIDATE_CAP", 1000)
    assert [h[0] for h in found(store, "common", limit=4)] == made[::-1][:4]


WRITER = """
import sys
from golem_cli.core.messages import Message
from golem_cli.store import Store
store, cid, word = Store(sys.argv[1]), sys.argv[2], sys.argv[3]
for i in range(30):
    store.append(cid, store.load(cid) + [Message("user", f"{word} {i}")])
    assert store.search(f"{word} {i}").hits[0].meta.id == cid
"""


def test_two_processes_save_and_search_at_once(store):
    a = store.create([Message("user", "start")])
    b = store.create([Message("user", "start")])
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(store.root), cid, word], stderr=subprocess.PIPE, text=True)
        for cid, word in ((a, "alphaword"), (b, "betaword"))
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert [h[0] for h in found(store, "alphaword 29")] == [a]
    for cid, word in ((a, "alphaword"), (b, "betaword")):  # every message's words, in any parts
        assert set().union(*texts(store, cid)) == {"start", word, *(str(i) for i in range(30))}
    store.index.close()
    store.index_path.unlink()
    assert [h[0] for h in found(Store(store.root), "betaword 29")] == [b]


@pytest.mark.parametrize("damage", ["truncate", "garbage-pages"])
def test_a_corrupt_index_is_rebuilt_for_search(store, damage):
    cid = store.create([Message("user", "kept safe")])
    store.index.close()
    for suffix in ("-wal", "-shm"):
        try:
            os.unlink(f"{store.index_path}{suffix}")
        except FileNotFoundError:
            pass
    data = store.index_path.read_bytes()
    store.index_path.write_bytes(data[:100] if damage == "truncate" else data[:4096] + os.urandom(len(data) - 4096))
    assert found(Store(store.root), "safe") == [(cid, 0, "user")]


def test_a_query_of_no_words_finds_a_conversation_that_has_none(store):
    """The index holds no words for "\\" or "?!": such a query names every conversation, and
    the files decide (the conversation has no text part to scan)."""
    cid = store.create([Message("system", "\\"), Message("user", "?!")])
    assert found(store, "\\") == [(cid, 0, "system")] and found(store, "?!") == [(cid, 1, "user")]
    store.index.close()
    store.index_path.unlink()
    assert found(Store(store.root), "\\") == [(cid, 0, "system")]
