"""The sidecar scheme (store/sidecars/): versioned documents and append-only logs beside the
history file, bounded readers that skip what they do not understand, writes that never replace a
file they did not read, and a conversation's sidecars moved, removed and forked as one unit."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest
from golem_cli.core.messages import Message
from golem_cli.store import sidecars
from golem_cli.store import store as store_module
from golem_cli.store.files import UnreadableFile
from golem_cli.store.meta import ConversationMeta, decode_meta, encode_meta, merge_meta
from golem_cli.store.sidecars import (
    RUNS,
    SUMMARIES,
    Appender,
    SidecarChanged,
    Summaries,
    Summary,
    current_sig,
    encode_record,
    read_document,
    read_log,
    write_document,
)


class Run(msgspec.Struct, kw_only=True):
    v: int = 1
    key: str
    run: str = ""
    event: str = ""


def line(key: str, run: str = "", event: str = "started") -> bytes:
    return encode_record(Run(key=key, run=run or key, event=event))


def replace_by_rename(path, data: bytes) -> None:
    """What a sync tool or another program does: write a new file and rename it over."""
    tmp = path.with_name(path.name + ".other")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_log_reader_skips_a_torn_line_a_bad_line_and_a_newer_version(tmp_path):
    path = tmp_path / "x.runs.jsonl"
    newer = b'{"v":2,"key":"r3"}'
    path.write_bytes(line("r1") + b"\nnot json\n" + newer + b"\n" + b'{"key":"no version"}\n' + line("r2")[:-3])
    read = read_log(path, RUNS)
    assert [e.key for e in read.envelopes] == ["r1"]
    Appender(path, RUNS).append([line("r4")])  # the torn line is ended first: it stays one skipped line
    assert [e.key for e in read_log(path, RUNS).envelopes] == ["r1", "r4"]


def test_a_log_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "f.runs.jsonl"
    os.mkfifo(fifo)
    assert read_log(fifo, RUNS).lines == []
    with pytest.raises(UnreadableFile):
        Appender(fifo, RUNS).append([line("r1")])
    link = tmp_path / "l.runs.jsonl"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnreadableFile):
        Appender(link, RUNS).append([line("r1")])
    assert not (tmp_path / "elsewhere").exists()


def test_a_log_larger_than_its_limit_reads_as_nothing(tmp_path, monkeypatch):
    path = tmp_path / "x.runs.jsonl"
    path.write_bytes(line("r1") + b"\n" + b" " * 200 + b"\n")
    small = sidecars.Kind(name="runs", log=True, limit=100)
    assert read_log(path, small).lines == []


def test_a_record_without_a_key_or_version_is_not_written():
    with pytest.raises(ValueError):
        encode_record(Run(key=""))
    with pytest.raises(ValueError):
        encode_record(Run(key="k", v=0))


def test_records_of_a_log_replaced_behind_the_appender_are_appended_again(tmp_path):
    path = tmp_path / "x.runs.jsonl"
    ours = Appender(path, RUNS)
    ours.append([line("r1"), line("r1", event="ended")])
    replace_by_rename(path, line("theirs") + b"\n")  # a sync tool brought another machine's copy
    ours.append([line("r2")])
    keys = [(e.key) for e in read_log(path, RUNS).envelopes]
    assert keys == ["theirs", "r1", "r1", "r2"]
    ours.append([line("r3")])  # same file as last time: nothing appended twice
    assert [e.key for e in read_log(path, RUNS).envelopes] == ["theirs", "r1", "r1", "r2", "r3"]


def test_a_document_is_written_only_over_the_file_that_was_read(tmp_path):
    path = tmp_path / "x.summaries.json"
    doc = Summaries(summaries=[Summary(run="r1", through=3, text="so far")])
    sig = write_document(path, msgspec.json.encode(doc), expected=None, durable=False)
    assert sig == current_sig(path)
    assert read_document(path, SUMMARIES, Summaries) == (doc, sig)
    with pytest.raises(SidecarChanged):  # expected none, found one
        write_document(path, b"{}", expected=None, durable=False)
    replace_by_rename(path, msgspec.json.encode(Summaries()))
    with pytest.raises(SidecarChanged):
        write_document(path, b"{}", expected=sig, durable=False)
    assert read_document(path, SUMMARIES, Summaries)[0] == Summaries()
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []


def test_a_document_of_a_newer_version_or_another_shape_reads_as_none(tmp_path):
    path = tmp_path / "x.summaries.json"
    path.write_bytes(b'{"v":2,"summaries":[]}')
    assert read_document(path, SUMMARIES, Summaries)[0] is None
    path.write_bytes(b'{"v":1,"summaries":7}')
    assert read_document(path, SUMMARIES, Summaries)[0] is None
    path.write_bytes(b'{"v":1,"summaries":[],"from_the_future":true}')
    assert read_document(path, SUMMARIES, Summaries)[0] == Summaries()
    assert decode_meta(b'{"v":2,"id":"x"}') is None
    assert decode_meta(b'{"id":"x","title":"before versions"}').title == "before versions"
    assert encode_meta(ConversationMeta(id="x")).startswith(b'{"v":1,')


def test_merge_meta_keeps_theirs_unless_both_changed_then_the_newest():
    base = ConversationMeta(id="x", title="old", model="m:1", messages=3, changed=10.0)
    ours = msgspec.structs.replace(base, messages=5, size=50)  # a save: only derived fields
    theirs = msgspec.structs.replace(base, title="theirs", changed=20.0)
    merged, decided = merge_meta(base, ours, theirs)
    assert (merged.title, merged.messages, decided) == ("theirs", 5, [])
    ours = msgspec.structs.replace(base, title="ours", changed=30.0)
    merged, decided = merge_meta(base, ours, theirs)
    assert (merged.title, decided) == ("ours", ["title"])
    older = msgspec.structs.replace(ours, changed=15.0)
    merged, decided = merge_meta(base, older, theirs)
    assert (merged.title, decided, merged.changed) == ("theirs", ["title"], 20.0)


def test_a_title_changed_elsewhere_while_a_save_writes_the_metadata_is_kept(store, monkeypatch):
    cid = store.create([Message("user", "hi")], title="mine")
    real = sidecars.current_sig

    def sync_tool_meanwhile(path):  # the check before the rename finds their file
        if path == store.meta_path(cid) and not done:
            done.append(1)
            theirs = msgspec.structs.replace(store.meta(cid), title="from the other machine", changed=9e9)
            replace_by_rename(path, encode_meta(theirs))
        return real(path)

    done: list[int] = []
    monkeypatch.setattr(sidecars, "current_sig", sync_tool_meanwhile)
    store.save(cid, [Message("user", "hi"), Message("assistant", "hello")])
    meta = store.meta(cid)
    assert (meta.title, meta.messages) == ("from the other machine", 2)
    assert store.notices == []  # only they changed the title: nothing to decide


def test_a_title_both_changed_keeps_the_newest_and_says_so(store, monkeypatch):
    cid = store.create([Message("user", "hi")])
    real = sidecars.current_sig
    done: list[int] = []

    def sync_tool_meanwhile(path):
        if path == store.meta_path(cid) and not done:
            done.append(1)
            theirs = msgspec.structs.replace(store.meta(cid), title="older elsewhere", changed=1.0)
            replace_by_rename(path, encode_meta(theirs))
        return real(path)

    monkeypatch.setattr(sidecars, "current_sig", sync_tool_meanwhile)
    store.set_title(cid, "set here")
    assert store.meta(cid).title == "set here"
    assert store.notices == [f"conversation {cid}: its title was also changed elsewhere; kept the newest, 'set here'"]


def _with_every_sidecar(store, cid):
    for name, data in (
        (f"{cid}.runs.jsonl", line("r1") + b"\n"),
        (f"{cid}.summaries.json", b'{"v":1,"summaries":[]}'),
        (f"{cid}.future-kind.json", b"{}"),  # a newer golem's kind: still part of the conversation
    ):
        (store.conversations_dir / name).write_bytes(data)
    return sorted(sidecars.names_of(store.conversations_dir, cid))


def test_delete_removes_every_sidecar(store):
    cid = store.create([Message("user", "hi")])
    other = store.create([Message("user", "other")])
    _with_every_sidecar(store, other)
    assert len(_with_every_sidecar(store, cid)) == 4
    store.delete(cid)
    assert sidecars.names_of(store.conversations_dir, cid) == []
    assert len(sidecars.names_of(store.conversations_dir, other)) == 4


def _checkpoint(store, cid: str, tmp: Path) -> Path:
    store.checkpoints.keep(cid, run="r1", call="c1", path=tmp / "f.txt", before=b"before", after=b"after")
    return store.checkpoints.root / cid


def test_a_conversation_gone_for_good_takes_its_checkpoints_and_one_in_the_trash_keeps_them(
    store, tmp_path, monkeypatch
):
    gone, trashed, other = (store.create([Message("user", w)]) for w in ("gone", "trashed", "other"))
    places = {cid: _checkpoint(store, cid, tmp_path) for cid in (gone, trashed, other)}
    store.delete(gone)
    store.discard(trashed)
    assert not places[gone].exists() and places[trashed].exists() and places[other].exists()
    monkeypatch.setattr(store_module, "TRASH_DAYS", -1)  # the trash's time is up at the next discard
    store.discard(other)
    assert not places[trashed].exists()


def test_trash_and_restore_move_every_sidecar(store):
    cid = store.create([Message("user", "hi")])
    names = _with_every_sidecar(store, cid)
    store.discard(cid)
    assert sidecars.names_of(store.conversations_dir, cid) == []
    assert sidecars.names_of(store.trash_dir, cid) == names
    os.unlink(store.trash_dir / f"{cid}.future-kind.json")
    os.mkfifo(store.trash_dir / f"{cid}.future-kind.json")  # planted: not brought back
    assert store.restore(cid) == cid
    assert sidecars.names_of(store.conversations_dir, cid) == [n for n in names if "future" not in n]
    assert read_log(store.sidecar_path(cid, RUNS), RUNS).lines == [line("r1")]


def test_sidecars_are_not_foreign_files_in_a_listing(store):
    cid = store.create([Message("user", "hi")])
    _with_every_sidecar(store, cid)
    listing = store.listing()
    assert listing.foreign == [] and [c.id for c in listing.conversations] == [cid]


def test_a_fork_copies_the_runs_and_summaries_of_what_it_copies(store):
    history = [
        Message("user", "one", run_id="r1"),
        Message("assistant", "1", run_id="r1"),
        Message("user", "two", run_id="r2"),
        Message("assistant", "2", run_id="r2"),
    ]
    cid = store.create(history)
    log = Appender(store.sidecar_path(cid, RUNS), RUNS)
    log.append([line("r1"), line("c1", run="r1", event="tool-started"), line("r2"), line("r1", event="ended")])
    doc = Summaries(summaries=[Summary(run="r1", through=1), Summary(run="r2", through=3)])
    write_document(store.sidecar_path(cid, SUMMARIES), msgspec.json.encode(doc), expected=None, durable=False)
    fork = store.fork(cid, at=2)
    assert read_log(store.sidecar_path(fork, RUNS), RUNS).lines == [
        line("r1"),
        line("c1", run="r1", event="tool-started"),
        line("r1", event="ended"),
    ]
    assert read_document(store.sidecar_path(fork, SUMMARIES), SUMMARIES, Summaries)[0] == Summaries(
        summaries=[Summary(run="r1", through=1)]
    )
    plain = store.fork(store.create([Message("user", "x")]))
    assert sidecars.names_of(store.conversations_dir, plain) == [f"{plain}.meta.json"]


# --- the chat's settings in the meta document (issue 24 bug 3) -------------------------------------


def test_chat_settings_are_a_chosen_field_kept_through_saves_rebuilds_and_forks(tmp_path):
    from golem_cli.store import Store
    from golem_cli.store.meta import ChatSettings, read_entry, signature

    store = Store(tmp_path)
    cid = store.create([Message("user", "hi")])
    settings = ChatSettings(tools=["fs"], options={"temperature": 0.2, "stop": ["END"]}, max_messages=7)
    store.set_settings(cid, settings)
    store.save(cid, [Message("user", "hi"), Message("assistant", "hello")])
    assert store.meta(cid).settings == settings
    path = store.messages_path(cid)
    path.write_bytes(path.read_bytes().replace(b"hello", b"hello there"))  # another program: the sidecar is stale
    entry, _ = read_entry(store.conversations_dir, cid, signature(path.stat()))
    assert entry.meta.settings == settings and entry.meta.messages == 2
    assert store.meta(store.fork(cid)).settings == settings
    assert b'"settings"' not in path.read_bytes()  # beside the history, never in it
    base = ConversationMeta(id=cid)
    theirs = msgspec.structs.replace(base, settings=settings, changed=5.0)
    merged, decided = merge_meta(base, msgspec.structs.replace(base, messages=3), theirs)
    assert merged.settings == settings and decided == []
    assert decode_meta(encode_meta(merged)) == merged
