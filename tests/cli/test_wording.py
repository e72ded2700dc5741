"""Words a new user met that said the wrong thing (issue 27): sizes, counts, empty settings."""

from __future__ import annotations

import json

from golem_cli.cli.attach import TextFile, describe, size_words
from golem_cli.core.messages import Part


def test_sizes_are_said_as_they_are():
    """A 38-byte file was "1 KB"."""
    assert describe(TextFile(name="parser.py", text="x" * 38)) == "parser.py (text, 38 bytes)"
    assert describe(Part(kind="image", media_type="image/png", data=b"x" * 12 * 1024)) == "image (image/png, 12 KB)"
    assert [size_words(n) for n in (1, 1023, 1024, 5 * 1024 * 1024 + 1)] == ["1 byte", "1023 bytes", "1 KB", "5.0 MB"]


def test_one_imported_message_is_one_message(golem_main, tmp_path):
    """``imported 1 messages``."""
    one = tmp_path / "one.json"
    one.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    done = golem_main("import", str(one))
    assert done.code == 0, done.err
    assert "imported 1 message as " in done.out


def test_ask_no_save_leaves_nothing(golem, home, tmp_path):
    """Throwaway questions from scripts filled the list. A process: its temporary store goes
    when it exits."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = golem("ask", "--no-save", "-m", "offline:echo", "hi", env={"TMPDIR": str(scratch)})
    assert done.code == 0 and "You said: hi" in done.out, done.err
    assert golem("list", "--json").out.strip() == "[]"
    assert list(scratch.iterdir()) == []  # its temporary store is gone too
    refused = golem("ask", "--no-save", "-c", "-m", "offline:echo", "hi")
    assert refused.code == 2 and "--no-save asks a throwaway question" in refused.err
