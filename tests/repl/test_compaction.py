"""Compaction through golem's real entry point (issue 23): what each request carries before and
after ``golem compact`` / ``/compact``, after an undo, after a fork, with a damaged summaries
file, on both protocols over the loopback server (every body validated against the SDK types).
The commands run in this process (``golem_run``), the REPL on a terminal (``spawn``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providerserver import ProviderServer, Received, Reply, Scenario, ToolCallSpec
from tests.repl import inprocess_golem
from tests.repl.histories import write_conversation
from tests.repl.test_cache_prefix import project

pytestmark = pytest.mark.slow

MODELS = {"openai": "local:echo", "anthropic": "claude:claude-test"}
SUMMARY_MARK = "[golem: summary of the conversation so far]"
COMPACT_MARK = "[golem: compaction request]"


golem_run = inprocess_golem.golem_run  # golem's entry point in this process (tests/repl/inprocess_golem.py)


def texts(request: Received) -> list[str]:
    """Each message's text (either protocol), tool blocks as their kind."""
    out = []
    for m in request.json["messages"]:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append(" ".join(b.get("text", b.get("type", "")) for b in content if isinstance(b, dict)))
        else:
            out.append(m.get("role", ""))
    return out


def blocks(request: Received) -> list[str]:
    """The text of each message or content block after the system prompt, in order (the
    Messages API puts consecutive user messages in one turn, as blocks)."""
    out = []
    for m in request.json["messages"]:
        content = m.get("content")
        if m.get("role") == "system":
            continue
        if isinstance(content, list):
            out += [b.get("text", b.get("type", "")) for b in content if isinstance(b, dict)]
        else:
            out.append(content if isinstance(content, str) else m.get("role", ""))
    return out


def system_of(request: Received) -> Any:
    data = request.json
    if "system" in data:
        return [b["text"] for b in data["system"]] if isinstance(data["system"], list) else data["system"]
    return data["messages"][0]["content"] if data["messages"][0]["role"] == "system" else None


def tools_of(request: Received) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in request.json.get("tools", [])]


def turns(n: int) -> list[str]:
    return [f"turn {k}" for k in range(n)]


def converse(home: Path, kind: str, count: int) -> str:
    """``count`` turns with a tool round each, as ``golem ask -s "You are terse." -T fs`` then
    ``ask -c`` would store them (written as files: the asks are not what is tested); its ID."""
    return write_conversation(home, turns(count), model=MODELS[kind], system="You are terse.",
                              tools=["fs"], tool_rounds=True, call_prefix="toolu" if kind == "anthropic" else "call")  # fmt: skip


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_compact_then_ask_sends_instructions_summary_then_the_tail(
    golem_run, server: ProviderServer, home: Path, kind: str
) -> None:
    project(home)
    cid = converse(home, kind, 4)
    path = home / "conversations" / f"{cid}.json"
    before = path.read_bytes()
    server.enqueue(Scenario(reply=Reply(text="SUMMARY: the user read notes.txt four times")))
    done = golem_run("compact", cid[:8], "--keep", "4", "--focus", "the notes")  # its tools, as kept with it
    assert done.out.strip() == "SUMMARY: the user read notes.txt four times"
    assert "Summarised messages 1-12 (the newest 4 kept verbatim)" in done.err
    assert path.read_bytes() == before  # the history file is never touched
    compaction = server.requests[-1]
    assert "tool_choice" not in compaction.json
    said = texts(compaction)
    assert said[-1].startswith(COMPACT_MARK) and said[-1].endswith("Focus on: the notes")
    assert "turn 0" in said and "turn 2" in said and "turn 3" not in said
    server.enqueue(Scenario(reply=Reply(text="after")))
    golem_run("ask", "-c", "-m", MODELS[kind], "-T", "fs", "next")
    summary, *rest = blocks(server.requests[-1])
    assert summary.startswith(SUMMARY_MARK) and "messages 1-12" in summary
    assert summary.endswith("SUMMARY: the user read notes.txt four times")
    assert rest[0] == "turn 3" and rest[-1] == "next" and not any("turn 2" in t for t in rest)
    # undo: the next request is as if it had never been compacted
    assert "Removed the summary of messages 1-12" in golem_run("compact", cid, "--undo").err
    golem_run("ask", "-c", "-m", MODELS[kind], "-T", "fs", "again")
    turn = server.requests[-1]
    assert not any(t.startswith(SUMMARY_MARK) for t in texts(turn))
    assert "turn 0" in texts(turn)
    # The compaction sent the conversation's own prefix: a turn's instructions and tools.
    assert system_of(compaction) == system_of(turn) and tools_of(compaction) == tools_of(turn)
    assert system_of(turn) is not None and "read_file" in tools_of(turn)
    assert golem_run("compact", cid, "--undo", code=1).err.startswith("golem: nothing to undo")


