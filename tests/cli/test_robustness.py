"""Corrupt, empty, huge, non-UTF-8 and non-array files; path-like IDs; two processes on one
conversation — through the commands people run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from golem_cli.core.codec.history import dump_history
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error

BAD_FILES = {
    "empty": (b"", "line 1, column 1"),
    "object": (b'{"role":"user"}', "JSON array"),
    "numbers": (b"[1,2,3]", "message 0 must be an object"),
    "not-utf8": (b"\xff\xfe\x00[", "line 1, column 1"),
    "truncated": (b'[{"role":"user","content":"hel', "line 1"),
    "wrong-type": (b'[{"role":"user","content":5}]', 'field "content"'),
    "binary": (bytes(range(256)), "invalid JSON"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_unreadable_history_file_exits_2_naming_the_position(golem_main, tmp_path, name):
    data, fragment = BAD_FILES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(data)
    for args in (["normalize", str(path)], ["normalize", str(path), "--sanitize", "--json"], ["import", str(path)]):
        result = golem_main(*args)
        assert result.code == 2, (args, result.err)
        assert_one_line_error(result)
        assert str(path) in result.err and fragment in result.err


def test_corrupt_stored_conversations_never_crash(home, golem_main):
    store = Store(home)
    good = store.create([Message("user", "fine")], title="good one")
    bad = {}
    for n, (name, (data, _)) in enumerate(sorted(BAD_FILES.items())):
        cid = f"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a{n:02x}"
        store.messages_path(cid).write_bytes(data)
        bad[cid] = name
    listed = golem_main("list", "--limit", "0")
    assert listed.code == 0 and "Traceback" not in listed.err
    assert "good one" in listed.out
    # issue 8: each unreadable file is skipped with one warning line naming it
    assert not any(cid[:13] in listed.out for cid in bad)
    skipped = [line for line in listed.err.splitlines() if line.startswith("skipped ")]
    assert len(skipped) == len(bad) and all(any(str(store.messages_path(cid)) in line for line in skipped) for cid in bad)
    rows = {r["id"]: r for r in json.loads(golem_main("list", "--json", "--limit", "0").out)}
    assert rows[good]["problem"] is None and all(rows[cid]["problem"] for cid in bad)
    for cid in bad:
        for args in (["show", cid], ["export", cid], ["normalize", cid]):
            result = golem_main(*args)
            assert result.code == 2, (args, result.err)
            assert_one_line_error(result)
            if args[0] == "show":
                assert "golem normalize" in result.err and str(store.messages_path(cid)) in result.err
    assert golem_main("show", good).code == 0
    doomed = next(iter(bad))
    assert golem_main("delete", doomed, "--yes").code == 0  # an unreadable conversation can be deleted
    assert not store.messages_path(doomed).exists()


def test_non_utf8_inside_strings_reads_like_go(golem_main, tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'[{"role":"user","content":"caf\xe9"}]')
    result = golem_main("normalize", str(path), "--json")
    assert result.code == 0 and json.loads(result.out)["changed"] is False
    imported = golem_main("import", str(path), "--json")
    assert imported.code == 0
    cid = json.loads(imported.out)["id"]
    assert "caf\ufffd" in golem_main("show", cid).out  # replaced as Go's decoder does


def test_huge_history(home, golem_main, tmp_path):
    big = [Message("user" if i % 2 == 0 else "assistant", f"{i} " + "lorem ipsum " * 80) for i in range(12000)]
    path = tmp_path / "huge.json"
    path.write_bytes(dump_history(big))
    assert path.stat().st_size > 10_000_000
    result = golem_main("normalize", str(path), "--json")
    assert result.code == 0 and json.loads(result.out)["messagesIn"] == 12000
    imported = golem_main("import", str(path), "--trust", "--json")
    cid = json.loads(imported.out)["id"]
    rows = json.loads(golem_main("list", "--json").out)
    assert rows[0]["id"] == cid and rows[0]["messages"] == 12000
    shown = golem_main("show", cid)
    assert shown.code == 0 and shown.out.count("--- [") == 12000


PATH_LIKE = ["../x", "/etc/passwd", "a/b", "..", "~", "abcg", "0190/../x", "x" * 50]


@pytest.mark.parametrize("ref", PATH_LIKE)
def test_path_like_ids_are_refused(golem_main, home, ref):
    for args in (["show", ref], ["export", ref], ["delete", ref, "--yes"]):
        result = golem_main(*args)
        assert result.code == 2, (args, result.err)
        assert_one_line_error(result)
        assert "not a conversation ID" in result.err
    assert not home.exists()  # refused before the store was touched


def test_ambiguous_prefix_lists_candidates(home, golem_main):
    store = Store(home)
    a = store.create([], cid="0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
    b = store.create([], cid="0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c")
    result = golem_main("show", "0190a1b2")
    assert result.code == 1
    assert_one_line_error(result)
    assert a in result.err and b in result.err and "matches 2 conversations" in result.err


HOLDER = """
import sys, time
from pathlib import Path
from golem_cli.store import Store
Store(Path(sys.argv[1])).lock(sys.argv[2])
print("locked", flush=True)
time.sleep(60)
"""


def test_two_processes_on_one_conversation(home, golem):
    store = Store(home)
    broken = [Message("user", "go"), Message("assistant", tool_calls=[ToolCall("c1", "f", "{}")])]  # needs repair
    cid = store.create(broken)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home), cid], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for args in (["delete", cid, "--yes"], ["normalize", cid, "--in-place"]):
            result = golem(*args)
            assert result.code == 1, result.err
            assert_one_line_error(result)
            assert f"pid {holder.pid}" in result.err and "golem fork" in result.err
        assert store.load(cid) == broken  # untouched
        assert golem("show", cid).code == 0  # reading is never blocked
        assert golem("normalize", cid, "--check").code == 1
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        fixed = golem("normalize", cid, "--in-place")  # the dead holder's lock is taken over
        assert fixed.code == 0, fixed.err
        assert "backup:" in fixed.out
        assert golem("normalize", cid, "--check").code == 0
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()


def test_normalize_in_place_on_a_file_keeps_backups(golem_main, tmp_path):
    path = tmp_path / "h.json"
    original = b'[{"role":"user","content":"go"},{"role":"assistant","toolCalls":[{"id":"c1","name":"f","args":{}}]}]'
    path.write_bytes(original)
    path.chmod(0o644)
    first = golem_main("normalize", str(path), "--in-place")
    assert first.code == 0 and "backup:" in first.out
    assert (tmp_path / "h.json.bak").read_bytes() == original
    assert (path.stat().st_mode & 0o777) == 0o644
    assert golem_main("normalize", str(path), "--check").code == 0
    second = golem_main("normalize", str(path), "--in-place")
    assert second.code == 0 and "nothing to repair" in second.out
    assert not (tmp_path / "h.json.bak.1").exists()
    path.write_bytes(original)
    assert golem_main("normalize", str(path), "--in-place").code == 0
    assert (tmp_path / "h.json.bak.1").read_bytes() == original  # an older backup is never overwritten


def test_the_listing_offers_salvage_before_delete_for_a_damaged_conversation(home, golem_main):
    """A conversation cut off mid-write still holds complete messages: the line that skips it
    in `golem list` used to offer only `golem delete`."""
    store = Store(home)
    cid = store.create([Message("user", "keep this"), Message("assistant", "and this")])
    path = store.messages_path(cid)
    path.write_bytes(path.read_bytes()[:-30])
    listed = golem_main("list")
    (line,) = [line for line in listed.err.splitlines() if line.startswith("skipped ")]
    short = cid[-12:]  # the handle every other line prints
    assert f"`golem normalize --salvage {short} --in-place` keeps its complete messages" in line, line
    assert line.index("--salvage") < line.index(f"`golem delete {short}`")
    assert golem_main("normalize", "--salvage", short, "--in-place").code == 0
    assert [m.content for m in store.load(cid)] == ["keep this"]
