"""``/ids`` prints each ID and the file on one line whatever the width: a script reading a
piped chat, or a person double-clicking the path, gets it whole (rich used to break the path
at 80 columns, in a pipe too)."""

from __future__ import annotations

from golem_cli.store import Store


def test_ids_keeps_the_file_path_on_one_line_in_a_pipe(golem, home):
    done = golem("chat", "-m", "offline:echo", input="hello\n/ids\n", env={"COLUMNS": "40"})
    assert done.code == 0, done.err
    (info,) = Store(home).list()
    path = str(Store(home).messages_path(info.id))
    assert len(path) > 40
    lines = done.out.splitlines()
    assert f"file         {path}" in lines, lines
    assert f"conversation {info.id}" in lines, lines
