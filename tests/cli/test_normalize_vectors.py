"""Every normalize and sanitize vector of the spec (tests/data/spec/vectors) through `golem normalize --json`.

The input goes through a file exactly as golem stores it (dump_history; cut-off arguments in
their persisted wrapper). The repaired file must be byte-identical to the vector's output as
golem would write it, the JSON report must equal the vector's report, and each finding must
point at a message that really holds that call or result.

Vectors 15 and 17 are where the Go reference is not idempotent: golem returns the fixed point,
which is what the reference gives on a second pass, so they are compared with normalizing the
reference's first-pass output (the vector's output) once more.
"""

from __future__ import annotations

import json

import pytest
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.history.repair import normalize_history

from tests.vectors import load_vector, messages_from_json, vector_files

VECTORS = [p for p in vector_files() if load_vector(p)["op"] in ("normalize", "sanitize")]
NOT_IDEMPOTENT = {"15-normalize-reused-call-id-across-turns", "17-normalize-duplicate-id-in-one-turn-unanswered"}



def check_findings(history, output, doc) -> None:
    report = doc["report"]["Repair"] if doc["operation"] == "sanitize" else doc["report"]
    by_kind: dict[str, list[dict]] = {}
    for f in doc["findings"]:
        by_kind.setdefault(f["kind"], []).append(f)
    assert [f["callId"] for f in by_kind.get("synthesized", [])] == report["Synthesized"]
    assert [f["callId"] for f in by_kind.get("dropped", [])] == report["Dropped"]
    assert [f["callId"] for f in by_kind.get("truncated", [])] == report["Truncated"]
    for f in by_kind.get("dropped", []):
        m = history[f["messageIndex"]]
        assert (m.role, m.tool_call_id, m.tool_name, f["role"]) == ("tool", f["callId"], f["toolName"], "tool")
    for f in by_kind.get("synthesized", []) + by_kind.get("truncated", []):
        m = history[f["messageIndex"]]
        assert m.role == "assistant" == f["role"]
        assert any(c.id == f["callId"] and c.name == f["toolName"] for c in m.tool_calls)
    for f in by_kind.get("synthesized", []):
        placed = output[f["outputIndex"]]
        assert (placed.role, placed.tool_call_id) == ("tool", f["callId"])
    if doc["operation"] == "sanitize":
        systems = [f["messageIndex"] for f in by_kind.get("system_prompt", [])]
        assert len(systems) == doc["report"]["SystemPrompts"]
        assert all(history[i].role == "system" for i in systems)
        unsafe = by_kind.get("unsafe_part", [])
        assert [(f["messageIndex"], f["partKind"], f["scheme"]) for f in unsafe] == [
            (p["MessageIndex"], p["Kind"], p["Scheme"]) for p in doc["report"]["UnsafeParts"]
        ]
        assert all(history[f["messageIndex"]].role == f["role"] for f in unsafe)


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector_through_golem_normalize(path, tmp_path, golem_main):
    v = load_vector(path)
    sanitize = v["op"] == "sanitize"
    flags = ["--sanitize"] if sanitize else []
    source = tmp_path / "in.json"
    source.write_bytes(dump_history(messages_from_json(v["input"])))
    history = load_history(source.read_bytes())
    out_file = tmp_path / "out.json"

    result = golem_main("normalize", str(source), "--json", "-o", str(out_file), *flags)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["operation"] == v["op"]
    assert doc["written"] == str(out_file)
    output = load_history(out_file.read_bytes())

    if path.stem in NOT_IDEMPOTENT:
        first_pass = tmp_path / "reference-first-pass.json"
        first_pass.write_bytes(dump_history(messages_from_json(v["output"])))
        second = tmp_path / "second.json"
        assert golem_main("normalize", str(first_pass), "-o", str(second)).code == 0
        assert out_file.read_bytes() == second.read_bytes()
        assert doc["report"] == normalize_history(history)[1].to_json()
    else:
        assert out_file.read_bytes() == dump_history(messages_from_json(v["output"]))
        assert doc["report"] == v["report"]
    assert doc["messagesIn"] == len(history) and doc["messagesOut"] == len(output)
    assert doc["changed"] == (out_file.read_bytes() != dump_history(history))
    check_findings(history, output, doc)

    # --check: 1 exactly when repairs are needed; the output is a fixed point
    assert golem_main("normalize", str(source), "--check", *flags).code == (1 if doc["changed"] else 0)
    again = golem_main("normalize", str(out_file), "--check", "--json", *flags)
    assert again.code == 0, again.out
