"""The file scan that answers a search without the index: its byte prefilter never drops a
file that matches, however the file spells its text (Go's escapes, another program's escapes,
characters whose case folding yields ASCII), and it reads only regular files, boundedly."""

from __future__ import annotations

import os
import random
import sys

from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import Message
from golem_cli.store.search import _match, parse_query
from golem_cli.store.searchtext import message_text
from golem_cli.store.textscan import SPECIALS, Prefilter, message_files, scan_files
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.strategies import histories, queries


def test_specials_are_every_non_ascii_character_whose_folding_holds_ascii():
    found = {
        chr(c)
        for c in range(0x80, sys.maxunicode + 1)
        if not 0xD800 <= c < 0xE000 and any(ord(x) < 0x80 for x in chr(c).casefold())
    }
    assert found == set(SPECIALS)


class Raw(str):
    """JSON text embedded as it is (tool-call arguments are kept verbatim)."""


def _spell(value: object, rng: random.Random, mode: str) -> str:
    """JSON for ``value`` as another program might write it. ``mode``: "raw" (nothing escaped
    that need not be), "ascii" (non-ASCII as u-escapes, as Python's json does), "any" (any
    character may be a u-escape, hex of either case; a slash may be escaped)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_spell(k, rng, mode)}:{_spell(v, rng, mode)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_spell(v, rng, mode) for v in value) + "]"
    assert isinstance(value, str)
    out = []
    for ch in value:
        roll = rng.random()
        if mode == "any" and ch == "/" and roll < 0.5:
            out.append("\\/")
        elif ch in '"\\' or ord(ch) < 0x20 or (mode == "ascii" and ord(ch) > 0x7F) or (mode == "any" and roll < 0.3):
            units = ch.encode("utf-16-be", "surrogatepass")
            for k in range(0, len(units), 2):
                code = f"{int.from_bytes(units[k : k + 2], 'big'):04x}"
                out.append("\\u" + (code.upper() if rng.random() < 0.5 else code))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _as_json(m: Message) -> dict[str, object]:
    obj: dict[str, object] = {"role": m.role, "content": m.content}
    if m.thinking:
        obj["thinking"] = [{"text": b.text} for b in m.thinking]
    if m.tool_calls:
        obj["toolCalls"] = [{"id": c.id, "name": c.name, "args": Raw(c.args)} for c in m.tool_calls]
    return obj


@settings(max_examples=400)
@given(st.data())
def test_a_file_that_matches_is_always_admitted_however_it_is_spelled(data):
    history = data.draw(histories())
    query = data.draw(queries(history))
    if not query.strip():
        return
    parsed = parse_query(query)
    prefilter = Prefilter.of(parsed.literals)
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    objects = [_as_json(m) for m in history]
    spellings = [dump_history(history)] + [_spell(objects, rng, mode).encode() for mode in ("raw", "ascii", "any")]
    for spelled in spellings:
        loaded = load_history(spelled)  # what the index would hold for this file
        if any(_match(parsed, message_text(m)) is not None for m in loaded):
            assert prefilter.admits(spelled), (query, spelled)


def test_the_prefilter_rejects_what_is_plainly_not_there():
    data = dump_history([Message("user", "Tell me about <html> & the DOM, please")])
    assert not Prefilter.of(["zebra"]).admits(data)
    assert Prefilter.of(["<html> &"]).admits(data)  # runs between Go's escapes
    assert Prefilter.of(["dom, PLEASE".casefold()]).admits(data)
    assert not Prefilter.of(["the dim"]).admits(data)
    # another program's escape of a letter could hide it: admitted, then checked for real
    assert Prefilter.of(["zebra"]).admits(b'[{"role":"user","content":"\\u007aebra"}]')
    # the long s folds to "s": a file holding it may match "sun"
    assert Prefilter.of(["sun"]).admits(dump_history([Message("user", "ſun")]))
    assert not Prefilter.of(["moon"]).admits(dump_history([Message("user", "ſun")]))


def test_the_scan_reads_regular_files_only_and_reports_oversized_ones(tmp_path):
    good = "01a228ea-1414-732e-9d7a-7c1f891d89a7"
    big = "01a228ea-1414-732e-9d7a-7c1f891d89a8"
    (tmp_path / f"{good}.json").write_bytes(dump_history([Message("user", "needle here")]))
    with open(tmp_path / f"{big}.json", "wb") as f:
        f.truncate(1 << 20)
    os.mkfifo(tmp_path / "01a228ea-1414-732e-9d7a-7c1f891d89a9.json")
    os.symlink("/dev/zero", tmp_path / "01a228ea-1414-732e-9d7a-7c1f891d89aa.json")
    (tmp_path / "notes.json").write_text("needle")
    (tmp_path / f"{good}.meta.json").write_text("needle")
    os.mkdir(tmp_path / "01a228ea-1414-732e-9d7a-7c1f891d89ab.json")
    names, exists = message_files(str(tmp_path))
    assert exists and len(names) == 5 and "notes.json" not in names and f"{good}.meta.json" not in names
    for everything in (["needle"], ['"']):  # a query every file may match reads every file
        scan = scan_files(str(tmp_path), names, Prefilter.of(everything), limit=1000)
        assert [name for name, _ in scan.candidates] == [f"{good}.json"]  # the FIFO, the symlink, the directory: skipped
        assert list(scan.problems) == [f"{big}.json"] and "too large" in scan.problems[f"{big}.json"]


def test_a_forked_scan_finds_what_a_single_one_finds(tmp_path, monkeypatch):
    from golem_cli.store import textscan

    for i in range(300):
        cid = f"01a228ea-1414-732e-9d7a-7c1f891d{i:04x}"
        (tmp_path / f"{cid}.json").write_bytes(dump_history([Message("user", f"text {i} {'hit' if i % 7 else ''}")]))
    names, _ = message_files(str(tmp_path))
    single = scan_files(str(tmp_path), names, Prefilter.of(["hit"]), limit=1 << 20)
    monkeypatch.setattr(textscan, "_PARALLEL_FROM", 10)
    monkeypatch.setattr(textscan, "_second_scanner_pays", lambda: True)
    forked = scan_files(str(tmp_path), names, Prefilter.of(["hit"]), limit=1 << 20)
    assert sorted(forked.candidates) == sorted(single.candidates) and len(single.candidates) == 257


def test_a_second_scanner_is_forked_when_a_cpu_is_idle_now_whatever_the_load_average(tmp_path, monkeypatch):
    """The runnable count now (this process included) decides, not the 1-minute load average,
    which lags a minute behind a burst of work that just ended or just began."""
    from golem_cli.store import textscan

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(textscan, "_usable_cpus", lambda: {0, 1})
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("3.90 2.10 1.40 1/118 24539\n")  # busy a minute ago, only this process now
    assert textscan._second_scanner_pays(str(loadavg))
    loadavg.write_text("0.10 0.05 0.01 2/118 24539\n")  # quiet a minute ago, one other thread now
    assert not textscan._second_scanner_pays(str(loadavg))
    loadavg.write_text("0.10 0.05 0.01 5/118 24539\n")  # every CPU shared already
    assert not textscan._second_scanner_pays(str(loadavg))
    monkeypatch.setattr(textscan, "_usable_cpus", lambda: {0})  # taskset -c 0: one CPU to run on
    loadavg.write_text("0.00 0.00 0.00 1/118 24539\n")
    assert not textscan._second_scanner_pays(str(loadavg))


def test_without_a_runnable_count_the_load_average_decides(tmp_path, monkeypatch):
    from golem_cli.store import textscan

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(textscan, "_usable_cpus", lambda: {0, 1})
    unreadable = tmp_path / "garbled"
    unreadable.write_text("not a load average")
    for path in (str(tmp_path / "missing"), str(unreadable)):
        monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.4, 0.4))
        assert textscan._second_scanner_pays(path)
        monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 0.4, 0.4))
        assert not textscan._second_scanner_pays(path)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not textscan._second_scanner_pays(str(tmp_path / "missing"))
