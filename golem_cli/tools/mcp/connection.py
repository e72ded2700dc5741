"""One tool server, connected: started, its tools listed, called, restarted once, stopped.

The SDK's ``Client`` must be entered and left in the same task (it holds task groups), so each
connection lives in a task of its own, ``_run``, which connects, lists the tools, reports
ready and waits for ``close`` or for the server to go away. Calls are made from the run's own
task through the connected client; a call that is cancelled (Ctrl-C) sends MCP's
cancellation notification (the SDK does, when the awaiting task is cancelled).

Faults become words, never tracebacks:

* a server that cannot be run, exits, or does not answer within ``startup_timeout`` fails
  ``start`` with ``ServerFailed`` (one line: what happened, and the last thing it said on
  standard error);
* a call whose server goes away is a ``failed`` result saying so; the next call starts the
  server again, once per chat: a server that stops twice stays stopped;
* a server that stops between calls leaves a notice (``notify``) for the CLI to show;
* a call that takes longer than ``tool_timeout`` is cancelled and is a ``failed`` result;
* an HTTP server that refuses the connection is its status and its own words, and a 401 says
  to log in (``golem mcp login NAME``).

What the server may do besides answering calls goes through ``ServerHooks`` (``hooks.py``): a
question for the user (elicitation; declined at once when nobody can be asked), a call's
progress, log lines. The roots golem offers are the tool root. A ``list_changed``
notification marks the list stale (``changed``); the toolbox lists it again between turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
import pydantic
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.hooks import Elicitation, ServerHooks, form_fields, shown
from golem_cli.tools.mcp.http import HttpTransport
from golem_cli.tools.mcp.oauth import Login, NeedsLogin
from golem_cli.tools.mcp.transport import MAX_MESSAGE, StdioTransport, quiet_sdk_logs

Transport = StdioTransport | HttpTransport

#: Tool listings golem reads at most (pages of the server's ``tools/list``).
MAX_LIST_PAGES = 20
MAX_TOOLS = 500
#: The most argument completions golem takes from a server (the protocol's own limit is 100).
MAX_COMPLETIONS = 100
_CLOSE_TIMEOUT = 5.0
#: The lists a server can say have changed, by the notification's method.
CHANGES = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class ServerFailed(Exception):
    """The server did not start; the message says why, in words."""


class Connection:
    """The live connection to one server (see the module docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        notify: Callable[[str], None] = lambda line: None,
        *,
        max_message: int = MAX_MESSAGE,
        transport: Transport | None = None,
        hooks: ServerHooks | None = None,
        root: Path | None = None,
        login: Login | None = None,
    ) -> None:
        self.config = config
        self.login = login
        self.notify = notify
        self.hooks = hooks or ServerHooks()
        self.root = root
        #: What the server said at start for the model (its ``instructions``), "" when nothing.
        self.instructions = ""
        #: The lists the server said have changed since they were last read.
        self.changed: set[str] = set()
        self.max_message = max_message
        self._spawned = transport  # a process started before the SDK was imported (``McpSource.start``)
        self.restarts_left = 1
        self._client: Client | None = None
        self._transport: Transport | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._calls = 0  # calls in flight: a stop during one is said by its result
        self._lock = asyncio.Lock()
        self.gone = ""  # why the server is not running, once it stopped

    @property
    def name(self) -> str:
        return self.config.name

    # --- starting and stopping ---------------------------------------------------------------

    async def start(self) -> list[dict[str, Any]]:
        """Connect and list the tools (as JSON objects); ``ServerFailed`` when that does not
        happen within ``startup_timeout``."""
        quiet_sdk_logs()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[dict[str, Any]]] = loop.create_future()
        self._stop = asyncio.Event()
        self.gone = ""
        self._transport = self._spawned or transport_for(self.config, self.max_message, self.login)
        self._spawned = None
        self._task = asyncio.create_task(self._run(self._transport, ready), name=f"mcp:{self.name}")
        try:
            done, _ = await asyncio.wait({ready}, timeout=self.config.table.startup_timeout_sec)
        except BaseException:
            await self._end()
            raise
        if not done:
            await self._end()
            raise ServerFailed(self._explain(f"did not start within {self.config.table.startup_timeout_sec:g} s"))
        try:
            return ready.result()
        except Exception as e:
            await self._end()
            raise ServerFailed(self._explain(describe_start_failure(e, self.config, self._transport))) from None

    async def _run(self, transport: Transport, ready: asyncio.Future[list[dict[str, Any]]]) -> None:
        from golem_cli import __version__

        try:
            async with Client(
                transport, client_info=Implementation(name="golem", version=__version__), cache=None,
                message_handler=self._on_message, elicitation_callback=self._on_elicit,
                list_roots_callback=self._on_roots, logging_callback=self._on_log,
                log_level="debug" if self.hooks.debug else "warning",
            ) as client:  # fmt: skip
                tools = await self.list_tools(client)
                self.instructions = client.instructions or ""
                self.changed.clear()
                self._client = client
                ready.set_result(tools)
                stop = asyncio.ensure_future(self._stop.wait())
                closed = asyncio.ensure_future(transport.closed.wait())
                listening = asyncio.ensure_future(self._listen(client))
                try:
                    await asyncio.wait({stop, closed}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    closed.cancel()
                    listening.cancel()
                    with contextlib.suppress(BaseException):
                        await listening
                self._client = None
        except Exception as e:
            if not ready.done():
                ready.set_exception(e)
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        finally:
            self._client = None
        if ready.done() and not ready.cancelled() and ready.exception() is None and not self._stop.is_set():
            self.gone = self._explain("stopped")
            if self._calls == 0:
                self.notify(f"tool server {self.name!r} {self.gone}; {self._after_stop()}")

    async def _end(self) -> None:
        """Stop the connection task and wait for it (the process is stopped on its way out)."""
        task = self._task
        if task is None:
            return
        self._stop.set()
        if not task.done() and self._client is not None:  # connected: it sees the stop and says goodbye
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), _CLOSE_TIMEOUT)
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task
        self._task = None

    async def close(self) -> None:
        await self._end()

    # --- calls -------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], call_id: str = "") -> dict[str, Any]:
        """Call ``tool``; its ``CallToolResult`` as a JSON object, or ``ToolFailed``. Its
        progress goes to the hooks under ``call_id``."""
        client = await self._client_for_call()
        self._calls += 1
        hooks = self.hooks

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if hooks.progress is not None:
                hooks.progress(call_id, progress, total, message)

        try:
            result = await client.call_tool(
                tool, arguments, read_timeout_seconds=self.config.table.tool_timeout_sec, progress_callback=progress
            )
        except MCPError as e:
            if e.code == CONNECTION_CLOSED or self._has_stopped():
                raise ToolFailed(await self._stopped_during_call()) from None
            refused = http_refusal(self._transport, self.config)
            if refused:
                raise ToolFailed(f"tool server {self.name!r}: {refused}") from None
            if e.code == REQUEST_TIMEOUT:
                raise ToolFailed(
                    f"tool server {self.name!r} did not answer within {self.config.table.tool_timeout_sec:g} s; "
                    "the call was cancelled"
                ) from None
            raise ToolFailed(f"tool server {self.name!r} refused the call: {clip(e.message)}") from None
        except pydantic.ValidationError:  # the SDK's models are pydantic's: not a CallToolResult
            raise ToolFailed(f"tool server {self.name!r} answered with something that is not a tool result") from None
        except (OSError, ExceptionGroup, NeedsLogin) as e:
            login = needs_login(e)
            if login is not None:
                raise ToolFailed(f"tool server {self.name!r}: {login_words(login, self.config)}") from None
            if self._has_stopped():
                raise ToolFailed(await self._stopped_during_call()) from None
            raise ToolFailed(f"tool server {self.name!r}: {clip(describe_error(e))}") from None
        finally:
            self._calls -= 1
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _has_stopped(self) -> bool:
        return self._transport is None or self._transport.closed.is_set() or self._task is None or self._task.done()

    async def _stopped_during_call(self) -> str:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), _CLOSE_TIMEOUT) if self._task else None
        self.gone = self.gone or self._explain("stopped")
        return f"tool server {self.name!r} {self.gone} during the call; {self._after_stop()}"

    def _after_stop(self) -> str:
        if self.restarts_left > 0:
            return "its next call starts it again"
        return "it stopped twice, so golem does not start it again in this chat"

    async def _client_for_call(self) -> Client:
        async with self._lock:
            if self._client is not None and not self._has_stopped():
                return self._client
            if self.restarts_left <= 0:
                raise ToolFailed(f"tool server {self.name!r} is not running: {self.gone or 'it stopped'}; "
                                 "it stopped twice, so golem does not start it again in this chat")  # fmt: skip
            self.restarts_left -= 1
            await self._end()
            try:
                await self.start()
            except ServerFailed as e:
                self.gone = str(e)
                self.restarts_left = 0
                raise ToolFailed(f"tool server {self.name!r} stopped and did not start again: {e}") from None
            assert self._client is not None
            return self._client

    # --- what the server asks and says -------------------------------------------------------

    async def list_tools(self, client: Client | None = None) -> list[dict[str, Any]]:
        """The tools golem offers of the server's (``enabled_tools``, ``disabled_tools``), as
        JSON objects, page by page, within ``MAX_LIST_PAGES`` and ``MAX_TOOLS`` (a cut is said)."""
        client = client or self._client
        if client is None:
            return []
        tools, more = await list_tools(client, self.config.offers)
        if more:
            self.notify(
                f"tool server {self.name!r} offers more than {MAX_TOOLS} tools; golem took the first {MAX_TOOLS}: "
                f"choose the ones to offer with enabled_tools = [...] in [mcp_servers.{self.name}]"
            )
        return tools

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts as JSON objects ([] when it offers none), within ``MAX_LIST_PAGES``."""
        client = self._client
        if client is None or client.server_capabilities.prompts is None:
            return []
        return await _pages(lambda cursor: client.list_prompts(cursor=cursor, cache_mode="bypass"), "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """The messages of the server's prompt ``name`` (``GetPromptResult`` as JSON), or ``ToolFailed``."""
        client = await self._client_for_call()
        try:
            result = await client.get_prompt(name, arguments)
        except MCPError as e:
            raise ToolFailed(f"tool server {self.name!r} refused the prompt: {clip(e.message)}") from None
        except (OSError, ExceptionGroup, pydantic.ValidationError) as e:
            raise ToolFailed(f"tool server {self.name!r}: {clip(describe_error(e))}") from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def list_resources(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The server's resources and resource templates as JSON objects (none when it offers none)."""
        client = self._client
        if client is None or client.server_capabilities.resources is None:
            return [], []
        resources = await _pages(lambda cursor: client.list_resources(cursor=cursor, cache_mode="bypass"), "resources")
        try:
            templates = await _pages(
                lambda cursor: client.list_resource_templates(cursor=cursor, cache_mode="bypass"), "resource_templates"
            )
        except MCPError:  # a server that lists resources need not have templates
            templates = []
        return resources, templates

    async def read_resource(self, uri: str) -> dict[str, Any]:
        """The server's resource ``uri`` (``ReadResourceResult`` as JSON), or ``ToolFailed``."""
        client = await self._client_for_call()
        try:
            result = await client.read_resource(uri, cache_mode="bypass")
        except MCPError as e:
            raise ToolFailed(f"tool server {self.name!r} could not read {clip(uri, 200)}: {clip(e.message)}") from None
        except (OSError, ExceptionGroup, pydantic.ValidationError) as e:
            raise ToolFailed(f"tool server {self.name!r}: {clip(describe_error(e))}") from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def complete(self, ref: dict[str, str], argument: str, value: str, given: dict[str, str]) -> list[str]:
        """The server's completions of ``argument`` (typed so far: ``value``) of a prompt
        (``{"type": "ref/prompt", "name": ...}``) or a resource template (``ref/resource``,
        ``uri``); [] when it offers none or cannot. At most ``MAX_COMPLETIONS``."""
        client = self._client
        if client is None or client.server_capabilities.completions is None:
            return []
        if ref.get("type") == "ref/prompt":
            reference: Any = mcp_types.PromptReference(type="ref/prompt", name=ref.get("name", ""))
        else:
            reference = mcp_types.ResourceTemplateReference(type="ref/resource", uri=ref.get("uri", ""))
        try:
            result = await client.complete(reference, {"name": argument, "value": value}, given or None)
        except (MCPError, OSError, ExceptionGroup, pydantic.ValidationError):
            return []  # a completion is a convenience: none is offered
        return [v for v in result.completion.values if isinstance(v, str)][:MAX_COMPLETIONS]

    async def _listen(self, client: Client) -> None:
        """On a 2026-07-28 connection the server's changes come on a ``subscriptions/listen``
        stream (earlier ones send notifications, ``_on_message``); a server that offers no
        such stream is not asked again."""
        from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        kinds = {ToolsListChanged: "tools", PromptsListChanged: "prompts", ResourcesListChanged: "resources"}
        with contextlib.suppress(Exception):
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as events:
                async for event in events:
                    kind = kinds.get(type(event))
                    if kind is not None:
                        self.changed.add(kind)

    async def _on_message(self, message: object) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str) and method in CHANGES:
            self.changed.add(CHANGES[method])

    async def _on_elicit(
        self, context: object, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            request = Elicitation(server=self.name, message=params.message, url=params.url)
        else:
            request = Elicitation(server=self.name, message=params.message, fields=form_fields(params.requested_schema))
        reply = await self.hooks.ask(request, self.notify)
        content = reply.content if reply.action == "accept" and not request.url else None
        return mcp_types.ElicitResult(action=reply.action, content=content)

    async def _on_roots(self, context: object) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        if self.root is None:
            return mcp_types.ListRootsResult(roots=[])
        root = self.root.expanduser().resolve()
        found = mcp_types.Root.model_validate({"uri": root.as_uri(), "name": root.name or str(root)})
        return mcp_types.ListRootsResult(roots=[found])

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        hooks = self.hooks
        if hooks.log is None or not shown(str(params.level), hooks.debug):
            return
        data = params.data if isinstance(params.data, str) else json_text(params.data)
        who = f"{params.logger}: " if params.logger else ""
        hooks.log(self.name, str(params.level), clip(who + data))

    # --- words -------------------------------------------------------------------------------

    def _explain(self, what: str) -> str:
        """``what`` happened, with the exit status and the last line of standard error."""
        transport = self._transport
        if transport is None:
            return what
        details = []
        if transport.problem:
            details.append(transport.problem)
        code = transport.returncode
        if code is not None:
            details.append(exit_status(code))
        said = last_line(transport.stderr.text())
        if said:
            details.append(f"it said: {clip(said, 200)}")
        return f"{what} ({'; '.join(details)})" if details else what


def transport_for(config: ServerConfig, max_message: int = MAX_MESSAGE, login: Login | None = None) -> Transport:
    if config.table.command is not None:
        return StdioTransport(config, max_message)
    return HttpTransport(config, max_message, login)


async def list_tools(client: Client, offers: Callable[[str], bool]) -> tuple[list[dict[str, Any]], bool]:
    """The server's tools that ``offers`` keeps, as JSON objects, page by page, within
    ``MAX_LIST_PAGES``/``MAX_TOOLS``; and whether there were more than that."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools if offers(t.name)]
        cursor = page.next_cursor
        if not cursor or len(tools) > MAX_TOOLS:
            break
    return tools[:MAX_TOOLS], len(tools) > MAX_TOOLS or bool(cursor)


async def _pages(fetch: Callable[[str | None], Any], field: str) -> list[dict[str, Any]]:
    """A listing's items as JSON objects, page by page, within ``MAX_LIST_PAGES`` and ``MAX_TOOLS``."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await fetch(cursor)
        found += [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in getattr(page, field)]
        cursor = page.next_cursor
        if not cursor or len(found) >= MAX_TOOLS:
            break
    return found[:MAX_TOOLS]


def login_words(error: NeedsLogin, config: ServerConfig) -> str:
    """A server that wants a person to authorise golem says to log in; a refused sign-in says why."""
    if str(error).startswith(("http://", "https://")):  # it gave an authorization URL: nobody is signed in
        return f"needs authorisation: run `golem mcp login {config.name}`"
    return f"could not sign in: {clip(str(error), 200)}"


def needs_login(error: BaseException) -> NeedsLogin | None:
    """The ``NeedsLogin`` in ``error`` (an exception group's first of each level)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error if isinstance(error, NeedsLogin) else None


def http_refusal(transport: Transport | None, config: ServerConfig) -> str:
    """What an HTTP server's refusal was, in words ("" when it did not refuse): a 401 says to
    log in, anything else the status and the server's own words."""
    if not isinstance(transport, HttpTransport) or transport.refusal is None:
        return ""
    status, words = transport.refusal
    if status == 401:
        return f"needs authorisation: run `golem mcp login {config.name}`"
    said = f": {clip(words, 200)}" if words else ""
    return f"the server answered HTTP {status}{said}"


def describe_start_failure(error: BaseException, config: ServerConfig, transport: Transport | None = None) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, NeedsLogin):
        return login_words(error, config)
    refused = http_refusal(transport, config)
    if refused:
        return refused
    if isinstance(error, FileNotFoundError) and config.table.command is not None:
        return f"cannot run {config.table.command!r}: no such program"
    if isinstance(error, PermissionError) and config.table.command is not None:
        return f"cannot run {config.table.command!r}: permission denied"
    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        return "exited at start" if config.table.command is not None else "closed the connection at start"
    if config.table.url is not None and isinstance(error, (OSError, httpx2.TransportError)):
        return f"cannot reach {config.where}: {describe_error(error)}"
    return describe_error(error)


def describe_error(error: BaseException) -> str:
    """One line for an error the SDK or the HTTP client raised (the first of a group)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return clip(error.message)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {clip(text[0])}" if text else type(error).__name__


def exit_status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("[golem:")]
    return lines[-1] if lines else ""


def json_text(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def clip(text: str, width: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
