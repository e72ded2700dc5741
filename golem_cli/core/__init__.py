"""golem's core runtime: the conversation model of the Go library golem, in Python.

Knows nothing of terminals, HTTP or files. Everything public is importable from here; names
load on first use (PEP 562), so a command that only reads a history file does not pay for
the run loop, and ``import golem_cli.core.codec.history`` stays as cheap as the codec itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # messages and the JSON contract
    "Message": "messages", "ToolCall": "messages", "Part": "messages", "ThinkingBlock": "messages",
    "SYSTEM": "messages", "USER": "messages", "ASSISTANT": "messages", "TOOL": "messages",
    "INTERRUPTED": "messages", "INTERRUPTED_REPLY_MARK": "messages", "is_interrupted_reply": "messages",
    "mark_interrupted": "messages",
    "load_history": "codec.history", "dump_history": "codec.history",
    "new_id": "ids",
    # history operations
    "repair_history": "history.repair", "normalize_history": "history.repair", "HistoryRepair": "history.repair",
    "sanitize_history": "history.sanitize", "SanitizeReport": "history.sanitize", "UnsafePart": "history.sanitize",
    "trim_history": "history.processors", "budget_history": "history.processors",
    "HistoryProcessor": "history.processors",
    # errors and usage
    "GolemError": "errors", "InputError": "errors", "HistoryFormatError": "errors", "HistoryProcessorError": "errors",
    "HistoryValidationError": "errors", "ModelError": "errors", "PartialResult": "errors",
    "RunError": "errors", "Usage": "usage",
    # runs
    "Agent": "agent", "RunResult": "agent", "UsageLimits": "usage",
    "RunConfig": "runconfig", "RunHooks": "runconfig", "RetryPolicy": "retry",
    "UsageLimitError": "errors", "ToolCallError": "errors",
    "RunCanceledError": "errors", "ToolCallStarted": "events", "ToolCallFinished": "events",
    "Tool": "tools", "tool": "tools", "ToolResult": "tools", "ToolContext": "tools",
    "ToolFailed": "tools", "ModelRetry": "tools", "ToolCanceled": "tools", "ToolTimeoutError": "tools",
    "SchemaTool": "tools", "Approval": "tools", "ApprovalRequest": "tools", "APPROVED": "tools",
    "ApprovalHook": "runconfig",
    "Model": "model", "ModelRequest": "model", "ModelResponse": "model", "ModelSettings": "model",
    "ToolDefinition": "model", "TextDelta": "model", "ThinkingDelta": "model", "ToolCallDelta": "model",
    "StreamDone": "model", "ResponseAccumulator": "model",
    "EchoModel": "offline", "ScriptedModel": "offline", "Step": "offline",
    "TokenCounter": "tokens", "EstimatingCounter": "tokens", "CallableCounter": "tokens",
    "counter_for": "tokens", "estimate_text": "tokens",
    "validate_run_input": "history.validate",
}  # fmt: skip

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'golem_cli.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"golem_cli.core.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from golem_cli.core.agent import Agent, RunResult
    from golem_cli.core.codec.history import dump_history, load_history
    from golem_cli.core.errors import (
        GolemError,
        HistoryFormatError,
        HistoryProcessorError,
        HistoryValidationError,
        InputError,
        ModelError,
        PartialResult,
        RunCanceledError,
        RunError,
        ToolCallError,
        UsageLimitError,
    )
    from golem_cli.core.events import ToolCallFinished, ToolCallStarted
    from golem_cli.core.history.processors import HistoryProcessor, budget_history, trim_history
    from golem_cli.core.history.repair import HistoryRepair, normalize_history, repair_history
    from golem_cli.core.history.sanitize import SanitizeReport, UnsafePart, sanitize_history
    from golem_cli.core.history.validate import validate_run_input
    from golem_cli.core.ids import new_id
    from golem_cli.core.messages import (
        ASSISTANT,
        INTERRUPTED,
        INTERRUPTED_REPLY_MARK,
        SYSTEM,
        TOOL,
        USER,
        Message,
        Part,
        ThinkingBlock,
        ToolCall,
        is_interrupted_reply,
        mark_interrupted,
    )
    from golem_cli.core.model import (
        Model,
        ModelRequest,
        ModelResponse,
        ModelSettings,
        ResponseAccumulator,
        StreamDone,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        ToolDefinition,
    )
    from golem_cli.core.offline import EchoModel, ScriptedModel, Step
    from golem_cli.core.retry import RetryPolicy
    from golem_cli.core.runconfig import ApprovalHook, RunConfig, RunHooks
    from golem_cli.core.tokens import CallableCounter, EstimatingCounter, TokenCounter, counter_for, estimate_text
    from golem_cli.core.tools import (
        APPROVED,
        Approval,
        ApprovalRequest,
        ModelRetry,
        SchemaTool,
        Tool,
        ToolCanceled,
        ToolContext,
        ToolFailed,
        ToolResult,
        ToolTimeoutError,
        tool,
    )
    from golem_cli.core.usage import Usage, UsageLimits
