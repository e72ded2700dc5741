"""``golem mcp list`` and ``golem mcp import FILE``: the configured tool servers, and servers
brought over from Claude Desktop's or Cursor's JSON; ``golem mcp login NAME`` and ``logout NAME``:
OAuth for an HTTP server (tokens in golem's state directory)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from golem_cli.cli.command import GolemCommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from golem_cli.config.mcp_import import Imported, Plan
    from golem_cli.tools.mcp.config import ServerConfig

app = typer.Typer(name="mcp", rich_help_panel="Chat",
                  help="Tool servers (MCP): list, import, login, logout.")  # fmt: skip


# --- list ----------------------------------------------------------------------------------


@app.command("list", cls=GolemCommand)
def list_servers(
    as_json: Annotated[bool, typer.Option("--json", help="Print the servers as JSON.")] = False,
    no_start: Annotated[bool, typer.Option("--no-start", help="Only show the configuration; start nothing.")] = False,
) -> int:
    """List the configured tool servers.

    How golem reaches each, whether it starts and how many tools it offers."""
    from golem_cli.cli.render.console import out, print_json
    from golem_cli.config.paths import config_file, state_dir
    from golem_cli.config.settings import load_settings
    from golem_cli.tools.mcp.config import server_configs

    configs = server_configs(load_settings().mcp_servers, tokens=state_dir() / "mcp-auth")
    status = {} if no_start else _start_each(list(configs.values()))
    if as_json:
        print_json([
            {"name": c.name, "transport": c.transport, "where": c.where, "enabled": c.table.enabled,
             "allow": list(c.table.allow), **status.get(c.name, {})}
            for c in configs.values()
        ])  # fmt: skip
        return 0
    if not configs:
        out(f"No tool servers configured. Add [mcp_servers.NAME] tables to {config_file()},")
        out("or bring them from Claude Desktop or Cursor: golem mcp import FILE.")
        return 0
    width = max(len(name) for name in configs)
    for c in configs.values():
        said = _state(c, status.get(c.name, {}))
        out(f"{c.name:<{width}}  {c.transport:<5}  {c.where}" + (f"\n{'':<{width}}  {said}" if said else ""))
    out("")
    out("Enable one in a chat with -T NAME (all its tools) or -T NAME.TOOL; golem tools lists the tools.")
    return 0


def _start_each(configs: list[ServerConfig]) -> dict[str, dict[str, Any]]:
    """Each enabled server started and stopped again, all at once: by name, whether it started
    (its tools and how long it took) or why not."""
    import asyncio
    import time

    status: dict[str, dict[str, Any]] = {}
    if not any(c.table.enabled for c in configs):
        return status
    from golem_cli.tools.mcp.source import McpSource

    async def check(source: McpSource) -> None:
        began = time.monotonic()
        try:
            await source.start()
        except Exception:
            status[source.group] = {"status": "failed", "problem": source.problem}
        else:
            status[source.group] = {"status": "ready", "tools": [e.own_name for e in source.entries()],
                                    "seconds": round(time.monotonic() - began, 2)}  # fmt: skip
        finally:
            await source.close()

    async def check_all() -> None:
        await asyncio.gather(*(check(McpSource(c)) for c in configs if c.table.enabled))

    asyncio.run(check_all())
    return status


def _state(config: ServerConfig, state: dict[str, Any]) -> str:
    """What became of a server, in words ("" when it was not started)."""
    if not config.table.enabled:
        return "disabled (enabled = false)"
    if state.get("status") == "ready":
        n = len(state["tools"])
        return f"ready, {n} tool{'s' if n != 1 else ''} ({state['seconds']:.1f} s)"
    if state.get("status") == "failed":
        return f"did not start: {state['problem']}"
    return ""


# --- import --------------------------------------------------------------------------------


@app.command("import", cls=GolemCommand)
def import_servers(
    file: Annotated[Path, typer.Argument(metavar="FILE", help='The JSON file to import ({"mcpServers": {...}}).')],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be added; write nothing.")] = False,
) -> int:
    """Add tool servers from a JSON file to config.toml.

    The file is Claude Desktop's or Cursor's: {"mcpServers": {...}}."""
    from golem_cli.cli.errors import InputError
    from golem_cli.cli.render.console import note, out
    from golem_cli.config import mcp_import
    from golem_cli.config.paths import config_file
    from golem_cli.store.files import UnreadableFile, read_regular

    try:
        data = read_regular(file, mcp_import.MAX_JSON_BYTES, what="a JSON file")
    except UnreadableFile as e:
        raise InputError(str(e)) from None
    except FileNotFoundError:
        raise InputError(f"{file}: no such file") from None
    except OSError as e:
        raise InputError(f"{file}: cannot read: {e.strerror or e}") from None
    servers = mcp_import.servers_from_json(data, str(file))
    result = mcp_import.plan(config_file(), servers, origin=file.name)
    for item in result.refused:
        note(f"golem: not imported: {item.source_name!r}: {item.refused}")
    if result.conflicts:
        for item in result.conflicts:
            note(f"golem: [mcp_servers.{item.name}] is already in {result.path} with other settings")
        raise InputError(
            f"nothing imported: {len(result.conflicts)} name(s) conflict with {result.path}",
            hint="remove or rename those tables in config.toml (or the servers in the JSON file) and import again",
        )
    for item in result.unchanged:
        out(f"unchanged: {item.name} (already in {result.path} with these settings)")
    if not result.added:
        if not result.unchanged:
            raise InputError(f"{file}: no server could be imported")
        return 0
    verb = "would add" if dry_run else "added"
    out(f"{verb} to {result.path}:")
    for item in result.added:
        out(_describe(item))
    if dry_run:
        out("(dry run: nothing written)")
        return 0
    _write(result)
    out("")
    names = [item.name for item in result.added]
    out(f"Use them in a chat with -T NAME (golem chat -T {names[0]}); golem mcp list checks they start.")
    out('Every call asks first; allow = ["read_*"] in a server\'s table lets matching tools run without asking.')
    return 0


def _describe(item: Imported) -> str:
    """A line for a server, without secrets: environment and header values are not shown."""
    from golem_cli.tools.mcp.config import ServerConfig

    assert item.server is not None  # an added server has its table
    config = ServerConfig(name=item.name, table=item.server)
    extra = []
    if item.table.get("env"):
        extra.append("env: " + ", ".join(item.table["env"]))
    if item.table.get("headers"):
        extra.append("headers: " + ", ".join(item.table["headers"]))
    if item.table.get("enabled") is False:
        extra.append("disabled")
    if item.ignored:
        extra.append("not imported: " + ", ".join(item.ignored))
    renamed = f" (was {item.source_name!r})" if item.name != item.source_name else ""
    details = f"  [{'; '.join(extra)}]" if extra else ""
    return f"  {item.name}{renamed}  {config.transport}  {config.where}{details}"


def _write(result: Plan) -> None:
    """The new text over config.toml: atomically, to the file a symlink points at (so a
    dotfiles link stays a link), keeping its mode (0600 for a new file: it may hold tokens)."""
    import os

    from golem_cli.store.atomic import PRIVATE_FILE, ensure_private_dir, write_atomic

    target = Path(os.path.realpath(result.path))
    try:
        mode = os.stat(target).st_mode & 0o777
    except FileNotFoundError:
        mode = PRIVATE_FILE
        ensure_private_dir(target.parent)
    write_atomic(target, result.text.encode("utf-8"), mode=mode)


# --- login, logout -------------------------------------------------------------------------

#: How long ``login`` waits for the person to sign in.
LOGIN_TIMEOUT = 600.0


def _server(name: str) -> ServerConfig:
    """The configured HTTP server ``name``, with its tokens' place; an ``InputError`` otherwise."""
    from golem_cli.config.paths import state_dir
    from golem_cli.config.settings import load_settings
    from golem_cli.core.errors import InputError
    from golem_cli.tools.mcp.config import server_configs

    configs = server_configs(load_settings().mcp_servers, tokens=state_dir() / "mcp-auth")
    config = configs.get(name)
    if config is None:
        known = ", ".join(sorted(configs)) or "none"
        raise InputError(f"no tool server named {name!r}", hint=f"configured: {known} (golem mcp list)")
    if config.table.url is None:
        raise InputError(f"tool server {name!r} is a command, not an HTTP server: it needs no login")
    if not config.oauth:
        raise InputError(f"tool server {name!r} has its credentials in config.toml (bearer_token_env_var or headers)")
    return config


