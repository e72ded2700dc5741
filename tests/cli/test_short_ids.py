"""Conversation IDs people can type: any unique prefix or tail, the unique part highlighted."""

from __future__ import annotations

import re

from golem_cli.core.messages import Message
from golem_cli.store import Store


def three(home) -> list[str]:
    """Three conversations made within a second: their IDs share their first 8+ characters."""
    store = Store(home)
    return [store.create([Message("user", f"question {n}")], title=f"t{n}") for n in range(3)]


def test_four_characters_of_the_tail_find_a_conversation(golem_main, home):
    ids = three(home)
    assert len({cid[:8] for cid in ids}) == 1  # the README's old promise: 4-character prefixes never work
    for cid in ids:
        result = golem_main("show", cid[-4:])
        assert result.code == 0, result.err
        assert f"id {cid}" in result.out


def test_the_shortest_unique_prefix_works_and_four_shared_characters_say_ambiguous(golem_main, home):
    ids = three(home)
    unique = Store(home).unique_prefixes(ids)
    for cid in ids:
        assert golem_main("show", cid[: unique[cid]]).code == 0
    result = golem_main("show", ids[0][:4])
    assert result.code != 0 and "matches 3 conversations" in result.err and "last characters" in result.err


def _bold_prefixes(raw: str) -> list[str]:
    return re.findall(r"\x1b\[1;36m([0-9a-f-]+)\x1b\[0m(?:\x1b\[2;36m([0-9a-f-]*))?", raw)


def test_list_and_show_highlight_the_part_to_type(golem_main, home):
    ids = three(home)
    unique = Store(home).unique_prefixes(ids)
    listed = golem_main("list", env={"GOLEM_FORCE_TERMINAL": "1", "COLUMNS": "150"})
    shown = {bold: rest for bold, rest in _bold_prefixes(listed.out)}
    assert {cid[: unique[cid]] for cid in ids} == set(shown)
    show = golem_main("show", ids[1], env={"GOLEM_FORCE_TERMINAL": "1", "COLUMNS": "150"})
    assert (ids[1][: unique[ids[1]]], ids[1][unique[ids[1]] :]) in _bold_prefixes(show.out)


def test_a_file_name_that_looks_like_an_id_is_still_a_file(golem_main, home, tmp_path):
    three(home)
    result = golem_main("normalize", "abc")
    assert result.code == 2 and "abc: no such file or conversation" in result.err


def test_list_on_an_80_column_terminal_keeps_the_ids_and_counts_and_cuts_the_title(golem_main, home):
    """The title gives way on a narrow terminal, never the ID one types or the date: rich
    used to shrink every column evenly (``01a…``, the message count gone) for a long title."""
    store = Store(home)
    long_title = "Please explain to me in great detail how the borrow checker decides lifetimes " * 2
    ids = [store.create([Message("user", f"question {n}")] * (n + 1), title=long_title) for n in range(3)]
    unique = Store(home).unique_prefixes(ids)
    for columns in (80, 60):
        listed = golem_main("list", env={"GOLEM_FORCE_TERMINAL": "1", "COLUMNS": str(columns)})
        assert listed.code == 0, listed.err
        shown = {bold for bold, _ in _bold_prefixes(listed.out)}
        assert {cid[: unique[cid]] for cid in ids} == shown, listed.out
        rows = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in listed.out.splitlines()[1:]]
        assert len(rows) == 3 and all(len(row.rstrip()) <= columns for row in rows), rows
        assert all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d +[123] ", row) for row in rows), rows
        assert all("  Please" in row and row.rstrip().endswith("…") for row in rows), rows


def _resume_handle(out: str) -> str:
    return re.search(r"golem resume (\S+)", out).group(1)


def test_the_resume_hint_still_works_after_more_chats_start(golem_main, home):
    """The hint is the ID's random tail: the prefix the hint used to print (the top of the
    UUIDv7's clock) was shared by every chat of the next minute ("matches 2 conversations")."""
    first = golem_main("chat", "-m", "offline:echo", input="one\n")
    handle = _resume_handle(first.out)
    for n in range(3):
        assert golem_main("chat", "-m", "offline:echo", input=f"more {n}\n").code == 0
    ids = [cid for cid in Store(home)._ids()]
    assert len(ids) == 4 and len({cid[:8] for cid in ids}) == 1
    shown = golem_main("show", handle)
    assert shown.code == 0, shown.err
    assert "one" in shown.out and len(handle) == 12


def test_a_tail_match_wins_over_a_prefix_match(home):
    from golem_cli.store.refs import match_reference

    tail = "0123456789ab"
    ending = f"01a0cf9e-0000-7000-8000-{tail}"
    starting = "01234567-89ab-7000-8000-000000000000"
    assert match_reference("01234567", [ending, starting]) == starting
    assert match_reference(tail[-8:], [ending, "456789ab-0000-7000-8000-000000000000"]) == ending


def test_the_footer_shows_handles_not_whole_ids(golem_main, home):
    """Two whole UUIDs after every reply wrapped at 80 columns; /ids has them whole."""
    out = golem_main("chat", "-m", "offline:echo", input="one\n").out
    (cid,) = Store(home)._ids()
    footer = next(line for line in out.splitlines() if " stored, " in line)
    assert cid[-12:] in footer and cid not in footer
    assert len(footer) <= 80
