"""The root command's table (``app.COMMANDS``): every command a module declares is listed, with
that module, in the order ``golem --help`` shows; nothing else is."""

from __future__ import annotations

import importlib
import pkgutil

import golem_cli.cli.commands
import typer
from golem_cli.cli.app import COMMANDS


def declared(module: str) -> list[str]:
    """The command names a module of ``golem_cli.cli.commands`` declares (``mcp``: its group;
    a helper module without a typer app: none)."""
    app = getattr(importlib.import_module(f"golem_cli.cli.commands.{module}"), "app", None)
    if app is None:
        return []
    group = typer.main.get_group(app)
    return [group.name] if group.name else list(group.commands)


def test_every_declared_command_is_in_the_table_with_its_module():
    modules = [m.name for m in pkgutil.iter_modules(golem_cli.cli.commands.__path__)]
    found = {name: module for module in modules for name in declared(module)}
    assert found == COMMANDS


def test_the_table_keeps_each_modules_commands_in_their_order():
    for module in set(COMMANDS.values()):
        assert [name for name, m in COMMANDS.items() if m == module] == declared(module)
