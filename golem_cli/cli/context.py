"""What the next request of a conversation will carry, in tokens, for ``/context`` and ``golem
context``: the instructions, the tool definitions by tool server, the history the window sends
and what it leaves out, against the model's context window.

The figures are golem's offline estimate (``core/tokens.py``), read from what the session
builds for its next run: the instructions, the tools its toolbox enables, the window its
history processor (``--max-messages``, ``--context-tokens``) lets through after repair. Beside
them stands the provider's own count of the input of the last run's last request, when known.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from msgspec import Struct, field

from golem_cli.core.errors import GolemError
from golem_cli.core.history.repair import repair_history
from golem_cli.core.messages import SYSTEM, Message
from golem_cli.core.tokens import EstimatingCounter, estimate_text
from golem_cli.providers import catalog

if TYPE_CHECKING:
    from golem_cli.session import ChatSession


class ToolTokens(Struct, frozen=True, kw_only=True):
    """The tools one source (``builtin``, ``mcp:NAME``) adds to a request."""

    source: str
    tools: int
    tokens: int


class RequestContext(Struct, frozen=True, kw_only=True):
    model: str
    instructions: int
    tools: list[ToolTokens] = field(default_factory=list)
    sent_messages: int = 0
    sent_tokens: int = 0
    unsent_messages: int = 0
    unsent_tokens: int = 0
    context_window: int | None = None
    window_source: str = ""
    last_input_tokens: int = 0  # the provider's count for the last run's last request; 0: unknown
    last_run_id: str = ""
    summary_covers: int = 0  # the summary in force stands for messages 1 to this (ADR 0032); 0: none
    summary_tokens: int = 0
    summary_by: str = ""

    @property
    def total(self) -> int:
        return self.instructions + sum(t.tokens for t in self.tools) + self.summary_tokens + self.sent_tokens

    @property
    def share(self) -> float | None:
        return self.total / self.context_window if self.context_window else None

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model, "instructions": self.instructions,
            "tools": [{"source": t.source, "tools": t.tools, "tokens": t.tokens} for t in self.tools],
            "history": {"messages": self.sent_messages, "tokens": self.sent_tokens},
            "notSent": {"messages": self.unsent_messages, "tokens": self.unsent_tokens},
            "total": self.total, "contextWindow": self.context_window, "share": self.share,
            "lastRun": {"runId": self.last_run_id, "inputTokens": self.last_input_tokens}
            if self.last_input_tokens else None,
            "summary": {"covers": self.summary_covers, "tokens": self.summary_tokens, "by": self.summary_by}
            if self.summary_covers else None,
        }  # fmt: skip


def request_context(session: ChatSession) -> RequestContext:
    """What ``session``'s next request carries before its prompt, estimated offline."""
    counter = EstimatingCounter()
    stored = [m for m in session.history if m.role != SYSTEM]
    try:
        window = [m for m in session.agent().process_history(session.history) if m.role != SYSTEM]
    except GolemError:  # a window that cannot be cut: the whole history is what would be tried
        window = stored
    found = session.compactor.in_force()
    summary = window[:1] if found is not None and window else []  # the summary opens what is sent
    window = window[len(summary) :]
    sent = [m for m in repair_history(window) if m.role != SYSTEM]
    unsent = stored[: max(0, len(stored) - len(window))]
    known = catalog.known(session.model.name, session.model_tables)
    instructions = counter.count([Message(role=SYSTEM, content=session.system)]) if session.system else 0
    return RequestContext(
        model=session.model.name, instructions=instructions, tools=tool_tokens(session),
        sent_messages=len(sent), sent_tokens=counter.count(sent),
        unsent_messages=len(unsent), unsent_tokens=counter.count(unsent),
        context_window=known.context_window, window_source=known.source if known.context_window else "",
        last_input_tokens=session.last_input_tokens, last_run_id=session.last_counted_run,
        summary_covers=found.summary.number if found is not None else 0, summary_tokens=counter.count(summary),
        summary_by=found.summary.by if found is not None else "",
    )  # fmt: skip


def tool_tokens(session: ChatSession) -> list[ToolTokens]:
    """The enabled tools' definitions by source, in the order the sources are named."""
    if session.toolbox is None:
        return []
    by_source: dict[str, list[int]] = {}
    for entry in session.toolbox.enabled:
        d = entry.tool.definition()
        spelled = json.dumps({"name": d.name, "description": d.description, "parameters": d.parameters})
        by_source.setdefault(entry.source, []).append(estimate_text(spelled))
    return [ToolTokens(source=s, tools=len(t), tokens=sum(t)) for s, t in sorted(by_source.items())]


def lines(context: RequestContext) -> list[str]:
    """The report for people, one figure a line."""
    rows = [("instructions", context.instructions)]
    rows += [(f"tools: {t.source} ({t.tools})", t.tokens) for t in context.tools]
    if context.summary_covers:
        rows.append((f"summary of messages 1-{context.summary_covers} ({context.summary_by})", context.summary_tokens))
    rows.append((f"history sent ({context.sent_messages} messages)", context.sent_tokens))
    width = max(len(label) for label, _ in rows)
    out = [f"The next request to {context.model} carries about (golem's estimate):"]
    out += [f"  {label:<{width}}  {tokens:>9,} tokens" for label, tokens in rows]
    total = f"  {'total':<{width}}  {context.total:>9,} tokens"
    if context.context_window:
        total += f", {context.share:.0%} of the context window of {context.context_window:,}"
    out.append(total)
    if context.last_input_tokens:
        out.append(f"  the provider counted {context.last_input_tokens:,} input tokens in the last run's last request")
    if not context.context_window:
        out.append(f'  context window unknown: set context_window in [models."{context.model}"] of config.toml')
    if context.unsent_messages:
        summarised = f", messages 1-{context.summary_covers} of them in the summary" if context.summary_covers else ""
        out.append(f"  stored but not sent: {context.unsent_messages} messages (about {context.unsent_tokens:,} "
                   f"tokens{summarised}); /trim N sends the newest N")  # fmt: skip
    return out
