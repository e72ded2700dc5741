"""Run-start validation (spec §1.3): reject malformed parts and misplaced thinking up front.

A run validates the prompt parts and the processed history before repair and before any
model call, so a malformed message never reaches a provider (where it would fail with a far
less useful error). The texts are Go golem's, byte for byte, because callers and tests match
on them. Failures raise ``HistoryValidationError``; they are not ``RunError``s, since the run
never started.
"""

from __future__ import annotations

from collections.abc import Sequence

from golem_cli.core.codec.gojson import go_quote_q
from golem_cli.core.errors import HistoryValidationError
from golem_cli.core.messages import ASSISTANT, PART_KINDS, TOOL, USER, Message, Part, ThinkingBlock


def part_error(part: Part) -> str | None:
    """Why a part is malformed (Go ``Part.Validate``), or None. Checked in Go's order."""
    if part.kind not in PART_KINDS:
        return f"model: unsupported part kind {go_quote_q(part.kind)}"
    if part.url and part.data:
        return f"model: {part.kind} part carries both a URL and inline data; set exactly one"
    if not part.url and not part.data:
        return f"model: {part.kind} part has neither a URL nor inline data"
    if part.data and not part.media_type:
        return f"model: {part.kind} part with inline data requires a media type"
    return None


def thinking_error(block: ThinkingBlock) -> str | None:
    """Why a thinking block is malformed (Go ``ThinkingBlock.Validate``), or None."""
    if not block.text and not block.redacted:
        return "model: thinking block carries neither text nor redacted data"
    if block.text and block.redacted:
        return "model: thinking block carries both text and redacted data; set exactly one"
    if block.redacted and block.signature:
        return "model: redacted thinking cannot carry a signature"
    return None


def validate_run_input(prompt_parts: Sequence[Part], history: Sequence[Message]) -> None:
    """Check a run's prompt parts and (processed) history; raise on the first problem.

    Indices are positions in ``history`` as given, i.e. after the history processor.
    """
    for i, part in enumerate(prompt_parts):
        if (err := part_error(part)) is not None:
            raise HistoryValidationError(f"golem: prompt part {i}: {err}")
    for i, message in enumerate(history):
        if message.parts and message.role not in (USER, TOOL):
            raise HistoryValidationError(
                f"golem: history message {i}: parts are only supported on user and tool messages"
            )
        for j, part in enumerate(message.parts):
            if (err := part_error(part)) is not None:
                raise HistoryValidationError(f"golem: history message {i} part {j}: {err}")
        if message.thinking and message.role != ASSISTANT:
            raise HistoryValidationError(
                f"golem: history message {i}: thinking is only supported on assistant messages"
            )
        for j, block in enumerate(message.thinking):
            if (err := thinking_error(block)) is not None:
                raise HistoryValidationError(f"golem: history message {i} thinking block {j}: {err}")
