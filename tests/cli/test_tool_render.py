"""Tool calls and results in transcripts: compact in ``show``, ``/history`` and the markdown
export (name, argument summary, status, first lines), whole with ``--full`` or in the
export's collapsed blocks; terminal escapes from tool output never reach the terminal."""

from __future__ import annotations

import json

from golem_cli.cli.render.terminal_text import visible
from golem_cli.cli.render.transcript import markdown_document, plain_lines
from golem_cli.cli.tools.view import summarize_args
from golem_cli.core.messages import Message, ToolCall

LONG = "\n".join(f"line {i}" for i in range(1, 11))
HISTORY = [
    Message(role="user", content="list it"),
    Message(role="assistant", tool_calls=[
        ToolCall(id="c1", name="run_command", args=json.dumps({"command": "ls -la", "timeout": 5})),
        ToolCall(id="c2", name="read_file", args=json.dumps({"path": "a.txt"})),
    ]),  # fmt: skip
    Message(role="tool", content=LONG, tool_call_id="c1", tool_name="run_command"),
    Message(role="tool", content="no such file", tool_call_id="c2", tool_name="read_file", failed=True),
    Message(role="assistant", content="done"),
]


def test_argument_summaries():
    assert summarize_args('{"command": "ls -la", "timeout": 5}') == "ls -la  (+timeout)"
    assert summarize_args('{"path": "a\\nb"}') == "a⏎b"
    assert summarize_args('{"x": [1, 2]}') == '{"x": [1, 2]}'
    assert summarize_args("{}") == "" and summarize_args("") == ""
    assert summarize_args('{"cut":') == '{"cut":'
    assert len(summarize_args(json.dumps({"command": "x" * 500}))) == 90
    assert summarize_args(json.dumps({"path": "\x1b]0;pwned\x07evil\x1b[2J"})) == "^[]0;pwned^Gevil^[[2J"


def test_plain_transcript_is_compact_unless_full():
    compact = "\n".join(plain_lines(HISTORY, run_ids=False)).splitlines()
    assert "→ call run_command [c1]: ls -la  (+timeout)" in compact
    assert "← result run_command [c1]:" in compact
    assert "    line 4" in compact and "    line 5" not in compact
    assert "    … 6 more lines (--full shows all)" in compact
    assert "✗ failed read_file [c2]:" in compact and "    no such file" in compact
    whole = "\n".join(plain_lines(HISTORY, run_ids=False, full=True)).splitlines()
    assert "    line 10" in whole and not any("more lines" in line for line in whole)
    assert '      "command": "ls -la",' in whole


def test_markdown_export_is_compact_and_complete():
    doc = markdown_document(HISTORY, None, "cid")
    assert "**Tool call** `run_command` (`c1`): `ls -la  (+timeout)`" in doc
    assert "<details><summary>arguments</summary>" in doc
    assert "**Tool result** `run_command` (`c1`):\n\n```\nline 1\nline 2\nline 3\nline 4\n```" in doc
    assert "<details><summary>all 10 lines</summary>\n\n```\n" + LONG + "\n```\n\n</details>" in doc
    assert "**Tool failed** `read_file` (`c2`):" in doc


def test_show_full_through_the_entry_point(golem_main, home):
    from golem_cli.config.paths import data_dir
    from golem_cli.store import Store

    cid = Store(data_dir()).create(HISTORY, model="offline:echo")
    compact = golem_main("show", cid)
    assert compact.code == 0 and "… 6 more lines (--full shows all)" in compact.out and "line 10" not in compact.out
    whole = golem_main("show", cid, "--full")
    assert whole.code == 0 and "line 10" in whole.out


def test_tool_text_shows_escapes_keeps_text():
    assert visible("ok\x1b[31m red\x1b[0m\ttab\nnext\x07") == "ok^[[31m red^[[0m\ttab\nnext^G"