@app.command("login", cls=GolemCommand)
def login(name: Annotated[str, typer.Argument(metavar="NAME", help="The HTTP tool server to sign in to.")]) -> int:
    """Sign in to an HTTP tool server with OAuth.

    golem shows the address to open in a browser (it opens nothing itself) and waits for the
    browser to come back to 127.0.0.1; on a machine without one, paste the address the
    browser ended at, or the code."""
    import asyncio

    from golem_cli.cli.render.console import out

    config = _server(name)
    tools = asyncio.run(_login(config))
    assert config.tokens is not None
    out(f"Signed in to {name}: {tools} tool{'s' if tools != 1 else ''}. Tokens are kept in {config.tokens}.")
    return 0


async def _login(config: ServerConfig) -> int:
    import asyncio
    import sys

    import msgspec

    from golem_cli.cli.render.console import out
    from golem_cli.cli.render.terminal_text import visible
    from golem_cli.core.errors import GolemError
    from golem_cli.tools.mcp.connection import Connection, ServerFailed
    from golem_cli.tools.mcp.oauth import Login, callback_server

    answers: asyncio.Queue[str] = asyncio.Queue()

    async def show(url: str) -> None:
        out(f"Open this address in a browser to let golem use {config.name}:")
        out("  " + visible(url))
        out("Waiting for the browser to come back; or paste here the address it ended at (or the code).")

    table = msgspec.structs.replace(config.table, startup_timeout_sec=LOGIN_TIMEOUT)
    config = msgspec.structs.replace(config, table=table)
    async with callback_server(answers) as redirect:
        paste = _pasted if sys.stdin is not None and not sys.stdin.closed else None
        connection = Connection(config, login=Login(show=show, paste=paste, redirect_uri=redirect, answers=answers))
        try:
            tools = await connection.start()
        except ServerFailed as e:
            raise GolemError(f"tool server {config.name!r}: {e}") from None
        finally:
            await connection.close()
    return len(tools)


