"""Every --json speaks one style: camelCase keys (as the history contract), ISO 8601 UTC times.
The contract's own objects (a show's messages, a repair report) are embedded as the contract
spells them. docs/json.md lists the shapes."""

from __future__ import annotations

import json
import re

import pytest
from golem_cli.core.messages import Message, ToolCall
from golem_cli.store import Store

CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*\Z")
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\Z")
CONTRACT = {"messages", "report"}  # spelled by the history contract
TIMES = {"created", "updated"}


def keys_and_times(value, path="") -> tuple[list[str], list[str]]:
    """Every key (outside contract objects) and every time value, walked recursively."""
    keys, times = [], []
    if isinstance(value, dict):
        for key, inner in value.items():
            keys.append(f"{path}.{key}")
            if key in TIMES and inner:
                times.append(inner)
            if key not in CONTRACT:
                k, t = keys_and_times(inner, f"{path}.{key}")
                keys += k
                times += t
    elif isinstance(value, list):
        for inner in value:
            k, t = keys_and_times(inner, path)
            keys += k
            times += t
    return keys, times


@pytest.fixture
def stored(home, tmp_path):
    (home / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[mcp_servers.files]\ncommand = "true"\n')
    store = Store(home)
    cid = store.create([Message("user", "find the walrus"), Message("assistant", tool_calls=[ToolCall("c1", "f", "{")])],
                       title="Walrus", model="offline:echo")  # fmt: skip
    from golem_cli.core.usage import Usage
    from golem_cli.store.sidecars import RUNS
    from golem_cli.store.sidecars.ledger import Ledger

    ledger = Ledger(store.sidecar_path(cid, RUNS))  # one run, for usage
    ledger.started("01a0cf9e-0000-7000-8000-0000000000aa", kind="turn", model="offline:echo")
    ledger.ended("01a0cf9e-0000-7000-8000-0000000000aa", usage=Usage(input_tokens=3, output_tokens=2), requests=1,
                 finish_reason="stop", failed=False, stopped=False, cost=0.0)  # fmt: skip
    store.fork(cid, 1)
    gone = store.create([Message("user", "to delete")])
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]))
    return {"ID": cid, "GONE": gone, "FILE": str(history)}


COMMANDS = [
    ["list"], ["list", "--tree"], ["show", "ID"], ["search", "walrus"], ["models"], ["normalize", "ID"],
    ["import", "FILE"], ["delete", "GONE", "--yes"], ["ask", "-m", "offline:echo", "hello"], ["tools"],
    ["mcp", "list", "--no-start"], ["mcp", "prompts"], ["mcp", "resources"], ["usage"], ["usage", "--by", "conversation"],
    ["context", "ID"],
]  # fmt: skip


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_one_json_style(golem_main, stored, args):
    done = golem_main(*[stored.get(a, a) for a in args], "--json")
    assert done.code == 0, done.err
    keys, times = keys_and_times(json.loads(done.out))
    assert keys, done.out
    assert [k for k in keys if not CAMEL.match(k.rsplit(".", 1)[1])] == []
    assert all(ISO_UTC.match(t) for t in times), times


def test_restore_json(golem_main, stored):
    golem_main("delete", stored["GONE"], "--yes")
    keys, _ = keys_and_times(json.loads(golem_main("restore", "--json").out))
    assert keys == [".restored"]


def _commands(group, path=()):
    """Every command of the typer app as (its words, its click command)."""
    import typer

    for name in group.list_commands(typer.Context(group)):
        command = group.get_command(typer.Context(group), name)
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_every_json_command_is_covered():
    import typer
    from golem_cli.cli.app import build_app

    root = typer.main.get_command(build_app())
    with_json = {name for name, c in _commands(root) if any("--json" in p.opts for p in c.params)}
    assert with_json == {" ".join(args[:2] if args[0] == "mcp" else args[:1]) for args in COMMANDS} | {"restore"}
