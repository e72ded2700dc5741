"""``-`` for standard input and output, as in every pipeline tool: ``curl … | golem import -``,
``golem normalize - < h.json``, ``golem export ID -o - | jq``, ``golem normalize h.json -o - | …``.
A ``-`` used to be a file name: ``-o -`` wrote a file called ``-`` and ``import -`` said
"no such file"."""

from __future__ import annotations

import json

from golem_cli.core.codec.history import dump_history, load_history
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error

DANGLING = [
    Message("user", "roll"),
    Message("assistant", "", tool_calls=[ToolCall("t1", "roll_dice", '{"sides": 6}')]),
    Message("user", "and?"),
]


def test_import_reads_standard_input(golem_main, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = golem_main("import", "-", input=dump_history([Message("user", "from a pipe"), Message("assistant", "ok")]))
    assert result.code == 0, result.err
    assert "imported 2 messages as" in result.out and "standard input" in result.out
    assert not (tmp_path / "-").exists()
    (info,) = Store(home).list()
    assert [m.content for m in Store(home).load(info.id)] == ["from a pipe", "ok"]


def test_normalize_reads_standard_input_and_writes_standard_output(golem_main, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = golem_main("normalize", "-", "-o", "-", input=dump_history(DANGLING))
    assert result.code == 0, result.err
    repaired = load_history(result.raw)  # stdout holds the history alone; the report is on stderr
    assert [m.role for m in repaired] == ["user", "assistant", "tool", "user"]
    assert "standard input: 3 messages in, 4 out" in result.err and "wrote standard output" in result.err
    assert not (tmp_path / "-").exists()
    checked = golem_main("normalize", "-", "--check", input=dump_history(DANGLING))
    assert checked.code == 1 and "standard input: 3 messages in, 4 out" in checked.out


def test_normalize_json_report_goes_to_stderr_when_the_history_goes_to_stdout(golem_main, home):
    result = golem_main("normalize", "-", "-o", "-", "--json", input=dump_history(DANGLING))
    assert result.code == 0, result.err
    assert len(load_history(result.raw)) == 4
    assert json.loads(result.err)["written"] == "-"


def test_export_to_standard_output_with_dash(golem_main, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cid = Store(home).create([Message("user", "hello")])
    result = golem_main("export", cid, "-o", "-")
    assert result.code == 0, result.err
    assert [m.content for m in load_history(result.raw)] == ["hello"]
    assert not (tmp_path / "-").exists()


def test_standard_input_refusals_are_one_line(golem_main, home):
    for args in (("import", "-"), ("normalize", "-")):
        empty = golem_main(*args, input=b"")
        assert empty.code == 2 and "standard input" in empty.err
        assert_one_line_error(empty)
    in_place = golem_main("normalize", "-", "--in-place", input=dump_history(DANGLING))
    assert in_place.code == 2 and "--in-place" in in_place.err and "standard input" in in_place.err
    assert_one_line_error(in_place)
    big = golem_main("import", "-", input=dump_history([Message("user", "x" * 5000)]), env={"GOLEM_MAX_HISTORY_BYTES": "1000"})
    assert big.code == 2 and "GOLEM_MAX_HISTORY_BYTES" in big.err
    assert_one_line_error(big)
    assert Store(home).list() == []


def test_a_damaged_import_says_how_to_keep_its_complete_messages(golem_main, home, tmp_path):
    damaged = tmp_path / "my history.json"
    damaged.write_bytes(dump_history([Message("user", "one"), Message("assistant", "two")])[:-20])
    result = golem_main("import", str(damaged))
    assert result.code == 2
    assert_one_line_error(result)
    assert f"`golem normalize --salvage '{damaged}' -o OUT.json`" in result.err
    saved = golem_main("normalize", "--salvage", str(damaged), "-o", str(tmp_path / "OUT.json"))
    assert saved.code == 0, saved.err
    assert golem_main("import", str(tmp_path / "OUT.json")).code == 0
    assert [m.content for m in Store(home).load(Store(home).list()[0].id)] == ["one"]


def test_ask_reads_a_bounded_text_prompt_from_standard_input(golem_main, home):
    """`golem ask < /dev/zero` used to read until the memory ran out, and binary data became a
    prompt of replacement characters and lone surrogates (3 MB of it: 9 s, then sent)."""
    binary = golem_main("ask", "-m", "offline:echo", input=b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 50)
    assert binary.code == 2 and "standard input is binary data, not text" in binary.err and "-a FILE" in binary.err
    assert_one_line_error(binary)
    huge = golem_main("ask", "-m", "offline:echo", "summarize", input=b"a" * (20 * 2**20 + 1))
    assert huge.code == 2 and "standard input holds more than 20 MB" in huge.err
    assert_one_line_error(huge)
    assert Store(home).list() == []
    latin1 = golem_main("ask", "-m", "offline:echo", input=b"caf\xe9 au lait")
    assert latin1.code == 0 and latin1.out.startswith("You said: caf\ufffd au lait")
