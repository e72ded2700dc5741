"""``/ids`` prints each ID and the file on one line whatever the width: a script reading a
piped chat, or a person double-clicking the path, gets it whole (rich used to break the path
at 80 columns, in a pipe too)."""

from __future__ import annotations

from golem_cli.store import Store


def test_ids_keeps_the_file_path_on_one_line_in_a_pipe(golem_main, home):
    done = golem_main("chat", "-m", "offline:echo", input="hello\n/ids\n", env={"COLUMNS": "40"})
    assert done.code == 0, done.err
    (info,) = Store(home).list()
    path = str(Store(home).messages_path(info.id))
    assert len(path) > 40
    lines = done.out.splitlines()
    assert f"file         {path}" in lines, lines
    assert f"conversation {info.id}" in lines, lines


def test_fork_of_a_chat_with_nothing_said_leaves_nothing_behind(golem_main, home):
    """/fork before the first prompt used to copy the empty conversation, and the copy stayed
    in `golem list` as an empty conversation after the chat."""
    done = golem_main("chat", "-m", "offline:echo", input="/history\n/fork\n/exit\n")
    assert done.code == 0, done.err
    assert "Nothing said yet." in done.out and "Nothing to fork yet" in done.out
    assert Store(home).list() == []
