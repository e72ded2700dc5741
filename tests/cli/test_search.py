"""`golem search`: conversations that mention a text, found whatever the case or escaping."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.store import Store

GOLEM = os.path.join(os.path.dirname(sys.executable), "golem")


def run(home, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")} | {"GOLEM_HOME": str(home)}
    return subprocess.run([GOLEM, "search", *args], capture_output=True, text=True, timeout=30, env=env)


def test_finds_by_content_case_insensitively_with_a_snippet(tmp_path):
    store = Store(tmp_path)
    a = store.create([Message("user", "How do I parse JSON in Go?"), Message("assistant", "Use encoding/json.")])
    b = store.create([Message("user", "Tell me about <html> & the DOM"), Message("assistant", "Élan vital, ÉTÉ")])
    store.create([Message("user", "nothing relevant")])
    done = run(tmp_path, "ENCODING/json")
    assert done.returncode == 0
    assert a[:8] in done.stdout and "#1 assistant: Use encoding/json." in done.stdout
    # Characters Go escapes in the file, and non-ASCII case folding.
    assert b[:8] in run(tmp_path, "<HTML> &").stdout
    assert b[:8] in run(tmp_path, "été").stdout


def test_looks_into_thinking_and_tool_calls_and_prints_json(tmp_path):
    store = Store(tmp_path)
    cid = store.create([Message("assistant", thinking=[ThinkingBlock("ponder the sieve")],
                                tool_calls=[ToolCall("c1", "primes", '{"upto": "sieve of eratosthenes"}')])])  # fmt: skip
    hits = json.loads(run(tmp_path, "--json", "Eratosthenes").stdout)
    assert [(h["id"], h["messageIndex"], h["role"]) for h in hits] == [(cid, 0, "assistant")]
    assert "sieve" in hits[0]["snippet"]


def test_no_match_and_corrupt_files(tmp_path):
    store = Store(tmp_path)
    store.create([Message("user", "hello")])
    (store.conversations_dir / "01a228ea-1414-732e-9d7a-7c1f891d89a7.json").write_bytes(b"[{broken hello")
    done = run(tmp_path, "goodbye")
    assert done.returncode == 1 and "no conversation mentions 'goodbye'" in done.stderr
    assert "Traceback" not in run(tmp_path, "hello").stderr


def test_role_and_since_options(tmp_path):
    store = Store(tmp_path)
    cid = store.create([Message("user", "quokka please"), Message("assistant", "a quokka")])
    assert "#1 assistant" in run(tmp_path, "quokka", "--role", "assistant").stdout
    assert run(tmp_path, "quokka", "--since", "1h").stdout.startswith(cid[:8])
    assert run(tmp_path, "quokka", "--since", "2999-01-01").returncode == 1
    bad = run(tmp_path, "quokka", "--since", "yesterday-ish")
    assert bad.returncode != 0 and "--since" in bad.stderr and "Traceback" not in bad.stderr
    assert run(tmp_path, "quokka", "--role", "robot").returncode != 0
    assert "#0 user" in run(tmp_path, '"quokka please"').stdout and run(tmp_path, "quok*").returncode == 0