async def _pasted() -> str:
    """A line typed or piped on stdin, read without a thread (nothing is left blocked at exit)."""
    import asyncio
    import sys

    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()
    fd = sys.stdin.fileno()
    buffer = bytearray()

    def readable() -> None:
        import os

        chunk = os.read(fd, 4096)
        buffer.extend(chunk)
        if (b"\n" in buffer or not chunk) and not line.done():
            line.set_result(buffer.decode("utf-8", "replace").split("\n")[0])

    loop.add_reader(fd, readable)
    try:
        return await line
    finally:
        loop.remove_reader(fd)


@app.command("logout", cls=GolemCommand)
def logout(name: Annotated[str, typer.Argument(metavar="NAME", help="The HTTP tool server to sign out of.")]) -> int:
    """Forget the OAuth tokens golem keeps for a tool server."""
    from golem_cli.cli.render.console import out
    from golem_cli.tools.mcp.tokens import TokenFile

    config = _server(name)
    assert config.tokens is not None
    if TokenFile(config.tokens, name).delete():
        out(f"Signed out of {name}: golem forgot its tokens.")
    else:
        out(f"golem kept no tokens for {name}.")
    return 0


# --- prompts, resources --------------------------------------------------------------------

Server = Annotated[str | None, typer.Argument(metavar="[SERVER]", help="One server (all enabled ones otherwise).")]
Json = Annotated[bool, typer.Option("--json", help="Print them as JSON.")]


