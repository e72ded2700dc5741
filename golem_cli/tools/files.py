"""The file tools: read, list, search, write and edit files under the root.

Each is a plain function of its settings (``FileTools``) and the model's arguments; the
built-in source (``builtin.py``) turns them into tools. Only regular files are opened
(``regular.py``: a FIFO or a device in the tree cannot hang a tool). Reading is bounded
whatever the file: it reads in chunks and stops at the output limit, even inside one
enormous line, and says where to read on. Searching runs in a process of its own
(``search.py``: a pathological regular expression is stopped at a deadline or by Ctrl-C).
Writing shows a unified diff before it happens (the approval question shows
``preview_write`` / ``preview_edit``) and writes atomically; an edit changes no byte outside
the edited text (a file that is not valid UTF-8 keeps its other bytes exactly), and a new
file gets the mode the user's umask gives, as any editor would.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from msgspec import Struct

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.confine import Root, is_link
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, cap
from golem_cli.tools.regular import NotRegular, open_regular, os_reason
from golem_cli.tools.search import DEFAULT_DEADLINE, LARGE_NAMED, MAX_MATCHES, MAX_SEARCHED_FILE, run_search
from golem_cli.tools.threads import off_thread
from golem_cli.tools.walk import BINARY_SNIFF, Walk

MAX_LISTED = 1000
MAX_EDITED_FILE = 32 * 1024 * 1024  # bytes: larger files are not written over or edited
DIFF_LINES = 400  # lines of a diff shown in the approval question
DIFF_WIDTH = 400  # characters of one diff line shown in the approval question
READ_CHUNK = 65536
NOTE_ROOM = 200  # characters of the output limit kept for read_file's notes
#: A temporary file for a write: new, never through a link, never inherited by a command.
#: Told a file's path, previous bytes (None: new) and new bytes before a write (``ToolContext``).
BeforeChange = Callable[[Path, bytes | None, bytes], None]
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class FileTools(Struct, frozen=True):
    root: Root
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    search_timeout: float = DEFAULT_DEADLINE

    # --- reading ---------------------------------------------------------------------------

    def read_file(self, path: str, start_line: int = 1, max_lines: int = 2000) -> str:
        target = self._file(path)
        fd = self._open(target, path, "read_file reads")
        with open(fd, "rb") as f:
            if b"\x00" in f.read(BINARY_SNIFF):
                size = os.fstat(f.fileno()).st_size
                raise ToolFailed(f"{path!r} is a binary file ({size:,} bytes); read_file reads text")
            f.seek(0)
            return self._slice(f, max(1, start_line), max(1, max_lines))

    def _slice(self, f: BinaryIO, start: int, max_lines: int) -> str:
        """Lines ``start``.. of ``f``, read in chunks: at most ``max_lines`` lines and the
        output limit, whatever the lengths of the lines, with a note saying where to go on."""
        room = max(self.output_limit // 2, self.output_limit - NOTE_ROOM)
        first = _skip_lines(f, start - 1)
        if first is None:
            return f"[golem: the file has fewer than {start} lines]" if start > 1 else ""  # empty: nothing to show
        shown: list[str] = []
        used = 0
        last = start - 1
        notes: list[str] = []
        stopped = ""
        for text, cut in _lines(f, first, room):
            if len(shown) >= max_lines:
                stopped = "max_lines"
                break
            if shown and used + len(text) > room:
                stopped = "limit"
                break
            shown.append(text)
            used += len(text)
            last += 1
            if cut:  # nothing more fits: stop here, without reading the rest of that line
                notes.append(
                    f"[golem: line {last} is longer than the output limit; only its first {len(text):,} "
                    "characters are shown]"
                )
                stopped = "limit"
                break
        if not shown:
            return f"[golem: the file has fewer than {start} lines]"
        if stopped:
            why = " (the output limit is reached)" if stopped == "limit" else ""
            lines = f"line {start}" if last == start else f"lines {start}-{last}"
            notes.append(f"[golem: showing {lines}{why}; read on with start_line={last + 1}]")
        text = "".join(shown)
        if notes:
            text += ("" if text.endswith("\n") else "\n") + "\n".join(notes)
        return cap(text, self.output_limit)

    def list_files(self, path: str = ".", max_depth: int = 3) -> str:
        start = self.root.resolve(path)
        if not start.exists():
            raise ToolFailed(f"{path!r} does not exist (under {self.root.path})")
        walk = Walk(self.root, start, include_dirs=True, special=True, max_depth=max(1, max_depth))
        shown: list[str] = []
        for found in walk:
            if len(shown) >= MAX_LISTED:
                walk.truncated = True
                break
            shown.append(self.root.show(found) + _listing_mark(found))
        if not shown:
            return f"{self.root.show(start)}: no files (ignored files are not listed)"
        if walk.truncated:
            shown.append(f"[golem: stopped after {len(shown)} entries; list a subdirectory for more]")
        return cap("\n".join(shown), self.output_limit)

    def search_start(self, pattern: str, path: str, literal: bool, ignore_case: bool) -> tuple[str, Path]:
        """The checked pattern and where to search (``ToolFailed`` for either)."""
        if not pattern:
            raise ToolFailed("the pattern is empty")
        text = re.escape(pattern) if literal else pattern
        try:
            re.compile(text, re.IGNORECASE if ignore_case else 0)
        except re.error as e:
            raise ToolFailed(
                f"{pattern!r} is not a valid regular expression ({e}); pass literal=true to search the text as is"
            ) from None
        start = self.root.resolve(path)
        try:
            mode = start.stat().st_mode
        except FileNotFoundError:
            raise ToolFailed(f"{path!r} does not exist (under {self.root.path})") from None
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise ToolFailed(f"{path!r} is {_kind(mode)}, not a file or a directory; search_files searches those")
        return text, start

    async def search_files(
        self, pattern: str, path: str = ".", literal: bool = False, ignore_case: bool = False
    ) -> str:
        text, start = await off_thread(self.search_start, pattern, path, literal, ignore_case)
        found = await run_search(self.root.path, start, text, ignore_case=ignore_case, deadline=self.search_timeout)
        where = self.root.show(start)
        notes: list[str] = []
        if found.large:
            named = ", ".join(found.large[:LARGE_NAMED]) + (", …" if len(found.large) > LARGE_NAMED else "")
            size = MAX_SEARCHED_FILE // (1024 * 1024)
            notes.append(f"[golem: {len(found.large)} file(s) over {size} MB were not searched: {named}]")
        if found.timed_out:
            notes.append(
                f"[golem: the search was stopped after {self.search_timeout:g}s, before it was done; a pattern "
                "with nested repetition such as (a+)+ can take exponential time: simplify it, pass literal=true, "
                "or search a narrower path]"
            )
        elif len(found.matches) >= MAX_MATCHES:
            notes.append(f"[golem: stopped at {MAX_MATCHES} matches; narrow the pattern or the path]")
        elif not found.complete:
            notes.append("[golem: the search process ended before it was done; the results may be incomplete]")
        elif found.walk_truncated:
            notes.append("[golem: the walk stopped early (too many files); search a subdirectory]")
        if not found.matches:
            head = f"no matches for {pattern!r} in {found.files} files under {where}"
            if found.timed_out or not found.complete:
                head = f"no matches for {pattern!r} found under {where}"
            return "\n".join([head, *notes])
        return cap("\n".join(found.matches + notes), self.output_limit)

    # --- writing ---------------------------------------------------------------------------

    def write_file(self, path: str, content: str, before_change: BeforeChange | None = None) -> str:
        target = self._writable(path)
        old = self._current(target, path)
        data = _encode(content)
        self._kept(before_change, target, old, data)
        self._write(target, data)
        verb = "replaced" if old is not None else "created"
        return f"{verb} {self.root.show(target)} ({len(data):,} bytes)"

    def edit_file(
        self, path: str, old_text: str, new_text: str, replace_all: bool = False,
        before_change: BeforeChange | None = None,
    ) -> str:  # fmt: skip
        target = self._writable(path)
        old = self._current(target, path)
        new, count = self._edited(old, path, old_text, new_text, replace_all)
        self._kept(before_change, target, old, _encode(new))
        self._write(target, _encode(new))
        return f"edited {self.root.show(target)}: {count} replacement{'s' if count != 1 else ''}"

    def _kept(self, before_change: BeforeChange | None, target: Path, old: str | None, new: bytes) -> None:
        """The file's previous bytes handed to ``before_change`` (kept for ``/undo``) before it
        is changed; when they cannot be kept, the file is not changed."""
        if before_change is None:
            return
        try:
            before_change(target, _encode(old) if old is not None else None, new)
        except OSError as e:
            raise ToolFailed(f"{self.root.show(target)!r} was not changed: its copy for /undo could not be kept "
                             f"({e.strerror or e})") from None  # fmt: skip

    def preview_write(self, path: str, content: str) -> str:
        """The diff the approval question shows; ``ToolFailed`` when the write would fail (a
        path refused, a binary file): such a call is not asked about, it fails at once."""
        try:
            target = self._writable(path)
            old = self._current(target, path)
        except OSError as e:
            raise ToolFailed(os_reason(e)) from None
        return diff(old or "", content, self.root.show(target), created=old is None)

    def preview_edit(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        """The diff of the edit; ``ToolFailed`` when the edit would fail (its text is not in
        the file, or more than once): it would change nothing, so nobody is asked."""
        try:
            target = self._writable(path)
            current = self._current(target, path)
            new, _ = self._edited(current, path, old_text, new_text, replace_all)
            old = current or ""
        except OSError as e:
            raise ToolFailed(os_reason(e)) from None
        return diff(old, new, self.root.show(target))

    def _file(self, given: str) -> Path:
        """The file a path names (``Root.resolve``); an empty path names none."""
        if not given.strip():
            raise ToolFailed("the path is empty; give the path of a file")
        return self.root.resolve(given)

    def _writable(self, given: str) -> Path:
        """The file a write or an edit changes, refused under ``.git`` (a hook or the config
        runs code at the next git command: approving a diff is not approving that) and when
        it is a hard link (its other names, maybe outside the root, would keep the old text:
        the write would split one file in two unseen). ADR 0026."""
        target = self._file(given)
        if target == self.root.path:
            raise ToolFailed(f"{given!r} is the directory the file tools work in; give the path of a file")
        if any(part.casefold() == ".git" for part in target.relative_to(self.root.path).parts):
            raise ToolFailed(
                f"{given!r} is inside .git: a change there (a hook, the config) runs code at the next git command, "
                "so the file tools do not write there; use run_command if it is meant (it shows the command and asks)"
            )
        with contextlib.suppress(OSError):
            _refuse_hard_link(os.lstat(target), given)
        return target

    def _open(self, target: Path, given: str, verb: str) -> int:
        """A descriptor of the regular file ``target``, or ``ToolFailed`` saying what it is."""
        try:
            return self._open_file(target)
        except FileNotFoundError:
            raise ToolFailed(f"{given!r} does not exist (under {self.root.path})") from None
        except NotRegular as e:
            if e.kind == "a directory":
                raise ToolFailed(f"{given!r} is a directory; list_files shows what is in it") from None
            raise ToolFailed(f"{given!r} is {e.kind}, not a regular file; {verb} regular files only") from None

    def _open_file(self, target: Path) -> int:
        """A read-only descriptor of the regular file ``target``, opened relative to its
        directory's descriptor, reached from the root (``Root.directory``)."""
        if target == self.root.path:
            raise NotRegular(target, "a directory")
        with self.root.directory(target.parent, named=target) as dir_fd:
            name = target.name if dir_fd is not None else str(target)
            try:
                return open_regular(name, dir_fd)
            except OSError as e:
                if e.errno == errno.ELOOP and is_link(name, dir_fd):
                    raise self.root.swapped(target) from None
                raise

    def _current(self, target: Path, given: str) -> str | None:
        """The file's text (undecodable bytes kept as surrogates, so they are written back
        exactly), None when it does not exist yet."""
        try:
            fd = self._open_file(target)
        except FileNotFoundError:
            return None
        except NotRegular as e:
            raise ToolFailed(f"{given!r} is {e.kind}; the file tools change regular files only") from None
        with open(fd, "rb") as f:
            data = f.read(MAX_EDITED_FILE + 1)
        if len(data) > MAX_EDITED_FILE:
            raise ToolFailed(f"{given!r} is larger than {MAX_EDITED_FILE // (1024 * 1024)} MB; the file tools "
                             "change smaller files (use run_command for this one)")  # fmt: skip
        if b"\x00" in data[:BINARY_SNIFF]:
            raise ToolFailed(f"{given!r} is a binary file; the file tools change text files only")
        return data.decode("utf-8", "surrogateescape")

    def _edited(
        self, current: str | None, given: str, old_text: str, new_text: str, replace_all: bool
    ) -> tuple[str, int]:
        if current is None:
            raise ToolFailed(f"{given!r} does not exist; write_file creates files")
        if not old_text:
            raise ToolFailed("old_text is empty; give the exact text to replace")
        count = current.count(old_text)
        if count == 0 and "\r\n" in current and "\n" in old_text and "\r" not in old_text:
            # The file has Windows line ends, the model wrote Unix ones (read_file shows \r\n
            # as line ends a model does not copy): match and replace with the file's own.
            old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\r\n", "\n").replace("\n", "\r\n")
            count = current.count(old_text)
        if count == 0:
            raise ToolFailed(f"old_text was not found in {given!r}; read the file and copy the text exactly")
        if count > 1 and not replace_all:
            raise ToolFailed(
                f"old_text occurs {count} times in {given!r}; include more context to make it unique, "
                "or pass replace_all=true"
            )
        return current.replace(old_text, new_text, -1 if replace_all else 1), count if replace_all else 1

    def _write(self, target: Path, data: bytes) -> None:
        """Write atomically: a temporary file beside the target, then a rename over it (a
        rename replaces a planted link itself, never the file it points to), both relative to
        the descriptor of the target's directory, reached from the root. An existing file
        keeps its mode; a new one gets what the umask gives (``0o666 & ~umask``)."""
        try:
            with self.root.directory(target.parent, create=True, named=target) as dir_fd:
                self._replace(dir_fd, target, data)
        except OSError as e:
            raise ToolFailed(f"cannot write {self.root.show(target)!r}: {e.strerror or e}") from None

    def _replace(self, dir_fd: int | None, target: Path, data: bytes) -> None:
        name = target.name if dir_fd is not None else str(target)
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            mode = 0o666 & ~umask()
        else:
            if stat.S_ISLNK(st.st_mode):
                raise self.root.swapped(target)
            _refuse_hard_link(st, self.root.show(target))
            mode = stat.S_IMODE(st.st_mode)
        tmp = f".{target.name[:100]}.{secrets.token_hex(6)}.golem-tmp"
        tmp = tmp if dir_fd is not None else str(target.parent / tmp)
        fd = os.open(tmp, _NEW_FILE, 0o600, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                os.chmod(f.fileno(), mode)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def _refuse_hard_link(st: os.stat_result, given: str) -> None:
    """``ToolFailed`` for a regular file with more than one name (ADR 0026)."""
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise ToolFailed(
            f"{given!r} is a hard link: the file has {st.st_nlink} names, and another may be outside the directory "
            "the file tools may use; they do not write to it (its other names would keep the old text). Copy it "
            "to a file of its own first if it is meant"
        )


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _encode(text: str) -> bytes:
    """UTF-8, with the undecodable bytes of the original file (kept as surrogates) restored."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise ToolFailed(f"the text contains a character that cannot be written ({e.reason})") from None


def _kind(mode: int) -> str:
    from golem_cli.tools.regular import kind_of

    return kind_of(mode)


def _listing_mark(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISDIR(mode):
        return "/"
    return "" if stat.S_ISREG(mode) else f"  [{_kind(mode)}]"


def _skip_lines(f: BinaryIO, count: int) -> bytes | None:
    """Read past ``count`` lines; the bytes read after them (None at the end of the file)."""
    rest = b""
    while count > 0:
        chunk = f.read(READ_CHUNK)
        if not chunk:
            return None
        newlines = chunk.count(b"\n")
        if newlines < count:
            count -= newlines
            continue
        pos = -1
        for _ in range(count):
            pos = chunk.index(b"\n", pos + 1)
        rest, count = chunk[pos + 1 :], 0
    if rest:
        return rest
    chunk = f.read(READ_CHUNK)
    return chunk or None


def _lines(f: BinaryIO, first: bytes, longest: int) -> Iterator[tuple[str, bool]]:
    """The lines of ``f`` from ``first`` on, decoded (bad bytes replaced), ends kept; a line
    longer than ``longest`` comes as its first ``longest`` characters with ``True`` and the
    rest of it is read past, never held."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buffer = decoder.decode(first)
    done = False

    def more() -> str:
        nonlocal done
        chunk = f.read(READ_CHUNK)
        if not chunk:
            done = True
            return decoder.decode(b"", final=True)
        return decoder.decode(chunk)

    while True:
        end = buffer.find("\n", 0, longest)
        if end >= 0:
            yield buffer[: end + 1], False
            buffer = buffer[end + 1 :]
            continue
        if len(buffer) >= longest:
            yield buffer[:longest], True
            buffer = buffer[longest:]
            while (end := buffer.find("\n")) < 0:
                if done:
                    return
                buffer = more()
            buffer = buffer[end + 1 :]
            continue
        if done:
            if buffer:
                yield buffer, False
            return
        buffer += more()


def _clip_lines(text: str) -> str:
    """At most ``DIFF_LINES`` lines of at most ``DIFF_WIDTH`` characters (a one-line file of
    200,000 characters must not scroll the question away)."""
    lines = text.splitlines()
    out = [line if len(line) <= DIFF_WIDTH else line[:DIFF_WIDTH] + f"… ({len(line) - DIFF_WIDTH:,} more characters)"
           for line in lines[:DIFF_LINES]]  # fmt: skip
    if len(lines) > DIFF_LINES:
        out.append(f"… {len(lines) - DIFF_LINES} more diff lines")
    return "\n".join(out)


def diff(old: str, new: str, name: str, *, created: bool = False) -> str:
    """A unified diff of the change, shortened to ``DIFF_LINES`` lines of ``DIFF_WIDTH``
    characters; bytes that are not UTF-8 are shown as ``\\xNN``, as they will be written."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "/dev/null" if created else f"a/{name}",
            f"b/{name}",
        )
    )
    if not lines:
        return f"(no change to {name})"
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _clip_lines(text)