def test_a_damaged_summaries_file_sends_the_conversation_as_never_compacted(
    golem_run, server: ProviderServer, home: Path
) -> None:
    cid = write_conversation(home, turns(5))
    golem_run("compact", cid, "--keep", "2")
    (home / "conversations" / f"{cid}.summaries.json").write_bytes(b"\x00garbage")
    done = golem_run("ask", "-c", "next")
    assert texts(server.requests[-1])[0] == "turn 0"
    (line,) = [line for line in done.err.splitlines() if "summaries" in line]
    assert line.startswith("golem: the summaries of") and "as if it had never been compacted" in line


def test_nothing_to_compact_is_one_line(golem_run, server: ProviderServer, home: Path) -> None:
    write_conversation(home, ["only turn"])
    done = golem_run("compact", "last", code=1)
    assert done.err.startswith("golem: nothing to compact yet") and len(done.err.splitlines()) <= 2


def test_a_fork_after_the_point_carries_the_summary_and_one_before_it_none(
    golem_run, server: ProviderServer, home: Path
) -> None:
    cid = write_conversation(home, turns(5))
    golem_run("compact", cid, "--keep", "4")  # covers messages 1-6
    golem_run("fork", cid, "--at", "8", "--no-chat")
    golem_run("fork", cid, "--at", "4", "--no-chat")
    metas = [json.loads(p.read_text()) for p in (home / "conversations").glob("*.meta.json")]
    forks = {m["fork_at"]: m["id"] for m in metas if m.get("parent") == cid}
    after, before = forks[8], forks[4]
    assert (home / "conversations" / f"{after}.summaries.json").exists()
    assert not (home / "conversations" / f"{before}.summaries.json").exists()
    golem_run("ask", "--cid", after, "in the fork")
    sent = texts(server.requests[-1])
    assert sent[0].startswith(SUMMARY_MARK) and sent[1:] == ["turn 3", "echo: turn 3", "in the fork"]
    golem_run("ask", "--cid", before, "in the other")
    assert texts(server.requests[-1]) == ["turn 0", "echo: turn 0", "turn 1", "echo: turn 1", "in the other"]


def test_the_repl_compacts_marks_the_history_shows_edits_and_undoes(spawn, server: ProviderServer, home: Path) -> None:
    editor = home / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "my own summary" > "$1"\n')
    editor.chmod(0o755)
    chat = spawn("chat", env={"EDITOR": str(editor), "VISUAL": ""})
    chat.prompt()
    for n in range(4):
        chat.say(f"turn {n}")
    server.enqueue(Scenario(reply=Reply(text="SUMMARY of the first turns")))
    out = chat.command("/compact the turns", "removes it.")
    assert "SUMMARY of the first turns" in out and "Summarised messages 1-2 (the newest 6 kept verbatim)" in out
    assert texts(server.requests[-1])[-1].endswith("Focus on: the turns")
    shown = chat.command("/history", "turn 3")  # every message still shown, the summary's start marked
    assert "── summary of messages 1-2 (compact, local:echo; sent instead of them) ──" in shown, "/history: the mark"
    assert shown.index("summary of messages 1-2") < shown.index("turn 1") and "turn 0" in shown, "/history: the place"
    chat.say("five")
    sent = texts(server.requests[-1])
    assert sent[0].startswith(SUMMARY_MARK) and sent[0].endswith("SUMMARY of the first turns")
    assert sent[1:] == ["turn 1", "echo: turn 1", "turn 2", "echo: turn 2", "turn 3", "echo: turn 3", "five"]
    assert "Summary of messages 1-2 (compact, local:echo)" in chat.command("/summary", "/compact undo removes it.")
    assert "is now the text you wrote" in chat.command("/summary edit", "you wrote.")
    chat.say("six")
    assert texts(server.requests[-1])[0].endswith("my own summary")
    assert "Removed the summary of messages 1-2" in chat.command("/compact undo", "allows\\).")
    chat.say("seven")
    assert texts(server.requests[-1])[0] == "turn 0"
    chat.leave()


