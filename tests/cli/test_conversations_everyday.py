"""Forks, imports and message numbers as a person meets them (issue 12)."""

from __future__ import annotations

import json

from golem_cli.core.history.numbering import numbered
from golem_cli.core.messages import Message
from golem_cli.store import Store

from tests.cli.conftest import assert_one_line_error


def chat_with_a_late_system_prompt(home) -> str:
    """Two exchanges, then /system: the system prompt goes first and shifts the file's indexes."""
    return Store(home).create(
        [Message("system", "be brief"), Message("user", "one"), Message("assistant", "reply one"),
         Message("user", "two"), Message("assistant", "reply two")], title="Numbers",
    )  # fmt: skip


def test_fork_at_counts_what_show_numbers(golem_main, home):
    cid = chat_with_a_late_system_prompt(home)
    shown = golem_main("show", cid).out
    assert "--- system prompt" in shown and "--- [2] assistant\nreply one" in shown
    done = golem_main("fork", cid, "--at", "2", "--no-chat")
    assert done.code == 0, done.err
    new = done.out.strip()
    store = Store(home)
    assert [m.content for m in store.load(new)] == ["be brief", "one", "reply one"]
    assert store.meta(new).fork_at == 2
    assert "forked from" in golem_main("show", new).out and "after message 2" in golem_main("show", new).out


def test_forks_inherit_the_title(golem_main, home):
    cid = chat_with_a_late_system_prompt(home)
    new = golem_main("fork", cid, "--no-chat").out.strip()
    assert Store(home).meta(new).title == "Numbers (fork)"
    untitled = Store(home).create([Message("user", "what is a monad")])
    assert Store(home).meta(golem_main("fork", untitled, "--no-chat").out.strip()).title == "what is a monad (fork)"


def test_fork_at_zero_and_empty_imports_are_refused(golem_main, home, tmp_path):
    """``--at`` has one range, said the same way with one exit code whichever side it misses:
    ``--at 99`` said "fork at 0 to N" (exit 1) while ``--at 0`` was refused (exit 2)."""
    cid = chat_with_a_late_system_prompt(home)
    shown = numbered(Store(home).load(cid))
    for at in ("0", "-1", str(shown + 1), "99"):
        done = golem_main("fork", cid, "--at", at, "--no-chat")
        assert done.code == 2 and f"fork at 1 to {shown}" in done.err, done.err
        assert_one_line_error(done)
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    done = golem_main("import", str(empty))
    assert done.code == 2 and "holds no messages" in done.err
    only_system = tmp_path / "system.json"
    only_system.write_text(json.dumps([{"role": "system", "content": "x"}]))
    done = golem_main("import", str(only_system))
    assert done.code == 2 and "nothing is left once sanitized" in done.err
    assert [info.id for info in Store(home).list()] == [cid]


def test_show_counts_what_it_numbers(golem_main, home):
    cid = chat_with_a_late_system_prompt(home)
    assert "4 messages and a system prompt · " in golem_main("show", cid).out


def test_show_search_and_fork_number_an_imported_mid_history_system_message_alike(golem_main, home, tmp_path):
    """A file imported as it is may hold a system message mid-history: ``show`` leaves it
    unnumbered, a ``search`` hit after it carries the number ``show`` gives, and ``fork --at``
    takes that number to mean the same message (core/history/numbering.py)."""
    history = tmp_path / "imported.json"
    history.write_text(json.dumps([
        {"role": "user", "content": "one"}, {"role": "assistant", "content": "reply one"},
        {"role": "system", "content": "from now on, be formal"},
        {"role": "user", "content": "two zebra"}, {"role": "assistant", "content": "reply two"},
    ]))  # fmt: skip
    done = golem_main("import", "--trust", str(history))  # as it is: sanitizing would remove the system message
    assert done.code == 0, done.err
    cid = Store(home).list()[0].id
    shown = golem_main("show", cid).out
    assert "--- [3] user\ntwo zebra" in shown and "--- [4] assistant\nreply two" in shown
    for _ in range(2):  # from the files, then from the index the first search had built
        hit = json.loads(golem_main("search", "zebra", "--json").out)[0]
        assert (hit["number"], hit["messageIndex"]) == (3, 3)
    done = golem_main("fork", cid, "--at", str(hit["number"]), "--no-chat")
    assert done.code == 0, done.err
    new = done.out.strip()
    store = Store(home)
    assert [m.content for m in store.load(new)] == ["one", "reply one", "from now on, be formal", "two zebra"]
    assert store.meta(new).fork_at == 3 and "after message 3" in golem_main("show", new).out
