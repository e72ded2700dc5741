"""The lean decode a rebuild makes of a messages file (store/digest.py: the codec's strict path
stopped before it builds messages) reads what the codec reads: it accepts exactly the files the codec's strict fast path accepts, and gives the
metadata and the words that decoding them whole gives; and the words the index holds never
lose a match (index-narrowed search == a search that decodes every message)."""

from __future__ import annotations

import sqlite3

import pytest
from golem_cli.core.codec import history
from golem_cli.core.codec.history import dump_history, read_history
from golem_cli.core.messages import Message
from golem_cli.store import digest as digest_mod
from golem_cli.store.digest import digest, words_of
from golem_cli.store.meta import derive_meta, encode_meta
from golem_cli.store.schema import SCHEMA
from golem_cli.store.search import first_hit, indexed_text, parse_query
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.strategies import ALPHABET, histories, queries

CID = "01a228ea-1414-732e-9d7a-7c1f891d89a7"


@settings(max_examples=200, deadline=None)
@given(histories())
def test_the_lean_decode_gives_what_decoding_the_whole_file_gives(messages):
    data = dump_history(messages)
    lean = digest(CID, data, words=True)
    assert lean is not None
    whole = history.load_history(data)
    assert encode_meta(lean.meta) == encode_meta(derive_meta(CID, whole, size=len(data)))
    assert set(lean.words.split(" ")) == set(indexed_text(whole).split(" "))
    assert words_of(data) == (len(whole), lean.words)  # for a row the index has: no metadata worked out


SPELLINGS = [
    b'[{"Role":"user","Content":"capitalised keys"}]',  # Go reads them: the slow path does
    b'[{"role":"user","content":"x","extra":1}]',  # an unknown key
    b'[{"role":"user","content":null}]',  # null: the zero value, in Go
    b'\xef\xbb\xbf[{"role":"user","content":"bom"}]',
    b'[{"role":"user","parts":5}]',  # the wrong type: not a history
    b'[{"role":"user","content":"cut off',
    b'[{"role":"assistant","toolCalls":[{"id":"c","name":"n","args":{"a":1},"extra":0}]}]',
    b'[{"role":"assistant","thinking":[{"text":"t","other":1}]}]',
    b'[{"role":"user","failed":"yes"}]',
    b"null",
    b"[]",
    b'[{"role":"user","content":"fine"}]',
    b'[{"role":"assistant","toolCalls":[{"id":"c","name":"n","args":{"truncated_args":"{\\"a"}}]}]',
]


def strict_path_reads(data: bytes) -> bool:
    try:
        return read_history(data)[1]
    except Exception:
        return False


@pytest.mark.parametrize("data", SPELLINGS)
def test_the_lean_decode_takes_exactly_what_the_strict_path_takes(data):
    """(But a byte-order mark, which the codec strips first: such a file is read carefully.)"""
    lean = digest(CID, data, words=True)
    assert (lean is not None) == (strict_path_reads(data) and not data.startswith(b"\xef\xbb\xbf"))
    if lean is not None:
        whole = history.load_history(data)
        assert lean.meta.messages == len(whole)
        assert set(lean.words.split(" ")) == set(indexed_text(whole).split(" "))


@settings(max_examples=200, deadline=None)
@given(histories(), st.data())
def test_the_lean_decode_takes_exactly_what_the_strict_path_takes_after_any_edit(messages, data):
    """One byte of a golem-written file replaced or removed: the lean decode takes the result
    only if the strict path does."""
    raw = bytearray(dump_history(messages))
    at = data.draw(st.integers(0, len(raw) - 1))
    if data.draw(st.booleans()):
        raw[at] = data.draw(st.sampled_from(b'"{}[],:0nu \\aZ'))
    else:
        del raw[at]
    edited = bytes(raw)
    assert (digest(CID, edited, words=False) is not None) == strict_path_reads(edited)


def _fts_admits(words: str, query_text: str) -> bool:
    """Whether the index's trigram table names a conversation holding ``words`` for the query
    (or, for a query too short for trigrams, its text scan keeps it)."""
    query = parse_query(query_text)
    fts = query.fts()
    if fts is None:
        return query.admits(words)
    db = sqlite3.connect(":memory:")
    db.execute(next(statement for statement in SCHEMA.split(";") if "fts5" in statement))  # the texts table
    db.execute("INSERT INTO texts (rowid, body) VALUES (1, ?)", (words,))
    return db.execute("SELECT count(*) FROM texts WHERE texts MATCH ?", (fts,)).fetchone()[0] == 1


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_words_the_index_holds_never_drop_a_match(data):
    """Any history, any query (a slice of one of its texts in another case, a word, a prefix,
    a phrase, random text): when decoding the messages finds a match, the index names the
    conversation, by its trigrams and by its text scan."""
    messages = data.draw(histories())
    query_text = data.draw(queries(messages))
    query = parse_query(query_text)
    meta = derive_meta(CID, messages, size=0)
    if first_hit(query, meta, messages) is None:
        return
    words = indexed_text(messages)
    assert query.admits(words)
    assert _fts_admits(words, query_text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(ALPHABET.replace('"', ""), min_size=1, max_size=12), min_size=1, max_size=30), st.data())
def test_a_substring_across_words_is_never_missed(pieces, data):
    """A slice of running text that starts and ends inside words ("ebra qu" in "zebra quantum"),
    as plain text (no double quote: that makes terms)."""
    text = " ".join(pieces)
    start = data.draw(st.integers(0, len(text) - 1))
    needle = text[start : start + data.draw(st.integers(1, 30))]
    if not needle.strip():
        return
    messages = [Message("user", text)]
    assert first_hit(parse_query(needle), derive_meta(CID, messages, size=0), messages) is not None
    assert _fts_admits(indexed_text(messages), needle)


def test_a_file_over_the_lean_size_is_declined(monkeypatch):
    monkeypatch.setattr(digest_mod, "LEAN_BYTES", 10)
    assert digest(CID, dump_history([Message("user", "longer than ten bytes")]), words=False) is None
