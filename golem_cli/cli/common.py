"""Helpers the command modules share: the store, reading a history from a file or an ID,
writing files a user asked for, and what each run of a chat sends."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from golem_cli.cli.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from golem_cli.cli.model_choice import Choice
    from golem_cli.config.settings import Settings
    from golem_cli.core.messages import Message
    from golem_cli.core.model import ModelSettings
    from golem_cli.session import ChatSession
    from golem_cli.store import Store


def history_limit() -> int:
    """The largest history file golem reads: ``GOLEM_MAX_HISTORY_BYTES``, else 1 GiB."""
    from golem_cli.store.files import MAX_HISTORY_BYTES

    text = os.environ.get("GOLEM_MAX_HISTORY_BYTES", "").strip()
    if not text:
        return MAX_HISTORY_BYTES
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"GOLEM_MAX_HISTORY_BYTES={text!r}: give a number of bytes, e.g. 2147483648")
    return int(text)


def open_store() -> Store:
    """The user's store (``GOLEM_HOME`` or the platform data directory); on a terminal, a
    progress bar shows when bringing its index up to date takes more than a moment."""
    from golem_cli.cli.render.progress import terminal_progress
    from golem_cli.config.paths import data_dir, state_dir
    from golem_cli.store import Store

    return Store(data_dir(), max_history_bytes=history_limit(), progress=terminal_progress(), state=state_dir())


def set_window(
    session: ChatSession,
    choice: Choice,
    context_tokens: int | None,
    options: ModelSettings | None,
    trim_stride: int | None = None,
    summarize_trimmed: bool = False,
    *,
    max_cost: float | None = None,
) -> None:
    """What each run of ``session`` sends: the token budget and the trim stride (flag, then
    config) and options; what the session may spend (``--max-cost``, then ``max_cost``) and the
    prices it reads; compaction's settings. A stride that does not fit the window is an input
    error, raised with the session closed (its conversation released): no run of it follows."""
    from golem_cli.cli import model_choice

    session.context_tokens = model_choice.context_tokens(context_tokens, choice.settings)
    session.trim_stride = trim_stride if trim_stride is not None else choice.settings.trim_stride
    if session.trim_stride > 1 and not session.context_tokens and session.trim_stride >= session.max_messages:
        session.close()
        raise InputError(
            f"a trim stride of {session.trim_stride} does not fit a window of {session.max_messages} messages",
            hint=f"use --trim-stride (trim_stride in config.toml) below {session.max_messages}, or more --max-messages",
        )
    if options is not None:
        session.options = options
    session.model_tables = choice.settings.models
    session.max_cost = max_cost if max_cost is not None else choice.settings.max_cost
    set_compaction(session, choice, summarize_trimmed)


def set_compaction(session: ChatSession, choice: Choice, summarize_trimmed: bool = False) -> None:
    """Compaction's settings (ADR 0032): rolling summaries (flag or config), auto-compact's
    share of the context window, and the model that writes summaries (``compact_model``,
    built on first use)."""
    compactor = session.compactor
    settings = choice.settings
    compactor.rolling = summarize_trimmed or settings.summarize_trimmed
    auto = settings.auto_compact
    compactor.auto = 0.8 if auto is True else (float(auto) if auto is not False else None)
    if settings.compact_model:
        from golem_cli.providers.resolve import resolve

        compactor.model = resolve(settings.compact_model, providers=settings.providers, models=settings.models,
                                  lazy=True)  # fmt: skip


def project_root(settings: Settings, off: bool) -> Path | None:
    """Where a chat's project instructions are read: the tool root (``tool_root``, else the
    working directory); None when ``--no-project-instructions`` or the config turns them off."""
    if off or not settings.project_instructions:
        return None
    return Path(settings.tool_root).expanduser() if settings.tool_root else Path.cwd()


def instructions_lines(root: Path | None) -> list[str]:
    """The banner's line naming the project instructions a run would send now, and a line for
    each that cannot be read."""
    if root is None:
        return []
    from golem_cli.config.project import read_instructions

    found = read_instructions(root)
    lines = [f"instructions: {found.summary(root)}" + (" (cut at 32 KB)" if found.cut else "")] if found.files else []
    return lines + [f"golem: project instructions left out: {problem}" for problem in found.problems]


STDIO = "-"  # as a FILE argument: standard input; as ``-o``: standard output


def is_stdio(path: Path | str | None) -> bool:
    """Whether a file argument is ``-``: standard input or output, as in every pipeline tool."""
    return path is not None and str(path) == STDIO


class Source(Struct):
    """Where a history came from: a file, a stored conversation (``cid`` set), or standard
    input (``stdin``)."""

    label: str
    path: Path
    cid: str = ""
    stdin: bool = False

    @property
    def ref(self) -> str:
        """How to name it again on a command line."""
        import shlex

        return self.cid or (STDIO if self.stdin else shlex.quote(self.label))


def standard_input() -> Source:
    return Source("standard input", Path(STDIO), stdin=True)


def locate(text: str, store: Store) -> Source:
    """A FILE|ID argument: an existing path (or anything path-like) is a file, otherwise the
    text is resolved as a conversation reference, and read as a file name when no
    conversation matches it."""
    from golem_cli.store import ConversationNotFound, InvalidReference

    if is_stdio(text):
        return standard_input()
    path_like = os.sep in text or (os.altsep is not None and os.altsep in text) or text.startswith(".")
    if not path_like and not os.path.lexists(text):
        try:
            cid = store.resolve(text)
        except (InvalidReference, ConversationNotFound):
            return Source(text, Path(text))
        return Source(f"conversation {cid}", store.messages_path(cid), cid)
    return Source(text, Path(text))


def read_bytes(source: Source, *, missing: str = "no such file or conversation") -> bytes:
    """The file's bytes; a FIFO, device or directory is refused at once, and so is a file
    over the history size limit (``/dev/zero`` is both). The refusal names the path once, as
    it was typed (``UnreadableFile`` names it already); a stored conversation by its ID too."""
    from golem_cli.store.files import read_regular

    if source.stdin:
        return _read_stdin(history_limit())
    with _reading(source, missing):
        return read_regular(source.path if source.cid else source.label, history_limit(), follow=not source.cid)


def read_messages(source: Source, *, missing: str = "no such file or conversation") -> list[Message]:
    """``parse_history(read_bytes(source))`` without holding the file's bytes beside all of
    its messages: they are decoded a batch at a time as the file is read (an 81 MB history
    peaked at 3.6 times its size read whole). A file the strict fast path declines is then
    read whole, so that errors name their position exactly as ``parse_history``'s do."""
    from contextlib import closing

    from golem_cli.core.codec.history import PIECE, read_history_pieces
    from golem_cli.store.files import read_pieces

    if source.stdin:  # a pipe is read once, whole (bounded like a file)
        return parse_history(read_bytes(source, missing=missing), source.label)
    path, limit = (source.path if source.cid else source.label), history_limit()
    with _reading(source, missing), closing(read_pieces(path, limit, follow=not source.cid, piece=PIECE)) as pieces:
        read = read_history_pieces(pieces)
    if read is not None:
        return read[0]
    return parse_history(read_bytes(source, missing=missing), source.label)


