"""The ``golem`` command: one typer app with every command group registered (``build_app``),
and ``run``, where whatever ends a command becomes an exit code and at most one line.

Each command group is a module of ``golem_cli.cli.commands`` with a typer app of its own;
those modules import nothing heavy at module level (the store, the codec and rich are imported
inside the commands). ``golem --version`` never gets here: ``__main__`` answers it first.
"""

from __future__ import annotations

import io
import sys
from typing import Annotated

import typer

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


def build_app() -> typer.Typer:
    """The typer app with every command group, in the order ``golem --help`` lists them. Help
    is rich on a terminal and plain (and faster) when piped."""
    from golem_cli.cli.commands import (
        ask,
        chat,
        compact,
        conversations,
        mcp,
        models,
        normalize,
        search,
        tools,
        transfer,
        usage,
    )
    from golem_cli.cli.render.console import styled

    app = typer.Typer(
        name="golem",
        help=HELP,
        rich_markup_mode="rich" if styled() else None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback(invoke_without_command=True)(_root)
    for group in (chat, ask, tools, mcp, models, conversations, usage, compact, search, normalize, transfer):
        app.add_typer(group.app, rich_help_panel=group.app.rich_help_panel)  # typer reads a sub-app's panel here
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
