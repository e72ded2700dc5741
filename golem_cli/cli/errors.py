"""The one place an exception becomes what the user sees: one line on stderr and an exit code.

A ``GolemError`` (golem's one error tree, ``golem_cli.core.errors``) carries both: the line is
its text and its ``hint``, the code its ``exit_code``. Exit codes: 0 success; 1 failure (a
``GolemError``, an OS error such as a full disk, a bug); 2 bad input (an ``InputError``: a
usage error, an unreadable history, text that is not a conversation ID); 130 interrupted
(Ctrl-C, silently). ``--debug`` (or ``GOLEM_DEBUG=1``) adds the traceback; without it there
is never one.
"""

from __future__ import annotations

import errno
import os
import re
import sys

from golem_cli.core.errors import GolemError
from golem_cli.core.errors import InputError as InputError  # re-exported: the commands raise it from here

EXIT_OK = 0
EXIT_FAILURE = GolemError.exit_code
EXIT_INTERRUPTED = 130


def exit_code_for(exc: BaseException) -> int:
    """The exit code for an exception that ended a command."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return exc.exit_code if isinstance(exc, GolemError) else EXIT_FAILURE


def describe(exc: BaseException, *, saved: str = "") -> str:
    """The one line for ``exc``, without the ``golem:`` prefix; ``saved`` (what a failed turn
    kept, ``notices.what_is_saved``) goes between what happened and what to do."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, GolemError):
        text = _run_error_text(exc) or str(exc)
        text = text[len("golem: ") :] if text.startswith("golem: ") else text
        text = f"{text}; {saved}" if saved else text
        hint = exc.hint
        return f"{text}; {hint}" if hint and hint not in text else text
    if isinstance(exc, OSError):
        return _describe_os_error(exc)
    return f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)"


def stopped_at_question(exc: BaseException | None) -> bool:
    """Whether a run ended because the person pressed Ctrl-C at an approval question."""
    from golem_cli.core.errors import RunCanceledError, RunError
    from golem_cli.core.tools import STOPPED_AT_QUESTION

    return (
        isinstance(exc, RunError)
        and isinstance(exc.cause, RunCanceledError)
        and exc.cause.reason == STOPPED_AT_QUESTION
    )


def _run_error_text(exc: BaseException) -> str:
    """A failed run in words for people: the provider's message as it is for the model stage
    (``golem: model stage:`` is the Go-compatible spelling for programs, noise for people, and
    so is Go's ``runner: model failed after <n> attempts:``), a tool's failure or stop as
    what the tool did (Go's ``runner: tool "x" (call "c"):`` is for programs too), the stage
    named for the others."""
    from golem_cli.core.errors import ModelError, RunCanceledError, RunError, ToolCallError

    if not isinstance(exc, RunError):
        return ""
    if exc.stage == "model" and isinstance(exc.cause, ModelError) and exc.cause.attempts > 1:
        return f"{exc.cause.message} (after {exc.cause.attempts} attempts)"
    if stopped_at_question(exc):
        return "stopped at the approval question; the tool calls of that turn are closed, nothing else ran"
    if isinstance(exc.cause, RunCanceledError):
        return f"{exc.cause.tool_name} stopped the turn: {exc.cause.reason}"
    if isinstance(exc.cause, ToolCallError):
        return f"the {exc.cause.tool_name} call failed: {exc.cause.error}"
    cause = str(exc.cause)
    cause = cause[len("golem: ") :] if cause.startswith("golem: ") else cause
    limit = re.fullmatch(r"runner: model turn limit exceeded after (\d+) turns", cause)
    if exc.stage == "loop" and limit:  # Go's words for programs; a model busy with tools, for people
        return (
            f"the model used tools for {limit[1]} tool rounds in a row without answering, the most one prompt "
            "may take; its calls and their results are saved: send `continue` to let it go on"
        )
    return cause if exc.stage == "model" else f"{exc.stage} stage failed: {cause}"


def _describe_os_error(exc: OSError) -> str:
    what = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        what = "the disk is full"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        what = "permission denied"
    names = [n for n in (exc.filename, exc.filename2) if n]
    where = f" ({' -> '.join(os.fsdecode(n) for n in names)})" if names else ""
    return f"{what}{where}"


def report(exc: BaseException, *, debug: bool = False, saved: str = "") -> int:
    """Print ``exc`` as one line on stderr (plus the traceback in debug mode); return the
    exit code. ``saved``: see ``describe``."""
    if debug:
        import traceback  # only here: every command imports this module

        traceback.print_exception(exc)
    if isinstance(exc, KeyboardInterrupt):
        # The terminal already shows ^C; golem exits rather than dying of the signal, so the
        # shell adds no newline after it and its prompt would follow the ^C on the same line.
        try:
            if sys.stderr.isatty():
                sys.stderr.write("\n")
                sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED
    from golem_cli.cli.render.terminal_text import for_terminal

    line = describe(exc, saved=saved).replace("\n", " ")  # a server's message, a file name: shown, not obeyed
    try:
        sys.stderr.write(for_terminal(f"golem: {line}", sys.stderr) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return exit_code_for(exc)


def silence_broken_pipe() -> int:
    """stdout was closed by the reader (``golem list | head``): stop quietly.

    Python would otherwise complain while flushing stdout at exit.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_FAILURE


def debug_requested(args: list[str]) -> bool:
    """``--debug`` anywhere before a ``--``, or ``GOLEM_DEBUG`` set to something true."""
    if os.environ.get("GOLEM_DEBUG", "").lower() in ("1", "true", "yes"):
        return True
    for arg in args:
        if arg == "--":
            return False
        if arg == "--debug":
            return True
    return False
