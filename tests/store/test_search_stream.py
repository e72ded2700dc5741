"""A search for every hit gives each as it is found (search.py, ``Stream``): the hits it gives
are the ones ``shared_with_forks`` gives from all of them, each at its own place; a word in
every conversation gives its first hits before the search has read every file, whatever forks
the store holds."""

from __future__ import annotations

from golem_cli.core.messages import Message
from golem_cli.store import Store
from golem_cli.store.meta import ConversationMeta
from golem_cli.store.search import Forks, Hit, Stream, place, shared_with_forks
from hypothesis import given, settings
from hypothesis import strategies as st


@st.composite
def families(draw):
    """Conversations (some forks of others, cycles included: a sidecar may say anything), each
    with its place in a search's order, and the first hit of some of them."""
    n = draw(st.integers(1, 8))
    ids = [f"019a0000-0000-7000-8000-00000000000{i}" for i in range(n)]
    metas = []
    for cid in ids:
        parent = draw(st.sampled_from(["", "", *ids]))
        metas.append(ConversationMeta(id=cid, parent="" if parent == cid else parent,
                                      fork_at=draw(st.integers(-1, 2)), updated=float(draw(st.integers(0, 4)))))  # fmt: skip
    hits = {}
    for meta in metas:
        if draw(st.booleans()):
            index = draw(st.integers(0, 1))
            hits[meta.id] = (index, draw(st.sampled_from(["user", "assistant"])), draw(st.sampled_from(["a", "b"])))
    return sorted(metas, key=place), hits


def hit_of(meta: ConversationMeta, found: tuple[int, str, str]) -> Hit:
    index, role, snippet = found
    return Hit(meta, index, role, snippet, index + 1)


@settings(max_examples=300, deadline=None)
@given(families(), st.integers(0, 4))
def test_the_stream_gives_what_folding_every_hit_gives(family, since):
    metas, found = family
    order = [m for m in metas if m.updated >= since]  # what a search from ``since`` reaches
    parents = {m.id: m.parent for m in metas if m.parent}
    reached: list[ConversationMeta] = []

    def ahead(meta):
        assert place(meta) > place(reached[-1]), "only a conversation not reached yet is looked up ahead"
        return hit_of(meta, found[meta.id]) if meta.id in found else None

    stream = Stream(Forks(parents, {m.id: m for m in order}), ahead)
    streamed = []
    for meta in order:
        reached.append(meta)
        if meta.id in found:
            given_now = stream.add(hit_of(meta, found[meta.id]))
            if not meta.parent and meta.id not in parents.values():
                assert [h.meta.id for h in given_now] == [meta.id], "a hit in no family is given at once"
            assert all(h.meta.id == meta.id for h in given_now), "a hit is given at its own place"
            streamed += given_now
    assert stream.end() == []
    every = shared_with_forks([hit_of(m, found[m.id]) for m in order if m.id in found])
    assert [(h.meta.id, h.forks) for h in streamed] == [(h.meta.id, h.forks) for h in every]
    held = Stream(None, ahead)  # a search with a limit: held to the end, the same answer
    for meta in order:
        reached.append(meta)
        if meta.id in found:
            assert held.add(hit_of(meta, found[meta.id])) == []
    assert [(h.meta.id, h.forks) for h in held.end()] == [(h.meta.id, h.forks) for h in every]


def test_a_word_in_every_conversation_gives_its_first_hits_before_every_file_is_read(store, monkeypatch):
    made = [store.create([Message("user", f"the common word {i}")]) for i in range(120)]
    fork = store.fork(made[0], 1)  # the newest: its hit is a copy of the oldest one's
    read: list[str] = []
    original = Store.read
    monkeypatch.setattr(Store, "read", lambda self, cid: read.append(cid) or original(self, cid))
    shown = [(hit.meta.id, hit.forks, len(read)) for hit in store.search_hits("common", None, unreadable={})]
    assert [cid for cid, _, _ in shown] == made[::-1], "newest first, the fork's copied hit folded"
    assert shown[0][2] == 3, "the first hit was given after reading the fork, its parent and itself"
    assert shown[-1][1] == [fork], "the parent's hit names the fork"
    assert [h.meta.id for h in store.search("common", None).hits] == made[::-1]


def test_golem_search_shows_every_hit_folded_as_it_goes(tmp_path):
    from tests.cli.test_search import run_process as run

    store = Store(tmp_path)
    parent = store.create([Message("user", "the axolotl question"), Message("assistant", "an answer")])
    fork = store.fork(parent, 1)
    other = store.create([Message("user", "another axolotl")])
    done = run(tmp_path, "-n", "0", "axolotl")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("user: the axolotl question") == 1, done.stdout
    assert "also in fork" in done.stdout and fork[-12:] in done.stdout, done.stdout
    assert done.stdout.index(other[-12:]) < done.stdout.index(parent[-12:]), "newest first"