@contextmanager
def _reading(source: Source, missing: str) -> Iterator[None]:
    """The errors of reading ``source`` as one line each (see ``read_bytes``)."""
    from golem_cli.store.files import UnreadableFile

    try:
        yield
    except UnreadableFile as e:
        raise InputError(f"{source.label}: {e}" if source.cid else str(e)) from None
    except FileNotFoundError:
        raise InputError(f"{source.label}: {missing}") from None
    except OSError as e:
        raise InputError(f"{source.label}: cannot read: {e.strerror or e}") from None


def _read_stdin(limit: int) -> bytes:
    """Standard input, at most ``limit`` bytes of it (a history piped in is bounded like a file)."""
    import sys

    stream = sys.stdin
    if stream is None or stream.isatty():
        raise InputError("- reads a history from standard input, which is a terminal; pipe one in (`… < history.json`)")
    data = stream.buffer.read(limit + 1)
    if len(data) > limit:
        raise InputError(
            f"standard input is too large (more than {limit / 2**20:,.0f} MiB): "
            "set GOLEM_MAX_HISTORY_BYTES higher if it really is a history"
        )
    return data


def write_stdout(data: bytes | Iterable[bytes]) -> None:
    """Write what ``-o -`` asked for to standard output, as it is made."""
    import sys

    sys.stdout.flush()
    for chunk in [data] if isinstance(data, bytes) else data:
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def parse_history(data: bytes, label: str) -> list[Message]:
    """Decode a history; a ``HistoryFormatError`` names the source and the position."""
    from golem_cli.core.codec.history import load_history
    from golem_cli.core.errors import HistoryFormatError

    try:
        return load_history(data)
    except HistoryFormatError as e:
        raise HistoryFormatError(f"{label}: {e}") from None


def write_user_file(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write a file the user named: atomically, keeping the mode of a file it replaces
    (0600 for a new file: conversations are private). ``data`` may come in pieces, written
    as they are made (``codec.history_chunks``)."""
    from golem_cli.store.atomic import PRIVATE_FILE, write_atomic
    from golem_cli.store.files import UnreadableFile, refuse_special

    try:
        refuse_special(path, "a file golem writes to", follow=True)  # a rename would replace a FIFO or /dev/null
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        mode = PRIVATE_FILE
    except UnreadableFile as e:
        raise InputError(str(e)) from None
    if not path.parent.is_dir():
        raise InputError(f"{path}: directory {path.parent} does not exist")
    write_atomic(path, data, mode=mode)


def backup_file(path: Path) -> Path:
    """Copy ``path`` to ``path.bak`` (or ``.bak.1``, ``.bak.2`` … never overwriting one), a
    piece at a time: the messages of the history it backs up are in memory meanwhile (read
    whole, an 81 MB file put the peak of `normalize --in-place` at 3.3 times its size)."""
    from contextlib import closing

    from golem_cli.store.atomic import write_atomic
    from golem_cli.store.files import read_pieces

    target = path.with_name(path.name + ".bak")
    n = 0
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}.bak.{n}")
    with closing(read_pieces(path, history_limit(), piece=1 << 18)) as pieces:
        write_atomic(target, pieces, mode=os.stat(path).st_mode & 0o777)
    return target


def differs(before: list[Message], after: list[Message]) -> bool:
    """Whether a history operation changed anything (the core keeps unchanged messages as
    the same objects, so this is cheap; equality decides when they are not)."""
    if len(before) != len(after):
        return True
    return any(a is not b and a != b for a, b in zip(before, after, strict=True))
