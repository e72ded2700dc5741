"""The ``golem`` command: commands declared in one module per command group, run by the fast
path or by a typer app built from the same declarations.

Registering commands: every module named in ``COMMAND_MODULES`` declares
``COMMANDS: tuple[Command, ...]`` (see command.py). Command modules import nothing heavy at
module level; the store, the codec and rich are imported inside the command functions.

``golem --version`` never gets here: ``__main__`` answers it before any import.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import TYPE_CHECKING, Any

from golem_cli.cli import errors

if TYPE_CHECKING:
    import typer

    from golem_cli.cli.command import Command

#: Command groups, in the order ``golem --help`` shows them.
COMMAND_MODULES: tuple[str, ...] = (
    "golem_cli.cli.commands.chat",  # chat, resume, fork, ask
    "golem_cli.cli.commands.tools",  # tools
    "golem_cli.cli.commands.mcp",  # mcp list, mcp import
    "golem_cli.cli.commands.models",  # models
    "golem_cli.cli.commands.conversations",  # list, show, delete
    "golem_cli.cli.commands.search",  # search
    "golem_cli.cli.commands.normalize",  # normalize
    "golem_cli.cli.commands.transfer",  # export, import
)


def commands() -> dict[str, Command]:
    """Every command by name, in help order."""
    found: dict[str, Command] = {}
    for name in COMMAND_MODULES:
        for command in importlib.import_module(name).COMMANDS:
            found[command.name] = command
    return found


HELP = """golem: a command-line chat for large language models that never loses a turn.

Every conversation is a JSON file a Go golem program can load as []model.Message.
Conversation IDs can be shortened to any unique prefix or tail (its last characters), or
`last`.
"""


def _version(value: bool) -> None:
    if value:
        import typer

        from golem_cli import __version__

        typer.echo(f"golem {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    """The typer app with every command group registered. Help is rich on a terminal and
    plain (and faster) when piped."""
    import typer

    from golem_cli.cli.command import to_typer
    from golem_cli.cli.render.console import styled

    app = typer.Typer(
        name="golem",
        help=HELP,
        add_completion=True,
        no_args_is_help=True,
        rich_markup_mode="rich" if styled() else None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: bool = typer.Option(
            False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
        debug: bool = typer.Option(False, "--debug", help="Show the traceback when something fails."),
    ) -> None:
        """golem: a command-line chat for large language models that never loses a turn."""

    for command in commands().values():
        to_typer(app, command)
    return app


def run(args: list[str]) -> int:
    """Run the command line ``args`` (without the program name) and return the exit code.

    Plain argument lists skip typer (see fastpath.py). A usage error is one line on stderr
    naming the help to read (exit 2), like every other error; everything else that escapes a
    command goes through ``errors.report``: one line, never a traceback unless ``--debug``.
    """
    debug = errors.debug_requested(args)
    try:
        from golem_cli.cli import fastpath
        from golem_cli.cli.command import join_pairs

        args = join_pairs(list(args), commands(), fastpath.GLOBAL_FLAGS)
        fast = fastpath.parse(list(args), commands())
        if fast is not None:
            return fast()
        import typer

        command = typer.main.get_command(build_app())
        _plain_arguments(command)
        try:
            done = command.main(args=list(args), prog_name="golem", standalone_mode=False)
        except typer.Abort:
            return errors.report(KeyboardInterrupt(), debug=debug)
        except _click_exception() as e:
            return _usage_error(e)
        return done if isinstance(done, int) else errors.EXIT_OK
    except SystemExit as done:
        return _exit_code(done.code)
    except BrokenPipeError:
        return errors.silence_broken_pipe()
    except (Exception, KeyboardInterrupt) as exc:
        return errors.report(exc, debug=debug)
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            errors.silence_broken_pipe()
        except (OSError, ValueError):
            pass


USAGE_ERROR = 2  # the exit code of a command line that does not parse


def _click_exception() -> type[Exception]:
    from typer._click.exceptions import ClickException  # typer 0.29 carries its own click

    return ClickException


def _usage_error(e: Exception) -> int:
    """A usage error as one line: what is wrong, in a sentence, and where the help is.
    (typer would draw a box on a terminal and three lines in a pipe, and word a bad value as
    pydantic does: "Value error, 'html' is not one of ...".)"""
    ctx = getattr(e, "ctx", None)
    if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None:  # plain `golem`: the help is the answer
        sys.stdout.write(ctx.get_help() + "\n")
        return int(getattr(e, "exit_code", USAGE_ERROR))
    text = e.format_message() if hasattr(e, "format_message") else str(e)
    text = text.replace("Value error, ", "").replace("Input should be greater than or equal to", "must be at least")
    text = text.replace("Input should be", "must be").replace("a valid integer", "a whole number")
    text = re.sub(r", unable to parse string as an? \w+", "", text).strip().rstrip(".")
    text = text[:1].lower() + text[1:]
    where = f" (`{ctx.command_path} --help` shows how)" if ctx is not None else ""
    sys.stderr.write(f"golem: {' '.join(text.split())}{where}\n")
    return int(getattr(e, "exit_code", USAGE_ERROR))


def _plain_arguments(command: Any) -> None:
    """Arguments as people write them in usage lines: ``ID`` and ``[ID]``, not typer's
    ``{ID}``, and without a ``<str>`` type tag in the help."""
    from typer.core import TyperArgument

    class Argument(TyperArgument):
        def _usage_display_name(self) -> str:
            name = self.display_name_raw
            return (name if self.required else f"[{name}]") + ("..." if self.nargs != 1 else "")

        def display_type_rich(self, ctx: Any) -> str | None:
            return None

    for sub in getattr(command, "commands", {}).values():
        for param in sub.params:
            if type(param) is TyperArgument:
                param.__class__ = Argument


def _exit_code(code: object) -> int:
    if code is None:
        return errors.EXIT_OK
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return errors.EXIT_FAILURE
