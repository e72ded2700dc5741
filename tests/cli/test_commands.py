"""list, show, export, import and delete through the console script."""

from __future__ import annotations

import json
import os
import stat

from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import INTERRUPTED, Message, Part, ThinkingBlock, ToolCall, mark_interrupted
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error

RUN = "01a028b2-c680-71b2-83d4-e5f60718293a"


def transcript(cid: str = "") -> list[Message]:
    return [
        Message("system", "Answer briefly."),
        Message("user", "Roll a die and check the mail", parts=[Part("image", url="https://example.com/cat.png")], run_id=RUN, conversation_id=cid),
        Message(
            "assistant",
            "Let me **check**.",
            tool_calls=[ToolCall("t1", "roll_dice", '{"sides": 6}'), ToolCall("t2", "archive", "{}"), ToolCall("t3", "fetch", '{"url":')],
            thinking=[ThinkingBlock("Two tasks.", "sig")],
            run_id=RUN,
            conversation_id=cid,
        ),
        Message("tool", "4", tool_call_id="t1", tool_name="roll_dice", run_id=RUN, conversation_id=cid),
        Message("tool", "mailbox is read-only", tool_call_id="t2", tool_name="archive", failed=True, run_id=RUN, conversation_id=cid),
        Message("tool", INTERRUPTED, tool_call_id="t3", tool_name="fetch"),
        Message("assistant", mark_interrupted("You rolled a 4 and"), run_id=RUN, conversation_id=cid),
    ]  # fmt: skip


def test_list_show_export_round_trip(home, golem_main, tmp_path):
    store = Store(home)
    cid = store.create(transcript(), title="Dice and mail", model="openai:gpt-4o-mini")
    other = store.create([Message("user", "second conversation")])

    listed = golem_main("list")
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(other[:8]) and "second conversation" in lines[0]
    assert "Dice and mail" in lines[1] and "openai:gpt-4o-mini" in lines[1] and " 7 " in lines[1]

    as_json = json.loads(golem_main("list", "--json").out)
    assert [c["id"] for c in as_json] == [other, cid]
    assert as_json[1] | {"created": None, "updated": None} == {
        "id": cid, "title": "Dice and mail", "model": "openai:gpt-4o-mini", "messages": 7, "created": None,
        "updated": None, "parent": None, "forkAt": None, "problem": None,
    }  # fmt: skip

    shown = golem_main("show", cid[:8] if cid[:8] != other[:8] else cid)
    assert shown.code == 0, shown.err
    out = shown.out
    for expected in (
        "Dice and mail", f"id {cid}", "6 messages and a system prompt", "model openai:gpt-4o-mini",
        "Answer briefly.", "[image: https://example.com/cat.png]", "thinking: Two tasks.",
        "Let me **check**.", "→ call roll_dice [t1]", '"sides": 6', "← result roll_dice [t1]",
        "✗ failed archive [t2]", "mailbox is read-only",
        "→ call fetch [t3] (arguments are not one JSON object (cut off?))",
        "⚠ no result fetch [t3]", "interrupted; no result was recorded", "You rolled a 4 and", "⚠ reply interrupted",
    ):  # fmt: skip
        assert expected in out, expected
    assert "before it ran" not in out  # golem cannot know: a call stopped by Ctrl-C may have run
    assert "[reply interrupted]" not in out and RUN not in out
    assert RUN in golem_main("show", cid, "--run-ids").out

    shown_json = golem_main("show", cid, "--json")
    doc = json.loads(shown_json.out)
    assert doc["id"] == cid and doc["meta"]["title"] == "Dice and mail" and len(doc["messages"]) == 7
    # the messages are embedded exactly as stored (Go-readable bytes)
    assert shown_json.raw.endswith(b', "messages": ' + store.messages_path(cid).read_bytes() + b"}\n")

    exported = golem_main("export", cid, "--format", "json")
    assert exported.raw == dump_history(store.load(cid)) == store.messages_path(cid).read_bytes()
    target = tmp_path / "out" / "conv.md"
    target.parent.mkdir()
    md = golem_main("export", cid, "--format", "markdown", "-o", str(target))
    assert md.code == 0 and md.out == "" and "exported 7 messages" in md.err
    text = target.read_text()
    assert text.startswith("# Dice and mail\n") and "**Tool failed** `archive` (`t2`)" in text
    assert "```json\n{\n  \"sides\": 6\n}\n```" in text and "**⚠ Reply interrupted.**" in text
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_markdown_fences_outgrow_backticks_in_content(home, golem_main):
    store = Store(home)
    cid = store.create([Message("tool", "```\ncode\n````", tool_call_id="x", tool_name="t")])
    text = golem_main("export", cid, "-f", "markdown").out
    assert "`````\n```\ncode\n````\n`````" in text


