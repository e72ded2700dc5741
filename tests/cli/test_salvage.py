"""Salvage: every complete message of a damaged history file, never over the only copy."""

from __future__ import annotations

import json

from golem_cli.cli.commands.salvage import salvage
from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import Message
from golem_cli.store import Store
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.conftest import assert_one_line_error
from tests.core.strategies import HISTORIES


@given(HISTORIES, st.floats(0, 1))
def test_a_file_cut_anywhere_gives_back_every_message_written_before_the_cut(history, where):
    data = dump_history(history)
    history = load_history(data)  # as golem reads them back
    cut = int(len(data) * where)
    ends = [len(dump_history(history[:k])) - 1 for k in range(1, len(history) + 1)]  # a message's last byte + 1
    whole = sum(1 for end in ends if end <= cut)
    rescued = salvage(data[:cut])
    assert rescued.messages == history[:whole]
    assert bool(rescued.lost) == (cut < len(data))


@given(HISTORIES, st.integers(0, 10**6), st.binary(min_size=1, max_size=8))
def test_damage_in_the_middle_loses_only_the_messages_it_touches(history, at, junk):
    data = dump_history(history)
    history = load_history(data)
    at = at % (len(data) + 1)
    damaged = data[:at] + junk + data[at:]
    rescued = salvage(damaged)
    ends = [len(dump_history(history[:k])) - 1 for k in range(1, len(history) + 1)]
    before = sum(1 for end in ends if end <= at)
    assert rescued.messages[:before] == history[:before]  # everything before the damage, exactly
    after = history[before + 2 :]  # the touched message, and the next one its damage may swallow, aside
    assert rescued.messages[len(rescued.messages) - len(after) :] == after if after else True


def test_a_stray_closing_bracket_loses_only_itself():
    """Found by the test above: ']' before the array read as its end, and every message was lost."""
    history = [Message("user", "one"), Message("assistant", "two"), Message("user", "three")]
    data = dump_history(history)
    for damaged in (b"]" + data, data[:1] + b"]" + data[1:]):
        rescued = salvage(damaged)
        assert rescued.messages == history and len(rescued.lost) == 1


def damaged_conversation(home) -> tuple[str, bytes]:
    store = Store(home)
    cid = store.create([Message("user", "one"), Message("assistant", "reply one"), Message("user", "two"),
                        Message("assistant", "a long reply that the crash cut off")])  # fmt: skip
    path = store.messages_path(cid)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    return cid, path.read_bytes()


def test_show_points_to_salvage_and_salvage_rescues_a_stored_conversation(golem_main, home):
    cid, damaged = damaged_conversation(home)
    shown = golem_main("show", cid)
    assert shown.code == 2 and f"golem normalize --salvage {cid} --in-place" in shown.err
    assert_one_line_error(shown)
    plain = golem_main("normalize", cid)
    assert plain.code == 2 and "--salvage" in plain.err
    report = golem_main("normalize", "--salvage", cid)
    assert report.code == 0 and "salvaged 3 complete messages" in report.out and "cut off at the end" in report.out
    assert "not written" in report.out
    assert "empty user messages" not in report.out  # salvage's change is not sanitize's
    assert Store(home).messages_path(cid).read_bytes() == damaged  # nothing written unless asked
    done = golem_main("normalize", "--salvage", cid, "--in-place", "--json")
    result = json.loads(done.out)
    assert done.code == 0 and result["lost"][0]["afterMessages"] == 3
    assert open(result["backup"], "rb").read() == damaged  # the original is kept
    assert [m.content for m in Store(home).load(cid)] == ["one", "reply one", "two"]
    assert golem_main("show", cid).code == 0


def test_salvage_never_writes_over_the_only_copy(golem_main, home, tmp_path):
    path = tmp_path / "history.json"
    path.write_bytes(b'[{"role":"user","content":"kept"},{"role":"assist')
    done = golem_main("normalize", "--salvage", str(path), "-o", str(path))
    assert done.code == 2 and "is the input itself" in done.err
    assert path.read_bytes() == b'[{"role":"user","content":"kept"},{"role":"assist'
    out = tmp_path / "rescued.json"
    assert golem_main("normalize", "--salvage", str(path), "-o", str(out)).code == 0
    assert load_history(out.read_bytes()) == [Message("user", "kept")]
