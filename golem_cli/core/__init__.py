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
from golem_cli.core.codec import dump_history, load_history
from golem_cli.core.ids import new_id
from golem_cli.core.processors import HistoryProcessor, budget_history, trim_history
from golem_cli.core.repair import HistoryRepair, normalize_history, repair_history
from golem_cli.core.sanitize import SanitizeReport, UnsafePart, sanitize_history
from golem_cli.core.usage import Usage

__all__ = [
    "ASSISTANT",
    "INTERRUPTED",
    "INTERRUPTED_REPLY_MARK",
    "SYSTEM",
    "TOOL",
    "USER",
    "GolemError",
    "HistoryProcessor",
    "HistoryRepair",
    "SanitizeReport",
    "UnsafePart",
    "budget_history",
    "dump_history",
    "load_history",
    "new_id",
    "normalize_history",
    "repair_history",
    "sanitize_history",
    "trim_history",
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