def test_import_sanitizes_reports_and_keeps_the_files_own_id(home, golem_main, tmp_path):
    cid = "01a028b1-dc20-7edc-ba98-765432100123"
    source = tmp_path / "shared.json"
    history = transcript(cid) + [Message("user", "see", parts=[Part("document", url="file:///etc/passwd")])]
    source.write_bytes(dump_history(history))

    result = golem_main("import", str(source))
    assert result.code == 0, result.err
    assert f"imported 7 messages as {cid}" in result.out
    assert "system       system prompt" in result.out
    assert 'unsafe part  message 7 (user)' in result.out and 'scheme "file"' in result.out
    assert "truncated    message 2 (assistant)" in result.out
    stored = Store(home).load(cid)
    assert [m.role for m in stored][:1] == ["user"] and all(m.role != "system" for m in stored)

    again = golem_main("import", str(source), "--json")
    doc = json.loads(again.out)
    assert doc["id"] != cid and doc["trusted"] is False
    assert doc["report"]["SystemPrompts"] == 1
    assert doc["report"]["UnsafeParts"] == [{"MessageIndex": 7, "Kind": "document", "Scheme": "file"}]
    assert "already stored" in again.err

    trusted = golem_main("import", str(source), "--trust", "--title", "as is", "--json")
    tdoc = json.loads(trusted.out)
    assert tdoc["report"] is None and tdoc["findings"] == [] and tdoc["changed"] is False
    assert Store(home).load(tdoc["id"]) == load_history(dump_history(history))
    assert Store(home).meta(tdoc["id"]).title == "as is"


def test_import_uses_the_file_name_id_of_a_copied_conversation(home, golem_main, tmp_path):
    cid = "01a028b1-dc20-7edc-ba98-765432100999"
    source = tmp_path / f"{cid}.json"
    source.write_bytes(dump_history([Message("user", "hello")]))
    assert golem_main("import", str(source)).code == 0
    assert Store(home).load(cid) == [Message("user", "hello")]


def test_delete_asks_unless_yes(home, golem_main):
    store = Store(home)
    cid = store.create([Message("user", "bye")])
    refused = golem_main("delete", cid)  # stdin is not a terminal: no silent deletion
    assert refused.code == 2 and "--yes" in refused.err
    assert store.exists(cid)
    done = golem_main("delete", cid[:13], "--yes", "--json")
    assert done.code == 0 and json.loads(done.out) == {"deleted": cid, "forks": [], "restore": f"golem restore {cid}"}
    assert not store.exists(cid)
    gone = golem_main("show", cid)
    assert gone.code == 1
    assert_one_line_error(gone)


