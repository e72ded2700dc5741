"""`list` and `show` skip typer in their plain forms; both paths must agree exactly, and
anything unusual must go to typer."""

from __future__ import annotations

import pytest
from golem_cli.cli import fastpath
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store


@pytest.fixture
def populated(home):
    store = Store(home)
    root = store.create(
        [Message("user", "q"), Message("assistant", tool_calls=[ToolCall("c", "f", "{}")], run_id="r1"), Message("tool", "x", tool_call_id="c", tool_name="f")],
        title="root", model="m:1",
    )  # fmt: skip
    store.fork(root, 1)
    for n in range(3):
        store.create([Message("user", f"other {n}")])
    return root


ARGS = [
    ["list"], ["list", "--json"], ["list", "--limit", "2"], ["list", "-n", "0", "--tree"], ["list", "--tree", "--json"],
    ["--debug", "list"], ["show", "last"], ["show", "ROOT", "--json"], ["show", "ROOT", "--run-ids"],
    ["show", "nope"], ["show", "../x"],
]  # fmt: skip


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_both_paths_agree(populated, golem, args):
    args = [populated if a == "ROOT" else a for a in args]
    assert fastpath.parse(args) is not None
    fast = golem(*args)
    slow = golem(*args, env={"GOLEM_NO_FASTPATH": "1"})
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


@pytest.mark.parametrize(
    "args",
    [
        [], ["list", "--help"], ["list", "-h"], ["list", "--limit=2"], ["list", "-n2"], ["list", "--limit"],
        ["list", "--limit", "-1"], ["list", "--limit", "x"], ["list", "--bogus"], ["list", "extra"],
        ["list", "--debug"], ["show"], ["show", "a", "b"], ["show", "--", "last"], ["show", "-"], ["delete", "x"],
        ["--version", "list"], ["list", "--limit", "٣"],
    ],
    ids=repr,
)  # fmt: skip
def test_unusual_arguments_go_to_typer(args):
    assert fastpath.parse(args) is None


def test_no_fastpath_switch(monkeypatch):
    monkeypatch.setenv("GOLEM_NO_FASTPATH", "1")
    assert fastpath.parse(["list"]) is None


def test_list_never_imports_typer_or_rich(home):
    import subprocess
    import sys

    Store(home).create([Message("user", "hi")])
    code = (
        "import sys; from golem_cli.__main__ import main; main(['list']);"
        "print(sorted(m for m in ('typer', 'rich', 'pydantic', 'platformdirs') if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["chat"], {}),
        (["chat", "-m", "offline:echo", "--system", "be brief", "--max-messages", "5", "--no-markdown"],
         {"model": "offline:echo", "system": "be brief", "max_messages": 5, "no_markdown": True}),
        (["ask", "hello"], {}),
        (["ask", "-c", "--json", "--cid", "abcd", "hi"], {"continue_last": True, "as_json": True, "cid": "abcd"}),
    ],
)  # fmt: skip
def test_chat_and_ask_plain_forms_skip_typer(args, expected, monkeypatch):
    import golem_cli.cli.chat as chat

    seen = {}
    monkeypatch.setattr(chat, args[0], lambda *a, **kw: seen.update(kw, positional=a) or 0)
    call = fastpath.parse(args)
    assert call is not None and call() == 0
    assert {k: v for k, v in seen.items() if k != "positional"} == expected


@pytest.mark.parametrize("args", [["chat", "--max-messages", "0"], ["chat", "-m"], ["chat", "--model=x"], ["chat", "x"],
                                  ["ask", "a", "b"], ["ask", "--cid", "--json"], ["chat", "--help"]])  # fmt: skip
def test_chat_and_ask_unusual_forms_go_to_typer(args):
    assert fastpath.parse(args) is None
