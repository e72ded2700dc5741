"""Every message read once as a user (issue 12 item 17): one line per error, whole sentences,
help in the words people write usage in."""

from __future__ import annotations

import pytest

from tests.cli.conftest import assert_one_line_error

USAGE_MISTAKES = [
    (["list", "--bogus"], "no such option: --bogus (`golem list --help` shows how)"),
    (["export", "last", "--format", "html"], "invalid value for '--format' / '-f': ", "'html' is not one of 'json', 'golem', 'markdown' (`golem export --help` shows how)"),
    (["chat", "--max-messages", "0"], "invalid value for '--max-messages': ", "1 (`golem chat --help` shows how)"),
    (["list", "-n", "x"], "invalid value for '--limit' / '-n': ", "'x' is not a valid int range (`golem list --help` shows how)"),
    (["show"], "missing argument 'ID' (`golem show --help` shows how)"),
    (["lst"], "no such command 'lst'"),
    (["mcp"], "missing command (`golem mcp --help` shows how)"),
]  # fmt: skip


@pytest.mark.parametrize("mistake", USAGE_MISTAKES, ids=lambda v: " ".join(v[0]))
@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_usage_errors_are_one_plain_line_everywhere(golem_main, mistake, terminal):
    """In typer's words, as one line: what is wrong, and which help to read."""
    args, *expected = mistake
    done = golem_main(*args, env={"GOLEM_FORCE_TERMINAL": "1"} if terminal else {})
    assert done.code == 2
    assert_one_line_error(done)
    assert all(part in done.err for part in expected), done.err
    assert "\x1b" not in done.err and "╭" not in done.err


@pytest.mark.parametrize("command", ["resume", "show", "ask", "export", "normalize", "fork", "restore"])
def test_help_spells_arguments_as_people_write_them(golem_main, command):
    text = golem_main(command, "--help").out
    assert "{" not in text.split("\n")[0] and "[[" not in text
    assert "<list[str]>" not in text and "<int" not in text


def test_help_usage_lines(golem_main):
    assert golem_main("resume", "--help").out.startswith("Usage: golem resume [OPTIONS] [ID]\n")
    assert golem_main("show", "--help").out.startswith("Usage: golem show [OPTIONS] ID\n")
    assert "-a, --attach FILE|URL" in golem_main("ask", "--help").out


def test_a_json_error_is_a_whole_sentence(golem_main, tmp_path):
    path = tmp_path / "control.json"
    path.write_bytes(b'[{"role":"user","content":"a\x01b"}]')
    hint = f"; `golem normalize --salvage {path} -o OUT.json` keeps its complete messages to import"
    done = golem_main("import", str(path))
    assert done.err.strip().endswith(
        "invalid character '\\x01' in string literal (control characters must be escaped)" + hint
    )
    path.write_bytes(b'[{"role":"user","content":"abc')
    assert (
        golem_main("import", str(path)).err.strip().endswith("unexpected end of JSON input: a string is never closed" + hint)
    )


def test_the_command_list_shows_every_summary_whole(golem_main):
    """click cuts a summary past 45 characters with "..." (delete and restore were cut)."""
    commands = golem_main("--help", env={"COLUMNS": "80"}).out.split("Commands:")[1]
    assert "..." not in commands and "…" not in commands, commands
    assert "delete     Move a conversation to the trash (asks first)." in commands
