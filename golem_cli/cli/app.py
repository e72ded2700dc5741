"""The ``golem`` command: one typer app whose commands are the command groups' (``build_app``),
and ``run``, where whatever ends a command becomes an exit code and at most one line.

Each command group is a module of ``golem_cli.cli.commands`` with a typer app of its own;
those modules import nothing heavy at module level (the store, the codec and rich are imported
inside the commands). A command line loads only its command's module (``COMMANDS``), so
``golem chat`` neither imports nor builds the other twenty commands. ``golem --version`` never
gets here: ``__main__`` answers it first.
"""

from __future__ import annotations

import importlib
import io
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.models import TyperInfo

from golem_cli.cli import errors

HELP = """golem: a command-line chat for large language models that never loses a turn.

Every conversation is a JSON file a Go golem program can load as []model.Message.
Conversation IDs can be shortened to any unique prefix or tail (its last characters), or
`last`.
"""

USAGE_ERROR = 2  # the exit code of a command line that does not parse


def _version(value: bool) -> None:
    if value:
        from golem_cli import __version__

        typer.echo(f"golem {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback when something fails.")] = False,
) -> None:
    """golem: a command-line chat for large language models that never loses a turn."""
    if ctx.invoked_subcommand is None:  # plain `golem`: the help is the answer
        typer.echo(ctx.get_help())
        raise typer.Exit(USAGE_ERROR)


#: Every command, in the order ``golem --help`` lists them, and the module of
#: ``golem_cli.cli.commands`` that declares it (``tests/cli/test_commands.py`` holds the two
#: together).
COMMANDS = {
    **dict.fromkeys(("chat", "resume", "fork"), "chat"),
    "ask": "ask",
    "tools": "tools",
    "mcp": "mcp",
    "models": "models",
    **dict.fromkeys(("list", "show", "delete", "restore"), "conversations"),
    **dict.fromkeys(("context", "usage"), "usage"),
    "compact": "compact",
    "search": "search",
    "normalize": "normalize",
    **dict.fromkeys(("export", "import"), "transfer"),
}


class Commands(TyperGroup):
    """golem's commands, each built by typer from its declaration when it is asked for (click's
    lazy subcommands): a command line asks for one, ``--help`` and completion for all of them."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:  # a typo: typer's "did you mean" reads every name it has
            for name in COMMANDS:
                self.get_command(ctx, name)
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = self._declared(cmd_name)
        return self.commands[cmd_name]

    def _declared(self, name: str) -> Any:
        """The click command typer builds from the declaration of ``name`` in its module (for
        ``mcp``, the module's app is the group)."""
        app = importlib.import_module(f"golem_cli.cli.commands.{COMMANDS[name]}").app
        if app.info.name == name:
            return typer.main.get_group_from_info(
                TyperInfo(app, rich_help_panel=app.rich_help_panel),  # typer reads a sub-app's panel here
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=self.suggest_commands,
                rich_markup_mode=self.rich_markup_mode,
            )
        (info,) = (command for command in app.registered_commands if command.name == name)
        return typer.main.get_command_from_info(
            info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=self.rich_markup_mode
        )


def build_app() -> typer.Typer:
    """The typer app of every command (``Commands``). Help is rich on a terminal and plain (and
    faster) when piped."""
    from golem_cli.cli.render.console import styled

    app = typer.Typer(
        name="golem",
        cls=Commands,
        help=HELP,
        rich_markup_mode="rich" if styled() else None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback(invoke_without_command=True)(_root)
    return app


def run(args: list[str]) -> int:
    """Run the command line ``args`` (without the program name) and return the exit code.

    A usage error is one line on stderr naming the help to read (exit 2), like every other
    error; everything else that escapes a command goes through ``errors.report``: one line,
    never a traceback unless ``--debug``.
    """
    debug = errors.debug_requested(args)
    escape_what_cannot_be_encoded()
    try:
        command = typer.main.get_command(build_app())
        try:
            done = command.main(args=list(args), prog_name="golem", standalone_mode=False)
        except typer.Abort as stop:  # Ctrl-C (see command.py), or end of input at a question
            return errors.report(stop.__cause__ or KeyboardInterrupt(), debug=debug)
        except typer.TyperException as e:
            return usage_error(e)
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


def escape_what_cannot_be_encoded() -> None:
    """Make standard output and error write a character their encoding cannot hold as an
    escape (``\\xe9``) instead of failing: with ``PYTHONIOENCODING=ascii`` (or a C locale) a
    reply in another script is still shown, as the stream can show it, and kept, rather than
    ending the turn as a failure."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def usage_error(e: typer.TyperException) -> int:
    """A command line typer refused, as one line: typer's words, and where the help is."""
    ctx = getattr(e, "ctx", None)  # a usage error knows the command it was reading
    text = " ".join(e.format_message().split()).rstrip(".")
    where = f" (`{ctx.command_path} --help` shows how)" if ctx is not None else ""
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stderr.write(for_terminal(f"golem: {text[:1].lower()}{text[1:]}{where}", sys.stderr) + "\n")
    return e.exit_code


def _exit_code(code: object) -> int:
    if code is None:
        return errors.EXIT_OK
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return errors.EXIT_FAILURE
