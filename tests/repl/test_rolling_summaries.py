"""Rolling summaries through golem's own entry point (issue 23): over 100 turns the window
bound holds, the summary grows, and the prefix changes only at folds; a failed fold keeps the
previous summary and says so; a large old tool result is a one-line note in a fold's request.

A chat's turns here are lines on its standard input (``golem_run("chat", input=...)``): what is
tested is what each request carries and what the store keeps, the same whether the lines come
from a person at a terminal or from a pipe; the REPL on a terminal has its own tests."""

from __future__ import annotations

import json
import re

import msgspec
import pytest

from tests.providerserver import ProviderServer, Received, Reply, Scenario, ToolCallSpec
from tests.repl import inprocess_golem
from tests.repl.histories import append_turns, store
from tests.repl.test_cache_prefix import parts
from tests.repl.test_compaction import COMPACT_MARK, SUMMARY_MARK, blocks

pytestmark = pytest.mark.slow

ROLLING = ["--max-messages", "20", "--trim-stride", "10", "--summarize-trimmed"]
golem_run = inprocess_golem.golem_run  # golem's entry point in this process, its exit code checked


def lines(prompts: range) -> str:
    """A chat's standard input: one prompt a line, ``turn N`` for each N."""
    return "".join(f"turn {n}\n" for n in prompts)


def is_fold(request: Received) -> bool:
    return blocks(request)[-1].startswith(COMPACT_MARK)


def test_a_hundred_turns_keep_the_window_bounded_and_the_prefix_stable_between_folds(
    golem_run, server: ProviderServer, home
) -> None:
    """Through one chat (a hundred ``ask -c`` would be a hundred starts of golem)."""
    golem_run("chat", *ROLLING, input=lines(range(100)))
    turns = [r for r in server.requests if not is_fold(r)]
    folds = [r for r in server.requests if is_fold(r)]
    assert len(turns) == 100 and len(folds) >= 15
    summaries = []
    for before, after in zip(turns, turns[1:], strict=False):
        _, _, earlier = parts(before)
        _, _, later = parts(after)
        assert len(later) <= 1 + 20 + 1  # the summary, at most N messages, the prompt
        if later[: len(earlier)] != earlier:  # the prefix changed: only where a fold happened between
            between = server.requests[server.requests.index(before) + 1 : server.requests.index(after)]
            assert any(is_fold(r) for r in between)
        first = blocks(after)[0]
        if first.startswith(SUMMARY_MARK):
            summaries.append(first)
    assert summaries, "no request carried a summary"
    lengths = [len(s) for s in dict.fromkeys(summaries)]
    assert lengths == sorted(lengths) and lengths[-1] > lengths[0]  # the summary grows
    changes = sum(parts(a)[2][: len(parts(b)[2])] != parts(b)[2] for b, a in zip(turns, turns[1:], strict=False))
    assert changes <= len(folds)


def test_a_failed_fold_keeps_the_previous_summary_and_says_so_once(
    golem_run, server: ProviderServer, home, refused_port: int
) -> None:
    golem_run("chat", *ROLLING, input=lines(range(12)))
    (path,) = (home / "conversations").glob("*.summaries.json")
    before = path.read_bytes()
    config = home / "config.toml"
    config.write_text('compact_model = "gone:model"\n' + config.read_text()
                      + f'\n[providers.gone]\nbase_url = "http://127.0.0.1:{refused_port}/v1"\napi_key = "k"\n'
                      "max_retries = 0\n")  # fmt: skip
    done = golem_run("resume", "last", *ROLLING, input=lines(range(12, 40)))
    assert path.read_bytes() == before
    said = [line for line in (done.out + done.err).splitlines() if "rolling summary could not be updated" in line]
    assert len(said) == 1 and "the previous one is kept" in said[0], done.out + done.err
    assert texts_of_last_turn(server).startswith(SUMMARY_MARK)


def texts_of_last_turn(server: ProviderServer) -> str:
    return blocks([r for r in server.requests if not is_fold(r)][-1])[0]


def test_a_large_old_tool_result_is_a_one_line_note_in_the_fold(golem_run, server: ProviderServer, home) -> None:
    root = home / "project"
    root.mkdir()
    (root / "big.txt").write_text("x" * 20_000)
    config = home / "config.toml"
    config.write_text(f'tool_root = "{root}"\n' + config.read_text())
    call = ToolCallSpec("call_big", "read_file", '{"path": "big.txt"}')
    server.enqueue(Scenario(reply=Reply(text="reading", tool_calls=[call])), Scenario(reply=Reply(text="read it")))
    golem_run("ask", *ROLLING, "-T", "fs", "read big.txt")
    (row,) = store(home).list()
    cid = row.id
    # Turns 0-7 still fit the window (written as files); turn 8's ask moves it: the first fold.
    append_turns(home, cid, [f"turn {n}" for n in range(8)])
    assert not any(is_fold(r) for r in server.requests)
    golem_run("ask", "-c", *ROLLING, "-T", "fs", "turn 8")
    (fold,) = [r for r in server.requests if is_fold(r)]
    body = msgspec.json.decode(fold.body)
    text = msgspec.json.encode(body).decode()
    assert "x" * 5000 not in text and "a read_file result of 20000 characters, left out here" in text
    assert len(fold.body) < 10_000
    assert "x" * 20_000 in (home / "conversations" / f"{cid}.json").read_text()  # the file keeps it


def test_the_offline_models_rolling_summary_keeps_the_gist_of_every_turn(golem_run, home) -> None:
    """With a model that really summarises (the offline one), the summary grows fold by fold
    and keeps every prompt, while each request holds at most the summary, N messages and the
    prompt (the offline model says how many messages it saw)."""
    out = golem_run("chat", "-m", "offline:echo", *ROLLING, input=lines(range(100))).out
    seen = [int(found) for found in re.findall(r"it saw (\d+) message", out)]
    assert len(seen) == 100 and max(seen) <= 1 + 20 + 1
    (path,) = (home / "conversations").glob("*.summaries.json")
    doc = json.loads(path.read_text())["summaries"]
    texts = [s["text"] for s in doc]
    assert [len(t) for t in texts] == sorted(len(t) for t in texts) and len(texts[-1]) > len(texts[0])
    assert all(s["by"] == "rolling" for s in doc)
    assert "the user said: turn 0" in texts[-1] and "the user said: turn 80" in texts[-1]
