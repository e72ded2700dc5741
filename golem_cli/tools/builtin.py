"""The built-in tools: groups ``fs`` (files), ``shell`` (commands) and ``web`` (pages).

``BuiltinSource(settings)`` builds them over one ``ToolSettings``: the root the file tools
and commands are confined to, the output limit, the command timeout, the fetch size. Reading,
listing and searching run without a question; writing, editing, running a command and
fetching a page need approval (their calls show a diff, the command, the URL).
"""

# No ``from __future__ import annotations``: the tools' parameter descriptions are f-strings
# over this source's settings, evaluated when the functions are defined.
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from msgspec import Struct, field

from golem_cli.core.tools import Tool, ToolContext
from golem_cli.tools.command_env import CommandEnv
from golem_cli.tools.confine import Root
from golem_cli.tools.files import FileTools
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT
from golem_cli.tools.registry import BUILTIN, ToolEntry
from golem_cli.tools.rules import COMMAND, PATH, URL
from golem_cli.tools.search import DEFAULT_DEADLINE
from golem_cli.tools.shell import DEFAULT_TIMEOUT, Shell
from golem_cli.tools.threads import off_thread
from golem_cli.tools.web import DEFAULT_MAX_BYTES, PrivateGate, Web

FS, SHELL, WEB = "fs", "shell", "web"


class ToolSettings(Struct, frozen=True, kw_only=True):
    """How the built-in tools behave. ``config.toml`` sets the first three (``tool_root``,
    ``tool_output_limit``, ``command_timeout``) and what a command's environment leaves out
    (``command_env``, with the credentials golem is configured with); the fetch size and the
    search deadline are golem's own."""

    root: Path = field(default_factory=Path.cwd)
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    command_timeout: float = DEFAULT_TIMEOUT
    fetch_max_bytes: int = DEFAULT_MAX_BYTES
    search_timeout: float = DEFAULT_DEADLINE
    command_env: CommandEnv = field(default_factory=CommandEnv)
    #: which URLs on a non-public address ``fetch_url`` may fetch (the toolbox's allow rules)
    private_urls: PrivateGate = field(default_factory=PrivateGate)


class BuiltinSource:
    """The ``builtin`` tool source."""

    name = BUILTIN

    def __init__(self, settings: ToolSettings | None = None) -> None:
        self.settings = settings or ToolSettings()
        root = Root(self.settings.root)
        self.root = root
        files = FileTools(root, self.settings.output_limit, self.settings.search_timeout)
        shell = Shell(root, self.settings.output_limit, self.settings.command_timeout, self.settings.command_env)
        web = Web(self.settings.output_limit, self.settings.fetch_max_bytes, gate=self.settings.private_urls)
        here = root.path == Path(os.getcwd()).resolve()  # paths are then best given relative
        where = "relative to the working directory" if here else f"relative to {root.path}"
        self._entries = [
            *_reading_tools(files, where),
            *_writing_tools(files, where),
            _command_tool(shell, "the working directory" if here else str(root.path)),
            _fetch_tool(web),
        ]

    def entries(self) -> Sequence[ToolEntry]:
        return list(self._entries)

    async def start(self) -> None:
        """Nothing to start: the built-ins are functions."""

    async def close(self) -> None:
        """Kill any command group still running."""
        from golem_cli.tools.shell import kill_live_groups

        kill_live_groups()


def _reading_tools(files: FileTools, where: str) -> list[ToolEntry]:
    """``read_file``, ``list_files``, ``search_files``: no question asked."""

    async def read_file(
        path: Annotated[str, f"the file, {where}"],
        start_line: Annotated[int, "first line to read (1-based)"] = 1,
        max_lines: Annotated[int, "how many lines at most"] = 2000,
    ) -> str:
        """Read a text file (a slice of its lines for large files)."""
        return await off_thread(files.read_file, path, start_line, max_lines)

    async def list_files(
        path: Annotated[str, f"the directory, {where}"] = ".",
        max_depth: Annotated[int, "how many directory levels to descend"] = 3,
    ) -> str:
        """List files and directories (skipping .git and what .gitignore excludes)."""
        return await off_thread(files.list_files, path, max_depth)

    async def search_files(
        pattern: Annotated[str, "a regular expression (Python syntax), or text with literal=true"],
        path: Annotated[str, f"where to search, {where}"] = ".",
        literal: Annotated[bool, "search for the pattern as plain text"] = False,
        ignore_case: Annotated[bool, "match regardless of case"] = False,
    ) -> str:
        """Search file contents for a pattern.

        Answers `path:line: text` for each match; ignored and binary files are skipped.
        """
        return await files.search_files(pattern, path, literal, ignore_case)

    return [
        ToolEntry(tool=Tool(tool), source=BUILTIN, group=FS, needs_approval=False, matched_on=(PATH, "path"))
        for tool in (read_file, list_files, search_files)
    ]


