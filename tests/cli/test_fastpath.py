"""Plain argument lists skip typer; both paths must agree exactly, and anything unusual must go
to typer."""

from __future__ import annotations

import enum

import pytest
from golem_cli.cli import app, fastpath
from golem_cli.cli.app import commands
from golem_cli.cli.command import Command, Option
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
    ["show", "nope"], ["show", "../x"], ["search", "other"], ["search", "other", "--json", "-n", "1"],
    ["resume", "nope"], ["export", "ROOT", "--format", "markdown"], ["models", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_both_paths_agree(populated, golem, args):
    args = [populated if a == "ROOT" else a for a in args]
    assert fastpath.parse(args, commands()) is not None
    fast = golem(*args)
    slow = golem(*args, env={"GOLEM_NO_FASTPATH": "1"})
    assert (fast.code, fast.out, fast.err) == (slow.code, slow.out, slow.err)


@pytest.mark.parametrize(
    "args",
    [
        [], ["list", "--help"], ["list", "-h"], ["list", "--limit=2"], ["list", "-n2"], ["list", "--limit"],
        ["list", "--limit", "-1"], ["list", "--limit", "x"], ["list", "--bogus"], ["list", "extra"],
        ["list", "--debug"], ["show"], ["show", "a", "b"], ["show", "--", "last"], ["show", "-"], ["nope", "x"],
        ["--version", "list"], ["list", "--limit", "٣"], ["chat", "--max-messages", "0"], ["chat", "-m"],
        ["chat", "--model=x"], ["chat", "x"], ["ask", "a", "b"], ["ask", "--cid", "--json"], ["chat", "--help"],
        ["export", "last", "--format", "html"], ["search"], ["resume", "a", "b"],
    ],
    ids=repr,
)  # fmt: skip
def test_unusual_arguments_go_to_typer(args):
    assert fastpath.parse(args, commands()) is None


def test_no_fastpath_switch(monkeypatch):
    monkeypatch.setenv("GOLEM_NO_FASTPATH", "1")
    assert fastpath.parse(["list"], commands()) is None


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


def _values(option: Option) -> list[list[str]]:
    """Plain spellings of ``option`` with a value typer accepts."""
    if option.type is bool:
        return [[flag] for flag in option.flags]
    if option.pair:  # -o KEY VALUE: two words (join_pairs makes them KEY=VALUE for both paths)
        return [[flag, "temperature", "0.5"] for flag in option.flags]
    if option.type is int:
        value = [str((option.min or 0) + 3)]
    elif isinstance(option.type, type) and issubclass(option.type, enum.Enum):
        return [[flag, member.value] for flag in option.flags for member in option.type]
    else:
        value = ["some value"]
    return [[flag, *value] for flag in option.flags]


def _argument_lists(command: Command) -> list[list[str]]:
    """The command with only its required arguments, with every optional one, with each
    spelling of each option, and with all options at once."""
    required = [f"arg{i}" for i, a in enumerate(command.arguments) if a.required]
    every = [f"arg{i}" for i in range(len(command.arguments))]
    lists = [required, every] if every != required else [required]
    for option in command.options:
        lists += [[*required, *spelling] for spelling in _values(option)]
    lists.append([*every, *(token for o in command.options for token in _values(o)[0])])
    lists += [[*required, *_values(o)[0], *_values(o)[-1]] for o in command.options if o.takes_value]
    return lists


def _cases() -> list[tuple[str, list[str]]]:
    return [(name, [name, *args]) for name, command in commands().items() for args in _argument_lists(command)]


@pytest.mark.parametrize(("name", "args"), _cases(), ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_every_command_gets_the_same_keywords_from_both_paths(name, args, monkeypatch, home):
    """The fast parser is derived from the declarations typer is built from: for every
    command and every option, both hand the implementation the same keywords."""
    seen: list[dict] = []
    monkeypatch.setattr(Command, "call", lambda self, keywords: seen.append(dict(keywords)) or 0)
    fast = fastpath.parse(args, commands())
    assert fast is not None, "the fast path declined a plain argument list"
    assert fast() == 0
    monkeypatch.setenv("GOLEM_NO_FASTPATH", "1")
    assert app.run(args) == 0
    assert len(seen) == 2 and seen[0] == seen[1]


def test_repeated_options(monkeypatch, home):
    seen: list[dict] = []
    monkeypatch.setattr(Command, "call", lambda self, keywords: seen.append(dict(keywords)) or 0)
    assert fastpath.parse(["ask", "-a", "x.png", "--attach", "y.pdf", "hi", "-m", "a:b", "-m", "c:d"], commands())() == 0
    assert (seen[0]["attach"], seen[0]["prompt"], seen[0]["model"]) == (["x.png", "y.pdf"], "hi", "c:d")
