"""Function tools: a Python function the model may call, described by a JSON schema.

``Tool(func)`` (or the ``@tool`` decorator) reads the function's signature and type hints and
builds two things from them with msgspec, the core's one dependency: a struct type that
decodes and validates the model's argument text, and the JSON schema the model is shown
(``Tool.definition()``). Descriptions come from the docstring (its ``Args:`` section names the
parameters) or from ``Annotated[T, "description"]``.

A tool steers the run with three exceptions (spec §7, §8):

* ``ToolFailed(reason)``: a definitive failure. The result message has ``failed=True`` and the
  reason as content; the model decides what to do next. Never counts against retries.
* ``ModelRetry(reason)``: the arguments were wrong and the model may fix them. Within the
  retry budget the model reads ``Your tool call was rejected: <reason>. Correct the
  arguments and call the tool again.``; past it the run fails at the ``tool`` stage.
  Arguments that do not decode into the signature are rejected this way automatically.
* ``ToolCanceled(reason)``: stop the whole run on purpose (stage ``canceled``). The batch is
  closed so the transcript needs no repair.

Any other exception fails the run at the ``tool`` stage. A tool returns text, a ``Part``, a
list mixing texts and at least one ``Part`` (texts joined by newlines), a ``ToolResult``,
``None`` (empty result), or any other value msgspec can encode (sent as its JSON text).

Sync functions run in a worker thread so a batch of calls runs in parallel; they cannot be
interrupted mid-call (Python cannot stop a thread), but the run stops waiting for them.

``SchemaTool`` is the other way to make a tool: a JSON schema given as data (a tool server's
declaration) and a function that receives the decoded argument object. The server, not golem,
judges those arguments, unless the tool is given a ``check`` that knows some of them fail.

Before a call runs, the run may ask the caller for approval (``RunHooks.approve``, given an
``ApprovalRequest``): ``Approval(True)`` runs it, ``Approval(False, reason)`` records a
``failed`` result with Go's denial text, raising ``ToolFailed(reason)`` records the call as
failed without running it (the caller knows it would fail: nothing to approve), and raising
``ToolCanceled`` (or an interruption while the question is open) stops the run with the batch
closed.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec
from msgspec import Struct

from golem_cli.core.messages import Part, ToolCall
from golem_cli.core.model import ToolDefinition

__all__ = [
    "APPROVED",
    "Approval",
    "ApprovalRequest",
    "ModelRetry",
    "SchemaTool",
    "Tool",
    "ToolCanceled",
    "ToolContext",
    "ToolFailed",
    "ToolResult",
    "ToolTimeoutError",
    "tool",
]


class ToolFailed(Exception):
    """The tool failed definitively; the reason becomes a ``failed`` tool result."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ModelRetry(Exception):
    """The call's arguments are wrong; ask the model to correct them (within the budget)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolCanceled(Exception):
    """The tool ends the run on purpose (stage ``canceled``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolTimeoutError(TimeoutError):
    """The tool ran past its ``timeout``; fails the run at the ``tool`` stage."""


class ToolResult(Struct, frozen=True, kw_only=True):
    """What a tool produced: text for the model and optional media parts (evidence)."""

    text: str = ""
    parts: tuple[Part, ...] = ()


class ToolContext(Struct, frozen=True, kw_only=True):
    """Given to a tool that declares a parameter of this type: which call it is answering,
    and ``output``, where it reports what it has produced so far (a command's output as it
    comes): the caller shows it while the call runs, and a call stopped before it finished
    keeps it in its result."""

    call_id: str
    tool_name: str
    args: str
    run_id: str = ""
    conversation_id: str = ""
    output: Callable[[str], None] | None = None
    #: Called by a tool about to change a file, with its path, its previous bytes (None: it
    #: does not exist) and the new ones, so the caller can keep them (``/undo``); an
    #: ``OSError`` from it means they could not be kept, and the file is not changed.
    before_change: Callable[[Path, bytes | None, bytes], None] | None = None


class Approval(Struct, frozen=True, kw_only=True):
    """The caller's answer to an ``ApprovalRequest``; ``reason`` (a denial's) is read by the model."""

    approved: bool
    reason: str = ""


APPROVED = Approval(approved=True)
#: The reason of the stop when the person presses Ctrl-C at an approval question.
STOPPED_AT_QUESTION = "the user stopped the run at the approval question"


class ApprovalRequest(Struct, frozen=True, kw_only=True):
    """A call about to run: the call as the model made it, the tool, and its decoded arguments."""

    call: ToolCall
    tool: Tool
    args: dict[str, Any]


#: Who stops a run when the cancellation does not say (Ctrl-C). A caller that stops it for
#: another reason cancels with a message starting ``STOP_PREFIX`` (``"golem: SIGTERM"``).
STOPPED_BY_USER = "the user (Ctrl-C)"
STOP_PREFIX = "golem: "


def stopped_by(stop: BaseException) -> str:
    """Who or what stopped a run, from its ``CancelledError`` (or ``KeyboardInterrupt``)."""
    said = stop.args[0] if stop.args and isinstance(stop.args[0], str) else ""
    return said[len(STOP_PREFIX) :] if said.startswith(STOP_PREFIX) else STOPPED_BY_USER


def stopped_text(by: str, seconds: float, output: str) -> str:
    """The result of a call that started and was stopped before it finished: it ran, so the
    model must not be told it never did (and call it again blindly)."""
    head = (
        f"The call was stopped by {by} after {seconds:.1f}s, while it was running: it had started and may have "
        "done part of its work, so check what it did before calling it again."
    )
    output = output.rstrip("\n")
    return f"{head}\nIts output so far:\n{output}" if output else f"{head}\nIt had produced no output."


def denial_text(reason: str) -> str:
    """Go golem's text for a denied call (spec §8), the content of its ``failed`` result."""
    if reason:
        return f"Your tool call was denied: {reason}. Do not call it again; continue without its result."
    return "Your tool call was denied. Do not call it again; continue without its result."


class Tool:
    """A function the model may call. See the module docstring for the contract.

    ``name`` defaults to the function name, ``description`` to the docstring's text before
    its ``Args:`` section. ``sequential=True`` makes the tool a barrier in a parallel batch:
    earlier calls finish, it runs alone, later calls start after it. ``max_retries``
    overrides the agent's ``tool_retries`` budget for this tool; ``timeout`` (seconds) bounds
    one execution.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        sequential: bool = False,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"tool function must be callable, got {func!r}")
        if max_retries is not None and max_retries < 0:
            raise ValueError(f"golem: tool {name!r}: max retries must not be negative, got {max_retries}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"golem: tool {name!r}: timeout must be positive, got {timeout}")
        self.func = func
        self.name: str = name or str(getattr(func, "__name__", ""))
        if not self.name:
            raise ValueError("golem: tool name is required")
        summary, param_docs = _parse_docstring(inspect.getdoc(func) or "")
        self.description = summary if description is None else description
        self.sequential = sequential
        self.max_retries = max_retries
        self.timeout = timeout
        self._is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - the bound method of a callable object
        )
        self._args_type, self._context_param = _args_struct(func, self.name, param_docs)
        self._fields = self._args_type.__struct_fields__
        try:
            self.parameters = _schema(self._args_type)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"golem: tool {self.name!r}: unsupported parameter types: {exc}") from exc

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    def definition(self) -> ToolDefinition:
        """The tool as a model sees it."""
        return ToolDefinition(name=self.name, description=self.description, parameters=self.parameters)

    def decode_args(self, args: str) -> dict[str, Any]:
        """The keyword arguments for the function; ``ModelRetry`` when they do not fit."""
        text = args.strip() or "{}"
        try:
            decoded = msgspec.json.decode(text.encode("utf-8", "surrogateescape"), type=self._args_type)
        except msgspec.ValidationError as exc:
            raise ModelRetry(f"invalid arguments: {exc}") from exc
        except (msgspec.DecodeError, UnicodeEncodeError) as exc:
            raise ModelRetry(f"arguments are not a valid JSON object: {exc}") from exc
        return {field: getattr(decoded, field) for field in self._fields}

    async def call(self, kwargs: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run the function on already decoded arguments (``decode_args``)."""
        kwargs = dict(kwargs)
        if self._context_param:
            kwargs[self._context_param] = context
        return await _invoke(self.func, (), kwargs, is_async=self._is_async, timeout=self.timeout)


async def _invoke(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, is_async: bool, timeout: float | None
) -> ToolResult:
    """Call ``func`` (awaited, or in a worker thread when sync) within ``timeout``."""
    if is_async:
        call: Awaitable[Any] = func(*args, **kwargs)
    else:
        call = asyncio.to_thread(func, *args, **kwargs)
    if timeout is not None:
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                value = await call
        except TimeoutError as exc:
            if deadline.expired():  # ours, not a TimeoutError the tool raised itself
                raise ToolTimeoutError(f"tool timed out after {timeout:g}s") from exc
            raise
    else:
        value = await call
    if inspect.isawaitable(value):  # a sync callable that returned a coroutine
        value = await value
    return to_tool_result(value)


class SchemaTool(Tool):
    """A tool declared as data: ``parameters`` is its JSON schema, sent as given, and
    ``func(arguments, context)`` (sync or async) receives the decoded argument object.

    golem checks only that the arguments are one JSON object (else ``ModelRetry``); the
    schema is the tool's own business (an MCP server validates and answers ``isError``).
    ``check(arguments)``, when given, says why arguments certainly fail the schema ("" when
    they may not): a ``ModelRetry`` too, so a call bound to fail is never asked about.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        func: Callable[[dict[str, Any], ToolContext], Any],
        *,
        sequential: bool = False,
        max_retries: int | None = None,
        timeout: float | None = None,
        check: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        if not name:
            raise ValueError("golem: tool name is required")
        if not isinstance(parameters, dict):
            raise TypeError(f"golem: tool {name!r}: parameters must be a JSON schema object")
        if max_retries is not None and max_retries < 0:
            raise ValueError(f"golem: tool {name!r}: max retries must not be negative, got {max_retries}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"golem: tool {name!r}: timeout must be positive, got {timeout}")
        self.func = func
        self.name = name
        self.description = description
        self.parameters = parameters
        self.sequential = sequential
        self.max_retries = max_retries
        self.timeout = timeout
        self._is_async = inspect.iscoroutinefunction(func)
        self._context_param = ""
        self._fields = ()
        self.check = check

    def __repr__(self) -> str:
        return f"SchemaTool(name={self.name!r})"

    def decode_args(self, args: str) -> dict[str, Any]:
        text = args.strip() or "{}"
        try:
            value = msgspec.json.decode(text.encode("utf-8", "surrogateescape"))
        except (msgspec.DecodeError, UnicodeEncodeError) as exc:
            raise ModelRetry(f"arguments are not a valid JSON object: {exc}") from exc
        if not isinstance(value, dict):
            raise ModelRetry(f"invalid arguments: Expected `object`, got `{_json_kind(value)}`")
        if self.check is not None and (problem := self.check(value)):
            raise ModelRetry(f"invalid arguments: {problem}")
        return value

    async def call(self, kwargs: dict[str, Any], context: ToolContext) -> ToolResult:
        return await _invoke(self.func, (kwargs, context), {}, is_async=self._is_async, timeout=self.timeout)


def _json_kind(value: Any) -> str:
    kinds = {list: "array", str: "str", bool: "bool", int: "int", float: "float", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    max_retries: int | None = None,
    timeout: float | None = None,
) -> Any:
    """Decorator form of ``Tool``: ``@tool`` or ``@tool(name=..., sequential=True)``."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f, name=name, description=description, sequential=sequential, max_retries=max_retries, timeout=timeout
        )

    return wrap(func) if func is not None else wrap