def _writing_tools(files: FileTools, where: str) -> list[ToolEntry]:
    """``write_file`` and ``edit_file``: the person approves the diff first."""

    async def write_file(
        context: ToolContext,
        path: Annotated[str, f"the file, {where}"],
        content: Annotated[str, "the whole new content of the file"],
    ) -> str:
        """Create or replace a text file with the given content (the user approves the diff)."""
        return await off_thread(files.write_file, path, content, context.before_change)

    async def edit_file(
        context: ToolContext,
        path: Annotated[str, f"the file, {where}"],
        old_text: Annotated[str, "exact text to replace; must occur once unless replace_all"],
        new_text: Annotated[str, "the replacement text"],
        replace_all: Annotated[bool, "replace every occurrence"] = False,
    ) -> str:
        """Replace exact text in a file (the user approves the diff)."""
        return await off_thread(files.edit_file, path, old_text, new_text, replace_all, context.before_change)

    def write_preview(args: dict[str, Any]) -> str:
        return files.preview_write(args["path"], args["content"])

    def edit_preview(args: dict[str, Any]) -> str:
        return files.preview_edit(args["path"], args["old_text"], args["new_text"], args.get("replace_all", False))

    return [
        ToolEntry(
            tool=Tool(write_file, sequential=True),
            source=BUILTIN,
            group=FS,
            needs_approval=True,
            preview=write_preview,
            matched_on=(PATH, "path"),
        ),
        ToolEntry(
            tool=Tool(edit_file, sequential=True),
            source=BUILTIN,
            group=FS,
            needs_approval=True,
            preview=edit_preview,
            matched_on=(PATH, "path"),
        ),
    ]


def _command_tool(shell: Shell, place: str) -> ToolEntry:
    """``run_command``: the person approves the command first."""
    limit = f"{shell.timeout:g}"

    async def run_command(
        context: ToolContext,
        command: Annotated[str, f"a shell command (/bin/sh), run in {place}"],
        timeout: Annotated[float, f"seconds before it is killed; at most {limit} (0: {limit})"] = 0,
    ) -> str:
        """Run a shell command (the user approves the command).

        Answers its exit status and output (standard output and error, interleaved). It
        waits until the command and everything holding its output have ended: start a
        server or other long-running program with its output redirected
        (`cmd > log 2>&1 &`), or it is killed at the timeout.
        """
        return await shell.run_command(command, timeout or None, context.output)

    def command_preview(args: dict[str, Any]) -> str:
        return f"$ {args.get('command', '')}\n(in {shell.root.path})"

    return ToolEntry(
        tool=Tool(run_command, sequential=True),
        source=BUILTIN,
        group=SHELL,
        needs_approval=True,
        preview=command_preview,
        matched_on=(COMMAND, "command"),
    )


def _fetch_tool(web: Web) -> ToolEntry:
    """``fetch_url``: the person approves the URL first."""

    async def fetch_url(url: Annotated[str, "an http or https URL"]) -> str:
        """Fetch a web page and answer it as readable text (the user approves the URL)."""
        return await web.fetch_url(url)

    def url_preview(args: dict[str, Any]) -> str:
        return f"GET {args.get('url', '')}"

    return ToolEntry(
        tool=Tool(fetch_url), source=BUILTIN, group=WEB, needs_approval=True, preview=url_preview,
        matched_on=(URL, "url"),
    )  # fmt: skip
