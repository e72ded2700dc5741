"""File checkpoints (store/sidecars/checkpoints.py): a revert puts back only what still holds what the tool
wrote, removes what a tool created, leaves a file changed since, and says which changes' earlier
bytes were pruned; the checkpoints stay within their bounds, oldest first."""

from __future__ import annotations

from pathlib import Path

import pytest
from golem_cli.store.sidecars import checkpoints
from golem_cli.store.sidecars.checkpoints import Checkpoints


def test_revert_puts_back_removes_and_leaves_what_changed_since(tmp_path: Path):
    cps = Checkpoints(tmp_path / "checkpoints")
    edited, created, theirs = tmp_path / "edited.txt", tmp_path / "created.txt", tmp_path / "theirs.txt"
    edited.write_bytes(b"v1\xff\n")  # any bytes come back exactly
    theirs.write_text("before\n")
    for path, new in ((edited, b"v2\n"), (edited, b"v3\n"), (created, b"new\n"), (theirs, b"tool\n")):
        cps.keep("c1", run="r1", call="x", path=path, before=path.read_bytes() if path.exists() else None, after=new)
        path.write_bytes(new)
    theirs.write_text("someone else\n")
    changes = cps.changes(["c1"], {"r1"})
    assert len(changes) == 4 and cps.changes(["c1"], {"other"}) == []
    done = cps.revert(["c1"], changes)
    assert edited.read_bytes() == b"v1\xff\n" and not created.exists() and theirs.read_text() == "someone else\n"
    assert (done.restored, done.removed, done.changed_since) == ([str(edited)], [str(created)], [str(theirs)])
    again = cps.revert(["c1"], changes)  # already as it was: nothing to do, nothing said
    assert (again.restored, again.removed, again.changed_since) == ([], [], [str(theirs)])


def test_checkpoints_are_bounded_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(checkpoints, "MAX_CONVERSATION_BYTES", 250)
    monkeypatch.setattr(checkpoints, "MAX_TOTAL_BYTES", 400)
    cps = Checkpoints(tmp_path / "checkpoints")
    target = tmp_path / "f.txt"
    cps.keep("old", run="r0", call="x", path=target, before=b"o" * 300, after=b"")  # over the bound alone: kept
    target.write_bytes(b"A" * 100)
    for i in range(4):  # A -> B -> C -> D -> E, each change's earlier bytes kept
        before, after = target.read_bytes(), bytes([66 + i]) * 100
        cps.keep("c1", run=f"r{i}", call="x", path=target, before=before, after=after)
        target.write_bytes(after)
    blobs = sorted(p.read_bytes()[:1] for p in (tmp_path / "checkpoints" / "c1" / "blobs").iterdir())
    assert blobs == [b"C", b"D"]  # the two newest fit in 250 bytes
    assert not (tmp_path / "checkpoints" / "old").exists()  # the store's bound: the older conversation went
    done = cps.revert(["c1"], cps.changes(["c1"], {"r1", "r2", "r3"}))
    assert target.read_bytes() == b"C" * 100 and done.lost == [str(target)]  # r1's earlier bytes were pruned