def to_tool_result(value: Any) -> ToolResult:
    """Normalize a tool's return value (see the module docstring for the accepted forms)."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, str):
        return ToolResult(text=value)
    if isinstance(value, Part):
        return ToolResult(parts=(value,))
    if isinstance(value, list | tuple) and value and all(isinstance(v, str | Part) for v in value):
        if any(isinstance(v, Part) for v in value):
            texts = [v for v in value if isinstance(v, str)]
            return ToolResult(text="\n".join(texts), parts=tuple(v for v in value if isinstance(v, Part)))
    return ToolResult(text=msgspec.json.encode(value).decode())


# --- signature -> struct -> schema ---------------------------------------------------------

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and per-parameter texts."""
    lines = doc.splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section = ""
    current = ""
    for line in lines:
        header = _SECTION.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if header:
            section = header.group(1)
            current = ""
            continue
        if not section:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params") and line.strip():
            match = _PARAM_LINE.match(line.strip())
            indent = len(line) - len(line.lstrip())
            if match and (indent <= 4 or not current):
                current = match.group(1).lstrip("*")
                params[current] = match.group(2).strip()
            elif current:
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), params


def _describe(hint: Any, text: str) -> Any:
    """``Annotated[T, "text"]`` (or a docstring text) -> ``Annotated[T, Meta(description=...)]``.
    A description given as a ``Meta`` wins, then the annotation's strings, then the docstring's."""
    base, extras = (get_args(hint)[0], get_args(hint)[1:]) if get_origin(hint) is Annotated else (hint, ())
    metas = [e for e in extras if not isinstance(e, str)]
    strings = [e for e in extras if isinstance(e, str)]
    if (strings or text) and not any(isinstance(m, msgspec.Meta) and m.description for m in metas):
        metas.append(msgspec.Meta(description=" ".join(strings) if strings else text))
    return Annotated[(base, *metas)] if metas else base


