"""Project instructions: the ``AGENTS.md`` files of the directory the tools work in.

``AGENTS.md`` (or ``CLAUDE.md`` where a directory has no ``AGENTS.md``) in the tool root and
each parent up to the repository's root (the first directory holding ``.git``; outside a
repository, the tool root alone) join the instructions of every run, after the system
prompt, outermost first, at most ``LIMIT`` bytes in all (cut with a line saying so). They
are read again for every run, as the runtime resolves instructions, and never written into
the history file. Each file is read as any outside file: a regular file, bounded, never
blocking (``read_outside``); one that cannot be read is left out and named.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from msgspec import Struct

NAMES = ("AGENTS.md", "CLAUDE.md")
LIMIT = 32 * 1024


class Instructions(Struct, frozen=True, kw_only=True):
    """The project instructions of one run: the files read (outermost first), their joined
    text (cut at ``LIMIT``), and the files that could not be read, with why."""

    files: tuple[tuple[Path, int], ...] = ()  # each file and its size in bytes
    text: str = ""
    cut: bool = False
    problems: tuple[str, ...] = ()

    def summary(self, root: Path) -> str:
        """``../AGENTS.md (0.4 KB), AGENTS.md (2.1 KB)`` for the banner, each path relative to
        ``root`` ("" when there are none)."""
        return ", ".join(f"{os.path.relpath(path, root)} ({size / 1024:.1f} KB)" for path, size in self.files)


def directories(root: Path) -> list[Path]:
    """The tool root and its parents up to the repository's root, outermost first (the
    root alone outside a repository)."""
    root = root.resolve()
    chain: list[Path] = []
    for directory in (root, *root.parents):
        chain.append(directory)
        if (directory / ".git").exists():
            return list(reversed(chain))
    return [root]


def read_instructions(root: Path) -> Instructions:
    """The project instructions for a run in ``root``."""
    files: list[tuple[Path, int]] = []
    pieces: list[str] = []
    problems: list[str] = []
    for directory in directories(root):
        path = next((directory / name for name in NAMES if (directory / name).exists()), None)
        if path is None:
            continue
        try:
            data = read_outside(path, LIMIT + 1)
        except OSError as e:
            problems.append(f"{path}: {e.strerror or e}")
            continue
        files.append((path, len(data)))
        pieces.append(f"Project instructions from {path}:\n\n" + data.decode("utf-8", "replace").strip())
    text = "\n\n".join(pieces)
    cut = len(text.encode()) > LIMIT
    if cut:
        text = text.encode()[:LIMIT].decode("utf-8", "ignore")
        text += f"\n\n[project instructions cut at {LIMIT // 1024} KB; the rest of the files above is left out]"
    return Instructions(files=tuple(files), text=text, cut=cut, problems=tuple(problems))


def read_outside(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` when it is a regular file (``OSError`` otherwise),
    opened without blocking on a FIFO or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        chunks: list[bytes] = []
        left = limit
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# --- the project's rules: .golem/config.toml ----------------------------------------------------

PROJECT_FILE = Path(".golem") / "config.toml"
PROJECT_KEYS = ("tools", "allow", "deny")
MAX_PROJECT_FILE = 64 * 1024


class ProjectRules(Struct, frozen=True, kw_only=True):
    """What a project's ``.golem/config.toml`` says (only ``tools``, ``allow``, ``deny``), the
    hash of its bytes (what trust is given to), and what in it golem could not use."""

    path: Path
    digest: str = ""
    tools: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.tools or self.allow or self.deny)

    def described(self) -> str:
        said = [f"{key} = {list(getattr(self, key))}" for key in PROJECT_KEYS if getattr(self, key)]
        return "; ".join(said)


def read_project_rules(root: Path) -> ProjectRules | None:
    """The project file of ``root``, or None when there is none. A file that cannot be read or
    parsed gives rules with only ``problems`` (nothing of it applies)."""
    path = root.resolve() / PROJECT_FILE
    if not path.exists():
        return None
    import hashlib  # only for a project that has the file: a chat's prompt waits for this
    import tomllib

    try:
        data = read_outside(path, MAX_PROJECT_FILE + 1)
        if len(data) > MAX_PROJECT_FILE:
            raise OSError(0, f"larger than {MAX_PROJECT_FILE // 1024} KB")
        table = tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as e:
        return ProjectRules(path=path, problems=(f"{path}: {getattr(e, 'strerror', None) or e}",))
    problems = [f"{path}: {key} is not a key of a project file (only {', '.join(PROJECT_KEYS)})"
                for key in table if key not in PROJECT_KEYS]  # fmt: skip
    lists: dict[str, tuple[str, ...]] = {}
    for key in PROJECT_KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{path}: {key} must be a list of strings")
            value = []
        lists[key] = tuple(value)
    return ProjectRules(path=path, digest=hashlib.sha256(data).hexdigest(), problems=tuple(problems), **lists)


def trust_file() -> Path:
    from golem_cli.config.paths import config_dir

    return config_dir() / "trusted-projects.json"


def trusted(rules: ProjectRules) -> bool:
    """Whether the person trusted this file, as it is now (its path and the hash of its bytes)."""
    return bool(rules.digest) and _trust_table().get(str(rules.path)) == rules.digest


def trust(rules: ProjectRules) -> None:
    """Record that the person trusts this file as it is now; a change asks again."""
    import json

    table = _trust_table()
    table[str(rules.path)] = rules.digest
    _replace(trust_file(), json.dumps(table, indent=1, sort_keys=True).encode())


def _trust_table() -> dict[str, str]:
    import json

    try:
        table = json.loads(read_outside(trust_file(), 4 * 1024 * 1024))
    except (OSError, ValueError):
        return {}
    return (
        {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(table, dict) else {}
    )


def remember(root: Path, allow: tuple[str, ...]) -> ProjectRules:
    """Add ``allow`` rules to the project file (created if need be), written whole in golem's
    spelling (the file holds only tools, allow and deny), and trust it as written."""
    import json

    now = read_project_rules(root) or ProjectRules(path=root.resolve() / PROJECT_FILE)
    lists = {key: list(getattr(now, key)) for key in PROJECT_KEYS}
    lists["allow"] += [rule for rule in allow if rule not in lists["allow"]]
    text = "".join(f"{key} = [{', '.join(json.dumps(v) for v in values)}]\n" for key, values in lists.items() if values)
    _replace(now.path, text.encode())
    written = read_project_rules(root)
    assert written is not None
    trust(written)
    return written


def _replace(path: Path, data: bytes) -> None:
    """``path`` replaced whole by ``data`` (a temporary file renamed over it, private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
