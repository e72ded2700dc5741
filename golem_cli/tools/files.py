"""The file tools: read, list, search, write and edit files under the root.

Each is a plain function of its settings (``FileTools``) and the model's arguments; the
built-in source (``builtin.py``) turns them into tools. Reading is bounded (a slice of lines,
at most the output limit), searching walks with ``walk.Walk`` (ignore files, no binaries,
an entry budget), and writing shows a unified diff before it happens (the approval question
shows ``preview_write`` / ``preview_edit``) and writes atomically.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.confine import Root
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, cap
from golem_cli.tools.walk import Walk, is_binary

MAX_MATCHES = 200
MAX_LINE = 400  # characters of one matching line shown
MAX_LISTED = 1000
MAX_SEARCHED_FILE = 8 * 1024 * 1024  # bytes: larger files are skipped by search
DIFF_LINES = 400  # lines of a diff shown in the approval question


@dataclass(frozen=True)
class FileTools:
    root: Root
    output_limit: int = DEFAULT_OUTPUT_LIMIT

    # --- reading ---------------------------------------------------------------------------

    def read_file(self, path: str, start_line: int = 1, max_lines: int = 2000) -> str:
        target = self.root.resolve(path)
        if target.is_dir():
            raise ToolFailed(f"{path!r} is a directory; list_files shows what is in it")
        if not target.exists():
            raise ToolFailed(f"{path!r} does not exist (under {self.root.path})")
        if is_binary(target):
            raise ToolFailed(f"{path!r} is a binary file ({_size(target)}); read_file reads text")
        start = max(1, start_line)
        budget = self.output_limit * 4  # bytes read at most, whatever the file's size
        lines: list[str] = []
        used = 0
        more = False
        try:
            with open(target, encoding="utf-8", errors="replace", newline="") as f:
                for number, line in enumerate(f, 1):
                    if number < start:
                        continue
                    if len(lines) >= max(1, max_lines) or used > budget:
                        more = True
                        break
                    lines.append(line)
                    used += len(line)
        except OSError as e:
            raise ToolFailed(f"cannot read {path!r}: {e.strerror or e}") from None
        text = "".join(lines)
        if more:
            last = start + len(lines) - 1
            text += f"\n[golem: showing lines {start}-{last}; read on with start_line={last + 1}]"
        elif not lines and start > 1:
            text = f"[golem: the file has fewer than {start} lines]"
        return cap(text, self.output_limit)

    def list_files(self, path: str = ".", max_depth: int = 3) -> str:
        start = self.root.resolve(path)
        if not start.exists():
            raise ToolFailed(f"{path!r} does not exist (under {self.root.path})")
        walk = Walk(self.root, start, include_dirs=True, max_depth=max(1, max_depth))
        shown: list[str] = []
        for found in walk:
            if len(shown) >= MAX_LISTED:
                walk.truncated = True
                break
            shown.append(self.root.show(found) + ("/" if found.is_dir() and not found.is_symlink() else ""))
        if not shown:
            return f"{self.root.show(start)}: no files (ignored files are not listed)"
        if walk.truncated:
            shown.append(f"[golem: stopped after {len(shown)} entries; list a subdirectory for more]")
        return cap("\n".join(shown), self.output_limit)

    def search_files(self, pattern: str, path: str = ".", literal: bool = False, ignore_case: bool = False) -> str:
        if not pattern:
            raise ToolFailed("the pattern is empty")
        flags = re.IGNORECASE if ignore_case else 0
        try:
            regex = re.compile(re.escape(pattern) if literal else pattern, flags)
        except re.error as e:
            raise ToolFailed(
                f"{pattern!r} is not a valid regular expression ({e}); pass literal=true to search the text as is"
            ) from None
        start = self.root.resolve(path)
        if not start.exists():
            raise ToolFailed(f"{path!r} does not exist (under {self.root.path})")
        walk = Walk(self.root, start)
        matches: list[str] = []
        files = 0
        for found in walk:
            try:
                if found.stat().st_size > MAX_SEARCHED_FILE or is_binary(found):
                    continue
                with open(found, encoding="utf-8", errors="replace") as f:
                    files += 1
                    for number, line in enumerate(f, 1):
                        if regex.search(line):
                            text = line.rstrip("\r\n")
                            if len(text) > MAX_LINE:
                                text = text[:MAX_LINE] + "…"
                            matches.append(f"{self.root.show(found)}:{number}: {text}")
                            if len(matches) >= MAX_MATCHES:
                                break
            except OSError:
                continue
            if len(matches) >= MAX_MATCHES:
                break
        if not matches:
            return f"no matches for {pattern!r} in {files} files under {self.root.show(start)}"
        if len(matches) >= MAX_MATCHES:
            matches.append(f"[golem: stopped at {MAX_MATCHES} matches; narrow the pattern or the path]")
        elif walk.truncated:
            matches.append("[golem: the walk stopped early (too many files); search a subdirectory]")
        return cap("\n".join(matches), self.output_limit)

    # --- writing ---------------------------------------------------------------------------

    def write_file(self, path: str, content: str) -> str:
        target = self.root.resolve(path)
        old = self._current(target, path)
        self._write(target, content)
        verb = "replaced" if old is not None else "created"
        return f"{verb} {self.root.show(target)} ({len(content.encode('utf-8', 'surrogatepass')):,} bytes)"

    def edit_file(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        target = self.root.resolve(path)
        new, count = self._edited(target, path, old_text, new_text, replace_all)
        self._write(target, new)
        return f"edited {self.root.show(target)}: {count} replacement{'s' if count != 1 else ''}"

    def preview_write(self, path: str, content: str) -> str:
        """The diff the approval question shows (the refusal, if the path is refused)."""
        try:
            target = self.root.resolve(path)
            old = self._current(target, path)
        except ToolFailed as e:
            return f"(refused: {e.reason})"
        return diff(old or "", content, self.root.show(target), created=old is None)

    def preview_edit(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        try:
            target = self.root.resolve(path)
            new, _ = self._edited(target, path, old_text, new_text, replace_all)
            old = self._current(target, path) or ""
        except ToolFailed as e:
            return f"(will fail: {e.reason})"
        return diff(old, new, self.root.show(target))

    def _current(self, target: Path, given: str) -> str | None:
        """The file's text, None when it does not exist yet."""
        if target.is_dir():
            raise ToolFailed(f"{given!r} is a directory")
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ToolFailed(f"cannot read {given!r}: {e.strerror or e}") from None
        if b"\x00" in data[:8192]:
            raise ToolFailed(f"{given!r} is a binary file; the file tools change text files only")
        return data.decode("utf-8", "replace")

    def _edited(self, target: Path, given: str, old_text: str, new_text: str, replace_all: bool) -> tuple[str, int]:
        current = self._current(target, given)
        if current is None:
            raise ToolFailed(f"{given!r} does not exist; write_file creates files")
        if not old_text:
            raise ToolFailed("old_text is empty; give the exact text to replace")
        count = current.count(old_text)
        if count == 0:
            raise ToolFailed(f"old_text was not found in {given!r}; read the file and copy the text exactly")
        if count > 1 and not replace_all:
            raise ToolFailed(
                f"old_text occurs {count} times in {given!r}; include more context to make it unique, "
                "or pass replace_all=true"
            )
        return current.replace(old_text, new_text), count if replace_all else 1

    def _write(self, target: Path, content: str) -> None:
        """Write atomically: a temporary file beside the target, then a rename over it (a
        rename replaces a planted link itself, never the file it points to)."""
        parent = target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            if parent.resolve() != parent or not (parent == self.root.path or parent.is_relative_to(self.root.path)):
                raise ToolFailed(f"{self.root.show(target)!r} is outside the directory the file tools may use")
            mode = target.stat().st_mode & 0o777 if target.exists() else None
            fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".golem-tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
                    f.write(content)
                if mode is not None:
                    os.chmod(tmp, mode)
                os.replace(tmp, target)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as e:
            raise ToolFailed(f"cannot write {self.root.show(target)!r}: {e.strerror or e}") from None


def diff(old: str, new: str, name: str, *, created: bool = False) -> str:
    """A unified diff of the change, shortened to ``DIFF_LINES`` lines."""
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
    out = text.splitlines()
    if len(out) > DIFF_LINES:
        out = out[:DIFF_LINES] + [f"… {len(out) - DIFF_LINES} more diff lines"]
    return "\n".join(out)


def _size(path: Path) -> str:
    try:
        return f"{path.stat().st_size:,} bytes"
    except OSError:
        return "unknown size"