def test_delete_confirmation_prompt(home, golem_in, monkeypatch):
    store = Store(home)
    cid = store.create([Message("user", "bye")])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    answers = iter(["n", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert golem_in("delete", cid).code == 1 and store.exists(cid)
    assert golem_in("delete", cid).code == 0 and not store.exists(cid)


def test_deleting_a_parent_says_so_and_asks(home, golem_in, monkeypatch):
    store = Store(home)
    parent = store.create([Message("user", "root"), Message("assistant", "a")])
    forks = sorted(store.fork(parent) for _ in range(2))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "y")
    done = golem_in("delete", parent)
    assert done.code == 0
    assert "its 2 forks will keep their messages but lose their parent" in asked[0]
    assert "`golem restore` brings it back" in done.err
    assert all(store.exists(f) for f in forks)


def test_deleted_conversations_can_be_restored(home, golem_main):
    store = Store(home)
    first = store.create([Message("user", "first")], title="First")
    second = store.create([Message("user", "second")])
    assert golem_main("delete", first, "--yes").code == 0
    assert golem_main("delete", second, "--yes").code == 0
    assert golem_main("list", "--json").out.strip() == "[]"
    done = golem_main("restore")  # the most recently deleted
    assert done.code == 0 and done.out == f"restored {second}\n"
    done = golem_main("restore", first[-4:], "--json")
    assert json.loads(done.out) == {"restored": first}
    assert store.meta(first).title == "First" and store.load(first) == [Message("user", "first")]
    assert {row["id"] for row in json.loads(golem_main("list", "--json").out)} == {first, second}
    empty = golem_main("restore")
    assert empty.code == 1 and "the trash is empty" in empty.err


def test_list_tree_shows_lineage(home, golem_main):
    store = Store(home)
    root = store.create([Message("user", "root"), Message("assistant", "a"), Message("user", "b")])
    child = store.fork(root, 2)
    grandchild = store.fork(child, 1)
    lone = store.create([Message("user", "lonely")])
    rows = json.loads(golem_main("list", "--tree", "--json").out)
    assert [(r["id"], r["depth"]) for r in rows] == [(lone, 0), (root, 0), (child, 1), (grandchild, 2)]
    assert rows[2]["parent"] == root and rows[2]["forkAt"] == 2
    plain = golem_main("list", "--tree").out.splitlines()
    assert "└ @2" in plain[2] and "└ @1" in plain[3]
    store.delete(root)  # a fork whose parent is gone becomes a root
    rows = json.loads(golem_main("list", "--tree", "--json").out)
    assert {(r["id"], r["depth"]) for r in rows} == {(lone, 0), (child, 0), (grandchild, 1)}


def test_list_limit_and_notes(home, golem_main):
    store = Store(home)
    for n in range(5):
        store.create([Message("user", f"c{n}")])
    (store.conversations_dir / "README.txt").write_text("hi")
    result = golem_main("list", "--limit", "2")
    assert len(result.out.splitlines()) == 2
    assert "2 of 5 conversations shown" in result.err
    assert "README.txt" in result.err
    assert len(golem_main("list", "-n", "0").out.splitlines()) == 5


def test_empty_store(home, golem_main):
    result = golem_main("list")
    assert result.code == 0 and result.out == ""
    assert result.err == "no conversations yet; start one with `golem chat` (or `golem ask PROMPT`)\n"
    assert json.loads(golem_main("list", "--json").out) == []
    last = golem_main("show", "last")
    assert last.code == 1 and "no conversations yet" in last.err
    assert not home.exists()


def test_styled_output_honours_no_color(home, golem_main):
    store = Store(home)
    cid = store.create(transcript(), title="Dice")
    coloured = golem_main("show", cid, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in coloured.out
    plain = golem_main("show", cid, env={"GOLEM_FORCE_TERMINAL": "1", "NO_COLOR": "1"})
    assert "\x1b[3" not in plain.out and "check" in plain.out  # rendered, no colour codes
    assert "\x1b[" not in golem_main("list").out  # a pipe gets plain text
    table = golem_main("list", env={"GOLEM_FORCE_TERMINAL": "1", "NO_COLOR": "1"})
    assert "Title" in table.out and "Dice" in table.out


def test_help_reads_well(home, golem_main):
    result = golem_main("--help")
    assert result.code == 0
    for command in ("list", "show", "delete", "normalize", "export", "import"):
        assert f"  {command} " in result.out
    assert "Traceback" not in result.err
    assert golem_main().code in (0, 2)  # no arguments: help
    assert golem_main("--version").out.startswith("golem ")
    assert golem_main("--debug", "--version").out.startswith("golem ")