def test_compact_model_from_the_config_writes_the_summary(golem_run, server: ProviderServer, home: Path) -> None:
    write_conversation(home, turns(4))
    config = home / "config.toml"
    config.write_text('compact_model = "claude:claude-test"\n' + config.read_text())
    done = golem_run("compact", "last", "--keep", "2")
    assert server.requests[-1].path.endswith("/messages") and "with claude:claude-test" in done.err
    done = golem_run("compact", "last", "--keep", "1", "-m", "local:echo")  # -m wins
    assert server.requests[-1].path.endswith("/chat/completions") and "with local:echo" in done.err


def test_show_and_export_mark_where_each_summary_starts(golem_run, server: ProviderServer, home: Path) -> None:
    write_conversation(home, turns(5))
    server.enqueue(Scenario(reply=Reply(text="FIRST summary")))
    golem_run("compact", "last", "--keep", "6")  # messages 1-4
    server.enqueue(Scenario(reply=Reply(text="SECOND summary")))
    golem_run("compact", "last", "--keep", "2")  # messages 1-8
    shown = golem_run("show", "last").out.splitlines()
    first = shown.index("── summary of messages 1-4 (compact, local:echo; an earlier one, replaced) ──")
    second = shown.index("── summary of messages 1-8 (compact, local:echo; sent instead of them) ──")
    assert shown[first + 2] == "--- [5] user" and shown[second + 2] == "--- [9] user"
    assert "--- [1] user" in shown  # every message is still shown
    exported = golem_run("export", "last", "--format", "markdown").out
    assert "> **summary of messages 1-8 (compact, local:echo; sent instead of them)**" in exported
    assert exported.index("SECOND summary") < exported.index("## 9. User")
    assert "## 1. User" in exported


def test_the_note_reports_the_cache_read_share_and_ignores_a_tool_call(
    golem_run, server: ProviderServer, home: Path
) -> None:
    """On a server that reports cache reads, the compaction's line says what share of its input
    was one (the conversation's tools and instructions, read back); a tool call in its answer
    is not run, only counted."""
    from tests.providerserver import PromptCache

    server.prompt_cache = PromptCache(min_tokens=64)
    project(home)
    long_system = " ".join(f"Rule {n}: be exact and cite the file you read." for n in range(60))
    # three turns written, the fourth asked: its request leaves the prefix in the server's cache
    write_conversation(home, turns(3), model=MODELS["anthropic"], system=long_system, tools=["fs"])
    golem_run("ask", "-c", "-m", MODELS["anthropic"], "-T", "fs", "turn 3")
    call = ToolCallSpec("toolu_x", "read_file", '{"path": "notes.txt"}')
    server.enqueue(Scenario(reply=Reply(text="SUMMARY with a call", tool_calls=[call])))
    done = golem_run("compact", "last", "--keep", "2", "-T", "fs")
    assert "% of it a cache read" in done.err and "1 tool call(s) in its answer ignored" in done.err
    assert done.out.strip() == "SUMMARY with a call"
    assert len([r for r in server.requests if "compaction request" in r.body.decode()]) == 1  # no tool round


def price(home: Path, table: str) -> None:
    config = home / "config.toml"
    config.write_text(config.read_text() + f'\n[models."local:echo"]\n{table}\n')


