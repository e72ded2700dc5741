"""golem's core runtime: the conversation model of the Go library golem, in Python.

Knows nothing of terminals, HTTP or files. Everything public is importable from here.
"""

from golem_cli.core.errors import (
    GolemError,
    HistoryFormatError,
    HistoryProcessorError,
    HistoryValidationError,
    ModelError,
    PartialResult,
    RunError,
)
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
)
from golem_cli.core.usage import Usage

__all__ = [
    "ASSISTANT",
    "INTERRUPTED",
    "INTERRUPTED_REPLY_MARK",
    "SYSTEM",
    "TOOL",
    "USER",
    "GolemError",
    "HistoryFormatError",
    "HistoryProcessorError",
    "HistoryValidationError",
    "Message",
    "ModelError",
    "Part",
    "PartialResult",
    "RunError",
    "ThinkingBlock",
    "ToolCall",
    "Usage",
    "is_interrupted_reply",
]
