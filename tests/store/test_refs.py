"""Conversation references: prefixes, `last`, and refusing anything path-like before any
file system access."""

from __future__ import annotations

import os
import pathlib

import pytest
from golem_cli.core.messages import Message
from golem_cli.store import AmbiguousReference, ConversationNotFound, InvalidReference, Store, parse_reference
from golem_cli.store.refs import is_conversation_id, short_id_length

A = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
B = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
C = "0190ffff-0000-7000-8000-000000000000"

PATH_LIKE = [
    "../x", "..", ".", "/etc/passwd", "a/b", "0190a1b2/../../etc", "~", "~/x", "", " ", "abcg",
    "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/..", "..\\x", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.json",
    "%2e%2e", "last/..", "0190a1b2c3d4e", "g190", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b0", "x" * 300,
]  # fmt: skip


def test_full_id_syntax():
    assert is_conversation_id(A)
    assert not is_conversation_id(A.upper())
    assert not is_conversation_id(A + "0")
    assert not is_conversation_id(A.replace("-", ""))


@pytest.mark.parametrize(
    "ref",
    [
        "0190",
        "0190a1b2",
        "0190a1b2-",
        "0190a1b2-c3",
        A,
        A.upper(),
        "last",
        "LAST",
        " 0190 ",
        "0",
        "abc",
        "4a5b",
        "-0c1d2e3f4a5b",
        "8a9b-0c1d2e3f4a5b",
    ],
)
def test_valid_references(ref):
    assert parse_reference(ref) == ref.strip().lower()


@pytest.mark.parametrize("ref", PATH_LIKE)
def test_path_like_references_are_refused(ref):
    with pytest.raises(InvalidReference) as info:
        parse_reference(ref)
    assert "not a conversation ID" in str(info.value)


@pytest.mark.parametrize("ref", PATH_LIKE)
def test_refused_before_touching_the_file_system(tmp_path, monkeypatch, ref):
    store = Store(tmp_path / "home")

    def forbidden(*args, **kwargs):
        raise AssertionError("file system touched")

    for name in ("stat", "lstat", "listdir", "scandir", "open"):
        monkeypatch.setattr(os, name, forbidden)
    for name in ("exists", "is_file", "stat", "read_bytes", "iterdir"):
        monkeypatch.setattr(pathlib.Path, name, forbidden)
    with pytest.raises(InvalidReference):
        store.resolve(ref)
    for method in (store.messages_path, store.meta_path, store.lock_path):
        with pytest.raises(InvalidReference):
            method(ref)


def test_prefix_resolution(store):
    for cid in (A, B, C):
        store.create([Message("user", cid)], cid=cid)
    assert store.resolve(A) == A
    assert store.resolve("0190ff") == C
    assert store.resolve("0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5C") == B
    with pytest.raises(AmbiguousReference) as info:
        store.resolve("0190a1b2")
    assert info.value.candidates == [A, B]
    assert A in str(info.value) and B in str(info.value)
    with pytest.raises(ConversationNotFound):
        store.resolve("0190b")
    with pytest.raises(ConversationNotFound):
        store.resolve("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5d")


def test_any_unique_prefix_or_tail(store):
    for cid in (A, B, C):
        store.create([Message("user", cid)], cid=cid)
    assert store.resolve("5b") == A and store.resolve("A5C") == B and store.resolve("0000") == C
    assert store.resolve("-000000000000") == C
    assert store.resolve("0") == C  # the start of all three, and the end of C: a tail wins
    with pytest.raises(AmbiguousReference) as info:
        store.resolve("01")  # the start of all three, the end of none
    assert info.value.candidates == [A, B, C] and "last characters" in str(info.value)
    with pytest.raises(ConversationNotFound):
        store.resolve("4a5d")


def test_unique_prefix_length_never_ends_on_a_dash():
    from golem_cli.store.refs import unique_prefix_length

    assert unique_prefix_length(A, [A]) == 1
    assert unique_prefix_length(A, [B, C]) == 36
    assert unique_prefix_length(C, [A, B]) == 5
    assert unique_prefix_length("0190a1b2-0000-7000-8000-000000000000", [A]) == 10  # "0190a1b2-" would end on "-"


def test_last_is_the_most_recently_updated(store):
    first = store.create([Message("user", "one")])
    second = store.create([Message("user", "two")])
    assert store.resolve("last") == second
    store.save(first, [Message("user", "one"), Message("assistant", "again")])
    assert store.resolve("last") == first


def test_last_in_an_empty_store(store):
    with pytest.raises(ConversationNotFound, match="no conversations yet"):
        store.resolve("last")


def test_short_id_length_keeps_shown_ids_unique():
    ids = sorted([A, B, C])
    assert short_id_length(ids, [C]) == 8
    n = short_id_length(ids, [A, B])
    assert A[:n] != B[:n] and n == 36
    ids2 = sorted(["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b2-c3e4-7e5f-8a9b-0c1d2e3f4a5b"])
    n2 = short_id_length(ids2, ids2)
    assert n2 == 12 and ids2[0][:n2] != ids2[1][:n2]
    # never ends on a dash
    ids3 = sorted(["0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0190a1b3-c3d4-7e5f-8a9b-0c1d2e3f4a5b"])
    assert short_id_length(ids3, ids3) == 8