def _listings(server: str | None, what: str) -> list[dict[str, Any]]:
    """Each chosen server started, asked for ``what`` (``prompts`` or ``resources``), stopped:
    a row per server with what it offers, or why it did not start."""
    import asyncio

    from golem_cli.config.paths import state_dir
    from golem_cli.config.settings import load_settings
    from golem_cli.core.errors import InputError
    from golem_cli.tools.mcp.config import server_configs
    from golem_cli.tools.mcp.source import McpSource

    configs = server_configs(load_settings().mcp_servers, tokens=state_dir() / "mcp-auth")
    if server is not None and server not in configs:
        raise InputError(f"no tool server named {server!r}", hint=f"configured: {', '.join(sorted(configs)) or 'none'}")
    chosen = [c for c in configs.values() if (c.name == server or server is None) and c.table.enabled]

    async def one(config: ServerConfig) -> dict[str, Any]:
        source = McpSource(config)
        try:
            await source.start()
            if what == "prompts":
                return {"server": config.name, "prompts": await source.prompts()}
            resources, templates = await source.resources()
            return {"server": config.name, "resources": resources, "templates": templates}
        except Exception:
            return {"server": config.name, "problem": source.problem or "it did not answer"}
        finally:
            await source.close()

    async def every() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(one(c) for c in chosen)))

    return asyncio.run(every())


def _show(server: str | None, what: str, as_json: bool, lines: Callable[[dict[str, Any]], list[str]]) -> int:
    """``prompts`` and ``resources``: the rows as JSON, or each server's ``lines`` (a line saying
    why when it did not start)."""
    from golem_cli.cli.render.console import out, print_json

    rows = _listings(server, what)
    if as_json:
        print_json(rows)
        return 0
    for row in rows:
        for line in [f"{row['server']}: did not start: {row['problem']}"] if "problem" in row else lines(row):
            out(line)
    return 0


@app.command("prompts", cls=GolemCommand)
def prompts(server: Server = None, as_json: Json = False) -> int:
    """List the prompts the tool servers offer (in a chat: /SERVER:PROMPT)."""
    return _show(server, "prompts", as_json, _prompt_lines)


def _prompt_lines(row: dict[str, Any]) -> list[str]:
    lines = [f"{row['server']}: {len(row['prompts'])} prompt{'s' if len(row['prompts']) != 1 else ''}"]
    for prompt in row["prompts"]:
        names = [a.get("name", "") + ("" if a.get("required") else "?") for a in prompt.get("arguments") or []]
        args = f" {' '.join(n + '=...' for n in names)}" if names else ""
        about = _first_line(prompt.get("description") or prompt.get("title") or "")
        lines.append(f"  /{row['server']}:{prompt.get('name', '')}{args}" + (f"  {about}" if about else ""))
    return lines


@app.command("resources", cls=GolemCommand)
def resources(server: Server = None, as_json: Json = False) -> int:
    """List the resources the tool servers offer, templates included (marked)."""
    return _show(server, "resources", as_json, _resource_lines)


def _resource_lines(row: dict[str, Any]) -> list[str]:
    items, templates = row["resources"], row["templates"]
    lines = [f"{row['server']}: {len(items)} resource{'s' if len(items) != 1 else ''}, "
             f"{len(templates)} template{'s' if len(templates) != 1 else ''}"]  # fmt: skip
    for item in items:
        kind = f" ({item['mimeType']})" if item.get("mimeType") else ""
        lines.append(f"  @{row['server']}:{item.get('uri', '')}{kind}  {_first_line(item.get('name') or '')}")
    for item in templates:
        name = _first_line(item.get("name") or "")
        lines.append(f"  @{row['server']}:{item.get('uriTemplate', '')}  [template]  {name}")
    return lines


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0][:100] if lines else ""
