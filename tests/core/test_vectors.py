"""Every worked case of the spec vectors (tests/data/spec/vectors) as a test.

Where the Go reference is not idempotent (a call ID reused while unanswered, vectors 15 and
17), golem returns the reference's fixed point instead, which is what the reference gives on a
second pass; those vectors are checked against that, and the reason is in
docs/adr/0001-repair-fixed-point.md.
"""

from __future__ import annotations

import pytest
from golem_cli.core.errors import HistoryProcessorError
from golem_cli.core.history.processors import trim_history
from golem_cli.core.history.repair import normalize_history, repair_history
from golem_cli.core.history.sanitize import sanitize_history

from tests.vectors import load_vector, messages_from_json, vector_files

VECTORS = vector_files()

# name of a non-idempotent vector -> the vector holding the reference's second pass
SECOND_PASS = {"15-normalize-reused-call-id-across-turns": "16-normalize-reused-call-id-second-pass"}


def by_name(stem: str):
    for path in VECTORS:
        if path.stem == stem:
            return load_vector(path)
    raise LookupError(stem)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path):
    v = load_vector(path)
    history = messages_from_json(v["input"])
    expected = messages_from_json(v["output"])
    op = v["op"]
    if op == "trim":
        processor = trim_history(v["args"]["n"])
        if v.get("error"):
            with pytest.raises(HistoryProcessorError) as info:
                processor(history)
            assert str(info.value) == v["error"]
        else:
            assert processor(history) == expected
        return
    if path.stem in SECOND_PASS:
        return  # checked by test_non_idempotent_reference_vectors
    if op == "repair":
        assert repair_history(history) == expected
    elif op == "normalize":
        out, report = normalize_history(history)
        if path.stem.startswith("17-"):
            return  # checked by test_duplicate_unanswered_id_fixed_point
        assert out == expected
        assert report.to_json() == v["report"]
    elif op == "sanitize":
        out, report = sanitize_history(history)
        assert out == expected
        assert report.to_json() == v["report"]
    else:
        pytest.fail(f"unknown op {op}")


def test_non_idempotent_reference_vectors():
    first, second = by_name("15-normalize-reused-call-id-across-turns"), by_name("16-normalize-reused-call-id-second-pass")
    # The reference's first pass is vector 15's output; its second pass is vector 16's.
    assert messages_from_json(first["output"]) == messages_from_json(second["input"])
    out, report = normalize_history(messages_from_json(first["input"]))
    assert out == messages_from_json(second["output"])
    # Net change from the input: x closed after both turns, the displaced real result dropped.
    assert report.to_json() == {"Synthesized": ["x", "x"], "Dropped": ["x"], "Truncated": []}
    again, report2 = normalize_history(out)
    assert again == out and report2.to_json() == {"Synthesized": [], "Dropped": [], "Truncated": []}
    # Vector 16 itself: the reference's second pass is already our fixed point.
    out16, report16 = normalize_history(messages_from_json(second["input"]))
    assert out16 == messages_from_json(second["output"])
    assert report16.to_json() == second["report"]


def test_duplicate_unanswered_id_fixed_point():
    v = by_name("17-normalize-duplicate-id-in-one-turn-unanswered")
    reference_first_pass = messages_from_json(v["output"])
    out, report = normalize_history(messages_from_json(v["input"]))
    # The reference's second pass drops the second synthesized result (x is answered once).
    assert out == reference_first_pass[:-1]
    assert report.to_json() == {"Synthesized": ["x"], "Dropped": [], "Truncated": []}
    assert normalize_history(out)[0] == out
    # Its own first-pass output normalizes to the same fixed point.
    assert normalize_history(reference_first_pass)[0] == out