def _args_struct(
    func: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> tuple[type[msgspec.Struct], str]:
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else getattr(func, "__call__", func)  # noqa: B004
    signature = inspect.signature(target)
    try:
        hints = get_type_hints(target, include_extras=True)
    except Exception as exc:  # unresolvable forward references
        raise TypeError(f"golem: tool {tool_name!r}: cannot resolve type hints: {exc}") from exc
    fields: list[tuple[Any, ...]] = []
    context_param = ""
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"golem: tool {tool_name!r}: parameter {param.name!r} must be a plain or keyword parameter")
        hint = hints.get(param.name, Any)
        if hint is ToolContext:
            context_param = param.name
            continue
        hint = _describe(hint, param_docs.get(param.name, ""))
        if param.default is param.empty:
            fields.append((param.name, hint))
        elif isinstance(param.default, list | dict | set):
            fields.append(
                (param.name, hint, msgspec.field(default_factory=functools.partial(copy.deepcopy, param.default)))
            )
        else:
            fields.append((param.name, hint, param.default))
    struct_name = "".join(p.capitalize() for p in re.split(r"[^0-9A-Za-z]+", tool_name) if p) or "Tool"
    try:
        args_type = msgspec.defstruct(f"{struct_name}Args", fields, kw_only=True)
        msgspec.json.Decoder(args_type)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"golem: tool {tool_name!r}: unsupported parameter types: {exc}") from exc
    return args_type, context_param


def _schema(args_type: type[msgspec.Struct]) -> dict[str, Any]:
    """The arguments' JSON schema with the top-level object inlined (providers want
    ``{"type": "object", ...}`` at the root), nested definitions kept under ``$defs``."""
    document = msgspec.json.schema(args_type)
    defs = dict(document.get("$defs", {}))
    root = dict(defs.pop(args_type.__name__))
    root.pop("title", None)
    if not root.get("required"):
        root.pop("required", None)
    if defs:
        root["$defs"] = defs
    return root
