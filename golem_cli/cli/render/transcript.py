"""Transcripts for people: rich on a terminal, plain text in a pipe, markdown for export.

One walk over the messages (``blocks``) decides what is shown: each message becomes a header
(role, plus the run ID on request) and items — text, thinking, tool calls, results, and the
markers for a reply that was interrupted, a call that never got a result, and a tool that
failed. The three renderers only decide how those items look. The REPL can reuse ``blocks``
for ``/history``.

Tool calls and results are compact unless ``full`` is asked for (``show --full``,
``/history --full``): a call is its name and a one-line summary of its arguments, a result
its first lines and how many more there are. The markdown export is compact to read and
complete: the arguments and the whole result sit in collapsed ``<details>`` blocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from golem_cli.cli.tools.view import summarize_args
from golem_cli.core.codec.toolargs import args_are_object
from golem_cli.core.history.numbering import numbers
from golem_cli.core.messages import (
    ASSISTANT,
    INTERRUPTED,
    INTERRUPTED_REPLY_MARK,
    TOOL,
    USER,
    Message,
    Part,
    is_interrupted_reply,
)

if TYPE_CHECKING:
    from rich.console import Console

    from golem_cli.store import ConversationMeta

# item kinds
TEXT, MARKDOWN, THINKING, CALL, RESULT, FAILED, INTERRUPTED_REPLY, NO_RESULT, PART = (
    "text", "markdown", "thinking", "call", "result", "failed", "interrupted", "no_result", "part",
)  # fmt: skip


@dataclass
class Item:
    kind: str
    text: str = ""
    name: str = ""
    call_id: str = ""
    note: str = ""
    summary: str = ""  # a call's arguments in one line


RESULT_LINES = 4  # lines of a tool result shown when compact


@dataclass
class Block:
    index: int | None  # the message's number as people see it (core/history/numbering.py); None: a system prompt
    role: str
    run_id: str
    items: list[Item] = field(default_factory=list)


def _part_text(p: Part) -> str:
    if p.url:
        return f"{p.kind}: {p.url}"
    size = f"{len(p.data)} bytes" if p.data else "no data"
    return f"{p.kind}: {p.media_type or 'unknown type'}, {size}"


def format_args(args: str) -> str:
    """Call arguments for reading: indented when they are a JSON object, else verbatim."""
    if not args:
        return "(no arguments)"
    try:
        value = json.loads(args)
    except ValueError:
        return args
    return json.dumps(value, indent=2, ensure_ascii=False) if isinstance(value, dict) else args


def blocks(messages: Sequence[Message]) -> Iterator[Block]:
    """What a transcript shows, message by message."""
    for number, m in zip(numbers(messages), messages, strict=True):
        b = Block(number, m.role or "(no role)", m.run_id)
        for t in m.thinking:
            b.items.append(Item(THINKING, t.text or "[redacted thinking]"))
        content = m.content
        interrupted = is_interrupted_reply(m)
        if interrupted:
            content = content[: -len(INTERRUPTED_REPLY_MARK)].rstrip()
        if m.role == TOOL:
            if m.content == INTERRUPTED and not m.run_id:
                b.items.append(Item(NO_RESULT, "interrupted; no result was recorded", m.tool_name, m.tool_call_id))
            else:
                kind = FAILED if m.failed else RESULT
                b.items.append(Item(kind, content, m.tool_name, m.tool_call_id))
        elif content:
            b.items.append(Item(MARKDOWN if m.role == ASSISTANT else TEXT, content))
        for p in m.parts:
            b.items.append(Item(PART, _part_text(p)))
        for c in m.tool_calls:
            note = "" if args_are_object(c.args) else "arguments are not one JSON object (cut off?)"
            b.items.append(Item(CALL, format_args(c.args), c.name, c.id, note, summarize_args(c.args)))
        if interrupted:
            b.items.append(Item(INTERRUPTED_REPLY, "reply interrupted"))
        yield b


def header_lines(meta: ConversationMeta | None, cid: str, messages: Sequence[Message]) -> list[str]:
    """Title, ID, model, size and lineage of a conversation, one fact per line; the size as
    the transcript numbers it (the system prompt aside)."""
    from golem_cli.cli.render.console import local_time

    if meta is None:
        return [cid]
    lines = [meta.display_title or "(untitled)", f"id {cid}"]
    numbered = [n for n in numbers(messages) if n is not None]
    facts = [f"{len(numbered)} message{'' if len(numbered) == 1 else 's'}"]
    if len(numbered) < len(messages):
        facts[0] += " and a system prompt"
    if meta.model:
        facts.append(f"model {meta.model}")
    facts.append(f"updated {local_time(meta.updated)}")
    lines.append(" · ".join(facts))
    if meta.parent:
        lines.append(f"forked from {meta.parent} after message {meta.fork_at}")
    return lines


_MARK = {CALL: "→ call", RESULT: "← result", FAILED: "✗ failed", NO_RESULT: "⚠ no result"}


def _label(item: Item) -> str:
    note = f" ({item.note})" if item.note else ""
    return f"{_MARK[item.kind]} {item.name or '?'} [{item.call_id or 'no id'}]{note}"


def _head(text: str, lines: int = RESULT_LINES) -> tuple[str, int]:
    """The first ``lines`` lines of ``text`` and how many more there are."""
    all_lines = text.splitlines()
    return "\n".join(all_lines[:lines]), max(0, len(all_lines) - lines)


def _more(more: int, how: str) -> str:
    return f"… {more} more line{'s' if more != 1 else ''} ({how} shows all)"


def plain_lines(messages: Sequence[Message], *, run_ids: bool, full: bool = False) -> Iterator[str]:
    """The transcript as plain text (pipes, files, NO_COLOR-agnostic)."""
    for b in blocks(messages):
        run = f"  run {b.run_id}" if run_ids and b.run_id else ""
        yield f"--- [{b.index}] {b.role}{run}" if b.index is not None else f"--- system prompt{run}"
        for item in b.items:
            if item.kind in (TEXT, MARKDOWN):
                yield item.text
            elif item.kind == THINKING:
                yield _indent("thinking: " + item.text)
            elif item.kind == PART:
                yield f"[{item.text}]"
            elif item.kind == INTERRUPTED_REPLY:
                yield "⚠ reply interrupted"
            elif item.kind == NO_RESULT:
                yield f"{_label(item)}: {item.text}"
            elif full:
                yield _label(item) + ":"
                yield _indent(item.text)
            elif item.kind == CALL:
                yield _label(item) + (f": {item.summary}" if item.summary else "")
            else:
                head, more = _head(item.text)
                yield _label(item) + ":"
                yield _indent(head)
                if more:
                    yield _indent(_more(more, "--full"))
        yield ""


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix.rstrip()


def print_rich(console: Console, messages: Sequence[Message], *, run_ids: bool, full: bool = False) -> None:
    """The transcript rendered for a terminal: markdown replies, coloured markers. One print
    per message (rich's per-call overhead adds up over thousands of messages). Every text
    passes ``visible`` before rich lays it out."""
    from rich.console import Group
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    from golem_cli.cli.render.terminal_text import markdown, visible

    colours = {USER: "bold green", ASSISTANT: "bold blue", TOOL: "bold magenta"}
    styles = {CALL: "cyan", RESULT: "magenta", FAILED: "red", NO_RESULT: "yellow"}
    for b in blocks(messages):
        run = f" [dim]run {escape(visible(b.run_id))}[/]" if run_ids and b.run_id else ""
        parts: list[object] = [
            Text.from_markup(
                f"[{colours.get(b.role, 'bold')}]{escape(visible(b.role))}[/] [dim]#{b.index}[/]{run}"
                if b.index is not None
                else f"[bold]system prompt[/]{run}"
            )
        ]
        for item in b.items:
            if item.kind == MARKDOWN:
                parts.append(markdown(item.text) if _looks_like_markdown(item.text) else Text(visible(item.text)))
            elif item.kind == TEXT:
                parts.append(Text(visible(item.text)))
            elif item.kind == THINKING:
                parts.append(Padding(Text(visible(item.text), style="dim italic"), (0, 0, 0, 2)))
            elif item.kind == PART:
                parts.append(Text(f"[{visible(item.text)}]", style="cyan"))
            elif item.kind == INTERRUPTED_REPLY:
                parts.append(Text("⚠ reply interrupted", style="yellow"))
            elif item.kind == CALL and not full:
                label = Text(visible(_label(item)), style=styles[item.kind])
                if item.summary:
                    label.append("  " + item.summary, style="dim")
                parts.append(label)
            else:
                parts.append(Text(visible(_label(item)), style=styles[item.kind]))
                text, more = (item.text, 0) if full or item.kind == NO_RESULT else _head(item.text)
                if text:
                    style = "yellow" if item.kind == NO_RESULT else "dim" if item.kind == CALL else ""
                    parts.append(Padding(Text(visible(text), style=style), (0, 0, 0, 2)))
                if more:
                    parts.append(Padding(Text(_more(more, "--full"), style="dim"), (0, 0, 0, 2)))
        parts.append(Text())
        console.print(Group(*parts))  # type: ignore[arg-type]


def _looks_like_markdown(text: str) -> bool:
    """Markdown rendering is costly; replies with no markup render as plain text."""
    return any(ch in text for ch in "`*_#[|>") or "\n- " in text or "\n1. " in text or text.startswith("- ")


def fence(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def markdown_document(messages: Sequence[Message], meta: ConversationMeta | None, cid: str) -> str:
    """The conversation as a markdown document (``golem export --format markdown``)."""
    title = (meta.display_title if meta else "") or "Conversation"
    out = [f"# {title}", "", f"- Conversation: `{cid}`"]
    if meta is not None and meta.model:
        out.append(f"- Model: `{meta.model}`")
    out.append(f"- Messages: {len(messages)}")
    if meta is not None and meta.parent:
        out.append(f"- Forked from `{meta.parent}` after message {meta.fork_at}")
    for b in blocks(messages):
        out += ([] if out[-1] == "" else [""]) + [
            (f"## {b.index}. {b.role.capitalize()}" if b.index is not None else "## System prompt")
            + (f" (run `{b.run_id}`)" if b.run_id else ""),
            "",
        ]
        for item in b.items:
            if item.kind in (TEXT, MARKDOWN):
                out += [item.text, ""]
            elif item.kind == THINKING:
                out += ["> " + line for line in ("*thinking:* " + item.text).splitlines()] + [""]
            elif item.kind == PART:
                out += [f"*Attachment: {item.text}*", ""]
            elif item.kind == INTERRUPTED_REPLY:
                out += ["**⚠ Reply interrupted.**", ""]
            elif item.kind == NO_RESULT:
                out += [f"**⚠ No result** for `{item.name}` (`{item.call_id}`): {item.text}.", ""]
            elif item.kind == CALL:
                note = f" *({item.note})*" if item.note else ""
                summary = ": `" + item.summary.replace("`", "'") + "`" if item.summary else ""
                info = "json" if item.text.startswith("{") else ""
                out += [f"**Tool call** `{item.name}` (`{item.call_id}`){note}{summary}", ""]
                out += _details("arguments", fence(item.text, info))
            else:
                head_word = {RESULT: "Tool result", FAILED: "Tool failed"}[item.kind]
                head, more = _head(item.text)
                out += [f"**{head_word}** `{item.name}` (`{item.call_id}`):", "", fence(head), ""]
                if more:
                    out += _details(f"all {len(item.text.splitlines())} lines", fence(item.text))
    return "\n".join(out).rstrip() + "\n"


def _details(summary: str, body: str) -> list[str]:
    """A collapsed block in the markdown export (rendered by GitHub and most viewers)."""
    return [f"<details><summary>{summary}</summary>", "", body, "", "</details>", ""]