def test_a_compaction_is_a_run_of_kind_compact_in_the_ledger_with_its_cost(
    golem_run, server: ProviderServer, home: Path
) -> None:
    price(home, "price = { input = 1.0, output = 2.0 }")
    cid = write_conversation(home, turns(4))
    done = golem_run("compact", cid, "--keep", "2")
    records = [json.loads(line) for line in (home / "conversations" / f"{cid}.runs.jsonl").read_text().splitlines()]
    compact = [r for r in records if r.get("kind") == "compact"]
    assert len(compact) == 1 and compact[0]["model"] == "local:echo"
    (ended,) = [r for r in records if r["key"] == compact[0]["key"] and "ended" in r]
    assert ended["usage"]["input_tokens"] > 0 and ended["cost"] > 0 and not ended["failed"]
    summary = json.loads((home / "conversations" / f"{cid}.summaries.json").read_text())["summaries"][-1]
    assert summary["compact_run"] == compact[0]["key"]
    assert "$" in done.err  # the line says what it cost
    usage = golem_run("usage", "--json").out
    assert json.loads(usage)  # golem usage counts it with the turns


def test_a_compaction_of_more_than_a_few_cents_says_its_cost_first(
    golem_run, server: ProviderServer, home: Path
) -> None:
    price(home, "price = { input = 100000.0, output = 1.0 }")
    write_conversation(home, turns(4))
    done = golem_run("compact", "last", "--keep", "2")
    first = done.err.splitlines()[0]
    assert first.startswith("This compaction sends about") and "at the input price" in first


def test_context_shows_the_summary(golem_run, server: ProviderServer, home: Path) -> None:
    write_conversation(home, turns(5))
    golem_run("compact", "last", "--keep", "2")
    out = golem_run("context", "last").out
    assert "summary of messages 1-8 (compact)" in out and "history sent (2 messages)" in out
    found = json.loads(golem_run("context", "last", "--json").out)
    assert found["summary"]["covers"] == 8 and found["summary"]["tokens"] > 0 and found["history"]["messages"] == 2


def test_auto_compact_compacts_before_a_request_past_its_share(golem_run, server: ProviderServer, home: Path) -> None:
    price(home, "context_window = 400")
    config = home / "config.toml"
    config.write_text("auto_compact = 0.5\n" + config.read_text())
    # Turns 0-3 fit the share (written as files); asks 4 and 5 each pass it and compact first.
    prompt = [f"turn {n} " + "words " * 20 for n in range(6)]
    write_conversation(home, prompt[:4])
    said = []
    for n in (4, 5):
        done = golem_run("ask", "-c", prompt[n])
        said.append([line for line in done.err.splitlines() if "of the context window" in line])
    assert all(said), said
    assert said[0][0].startswith("golem: the next request was about") and "compacted messages 1-2 first" in said[0][0]
    assert any(
        blocks(r)[0].startswith(SUMMARY_MARK) for r in server.requests if not blocks(r)[-1].startswith(COMPACT_MARK)
    )


def test_compact_sends_the_tool_servers_tools_the_conversation_uses(
    golem_run, server: ProviderServer, home: Path
) -> None:
    from tests.mcpservers import url_toml
    from tests.mcpservers.threaded import http_demo

    with http_demo() as url:
        config = home / "config.toml"
        config.write_text(config.read_text() + url_toml("demo", url))
        golem_run("ask", "-T", "demo", "turn 0")
        for n in range(1, 4):
            golem_run("ask", "-c", f"turn {n}")  # the conversation's tools, as kept with it
        turn = server.requests[-1]
        server.enqueue(Scenario(reply=Reply(text="SUMMARY: four turns")))
        assert golem_run("compact", "last", "--keep", "2").out.strip() == "SUMMARY: four turns"
    compaction = server.requests[-1]
    assert texts(compaction)[-1].startswith(COMPACT_MARK)
    assert "demo__echo" in tools_of(turn)
    assert tools_of(compaction) == tools_of(turn)  # the same prefix: the provider's cache serves it
