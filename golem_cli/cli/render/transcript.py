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
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec import Struct, field

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
    from rich.console import Console, RenderableType

    from golem_cli.store import ConversationMeta

#: Where a summary starts (``summary_marks.Marks``): for the index of a message, the marks
#: before it, each a line and the summary's text.
SummaryMarks = Mapping[int, Sequence[tuple[str, str]]]

# item kinds
TEXT, MARKDOWN, THINKING, CALL, RESULT, FAILED, INTERRUPTED_REPLY, NO_RESULT, PART = (
    "text", "markdown", "thinking", "call", "result", "failed", "interrupted", "no_result", "part",
)  # fmt: skip


class Item(Struct):
    kind: str
    text: str = ""
    name: str = ""
    call_id: str = ""
    note: str = ""
    summary: str = ""  # a call's arguments in one line


RESULT_LINES = 4  # lines of a tool result shown when compact


class Block(Struct):
    index: int | None  # the message's number as people see it (core/history/numbering.py); None: a system prompt
    role: str
    run_id: str
    items: list[Item] = field(default_factory=list)
    by: str = ""  # a reply: the model that wrote it and when ("openai:gpt-4o · 2026-12-01 14:02"), from the ledger


#: What the run ledger says of each run: the model that answered and when (store/sidecars/ledger.py ``answered``).
Answered = Mapping[str, tuple[str, "float | None"]]


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


def blocks(messages: Sequence[Message], answered: Answered | None = None) -> Iterator[Block]:
    """What a transcript shows, message by message; each reply with the model that wrote it
    and when, where the conversation's ledger knows its run."""
    from golem_cli.cli.render.console import local_time

    for number, m in zip(numbers(messages), messages, strict=True):
        known = answered.get(m.run_id) if answered and m.role == ASSISTANT and m.run_id else None
        by = f"{known[0]} · {local_time(known[1] or 0)}" if known else ""
        yield Block(number, m.role or "(no role)", m.run_id, _items(m), by)


def _items(m: Message) -> list[Item]:
    """A message's items in the order they are shown: thinking, its text (or a tool's result),
    attachments, tool calls, and the mark of a reply cut short."""
    interrupted = is_interrupted_reply(m)
    content = m.content[: -len(INTERRUPTED_REPLY_MARK)].rstrip() if interrupted else m.content
    items = [Item(THINKING, t.text or "[redacted thinking]") for t in m.thinking]
    if m.role == TOOL:
        items.append(_result(m, content))
    elif content:
        items.append(Item(MARKDOWN if m.role == ASSISTANT else TEXT, content))
    items += [Item(PART, _part_text(p)) for p in m.parts]
    for c in m.tool_calls:
        note = "" if args_are_object(c.args) else "arguments are not one JSON object (cut off?)"
        items.append(Item(CALL, format_args(c.args), c.name, c.id, note, summarize_args(c.args)))
    if interrupted:
        items.append(Item(INTERRUPTED_REPLY, "reply interrupted"))
    return items


def _result(m: Message, content: str) -> Item:
    """A tool message's item: its result, its failure, or the placeholder repair wrote for a
    call that never got one (no run ID: no run recorded it)."""
    if m.content == INTERRUPTED and not m.run_id:
        return Item(NO_RESULT, "interrupted; no result was recorded", m.tool_name, m.tool_call_id)
    return Item(FAILED if m.failed else RESULT, content, m.tool_name, m.tool_call_id)


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


def plain_lines(
    messages: Sequence[Message],
    *,
    run_ids: bool,
    full: bool = False,
    answered: Answered | None = None,
    marks: SummaryMarks | None = None,
) -> Iterator[str]:
    """The transcript as plain text (pipes, files, NO_COLOR-agnostic); ``marks``: where each
    summary starts."""
    for i, b in enumerate(blocks(messages, answered)):
        for line, _ in (marks or {}).get(i, ()):
            yield from (line, "")
        run = f"  run {b.run_id}" if run_ids and b.run_id else ""
        by = f" · {b.by}" if b.by else ""
        yield f"--- [{b.index}] {b.role}{by}{run}" if b.index is not None else f"--- system prompt{run}"
        for item in b.items:
            yield from _PLAIN[item.kind](item, full)
        yield ""


def _plain_tool(item: Item, full: bool) -> list[str]:
    if full:
        return [_label(item) + ":", _indent(item.text)]
    if item.kind == CALL:
        return [_label(item) + (f": {item.summary}" if item.summary else "")]
    head, more = _head(item.text)
    return [_label(item) + ":", _indent(head)] + ([_indent(_more(more, "--full"))] if more else [])


_PLAIN: dict[str, Callable[[Item, bool], list[str]]] = {
    TEXT: lambda item, full: [item.text],
    MARKDOWN: lambda item, full: [item.text],
    THINKING: lambda item, full: [_indent("thinking: " + item.text)],
    PART: lambda item, full: [f"[{item.text}]"],
    INTERRUPTED_REPLY: lambda item, full: ["⚠ reply interrupted"],
    NO_RESULT: lambda item, full: [f"{_label(item)}: {item.text}"],
    CALL: _plain_tool,
    RESULT: _plain_tool,
    FAILED: _plain_tool,
}


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix.rstrip()


def print_rich(
    console: Console, messages: Sequence[Message], *, run_ids: bool, full: bool = False,
    answered: Answered | None = None,
    marks: SummaryMarks | None = None,
) -> None:  # fmt: skip
    """The transcript rendered for a terminal: markdown replies, coloured markers. One print
    per message (rich's per-call overhead adds up over thousands of messages). Every text
    passes ``visible`` before rich lays it out."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from golem_cli.cli.render.terminal_text import visible

    colours = {USER: "bold green", ASSISTANT: "bold blue", TOOL: "bold magenta"}
    for i, b in enumerate(blocks(messages, answered)):
        for line, _ in (marks or {}).get(i, ()):
            console.print(Text(visible(line), style="bold yellow"), Text())
        run = f" [dim]run {escape(visible(b.run_id))}[/]" if run_ids and b.run_id else ""
        by = f" [dim]{escape(visible(b.by))}[/]" if b.by else ""
        head = f"[{colours.get(b.role, 'bold')}]{escape(visible(b.role))}[/] [dim]#{b.index}[/]{by}{run}"
        parts: list[RenderableType] = [
            Text.from_markup(head if b.index is not None else f"[bold]system prompt[/]{run}")
        ]
        for item in b.items:
            parts += _RICH[item.kind](item, full)
        parts.append(Text())
        console.print(Group(*parts))


_TOOL_STYLES = {CALL: "cyan", RESULT: "magenta", FAILED: "red", NO_RESULT: "yellow"}


def _rich_text(text: str, style: str = "", indent: bool = False) -> RenderableType:
    from rich.padding import Padding
    from rich.text import Text

    from golem_cli.cli.render.terminal_text import visible

    shown = Text(visible(text), style=style)
    return Padding(shown, (0, 0, 0, 2)) if indent else shown


def _rich_markdown(item: Item, full: bool) -> list[RenderableType]:
    from golem_cli.cli.render.terminal_text import markdown

    return [markdown(item.text) if _looks_like_markdown(item.text) else _rich_text(item.text)]


def _rich_tool(item: Item, full: bool) -> list[RenderableType]:
    """A call, a result, a failure or a missing result: its label, then (a call compact aside)
    its text, whole or its first lines."""
    from rich.text import Text

    from golem_cli.cli.render.terminal_text import visible

    label = Text(visible(_label(item)), style=_TOOL_STYLES[item.kind])
    if item.kind == CALL and not full:
        if item.summary:
            label.append("  " + item.summary, style="dim")
        return [label]
    text, more = (item.text, 0) if full or item.kind == NO_RESULT else _head(item.text)
    style = "yellow" if item.kind == NO_RESULT else "dim" if item.kind == CALL else ""
    return (
        [label]
        + ([_rich_text(text, style, indent=True)] if text else [])
        + ([_rich_text(_more(more, "--full"), "dim", indent=True)] if more else [])
    )


_RICH: dict[str, Callable[[Item, bool], list[RenderableType]]] = {
    TEXT: lambda item, full: [_rich_text(item.text)],
    MARKDOWN: _rich_markdown,
    THINKING: lambda item, full: [_rich_text(item.text, "dim italic", indent=True)],
    PART: lambda item, full: [_rich_text(f"[{item.text}]", "cyan")],
    INTERRUPTED_REPLY: lambda item, full: [_rich_text("⚠ reply interrupted", "yellow")],
    NO_RESULT: _rich_tool,
    CALL: _rich_tool,
    RESULT: _rich_tool,
    FAILED: _rich_tool,
}


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


def markdown_document(
    messages: Sequence[Message],
    meta: ConversationMeta | None,
    cid: str,
    answered: Answered | None = None,
    marks: SummaryMarks | None = None,
) -> str:
    """The conversation as a markdown document (``golem export --format markdown``), each
    reply under the model that wrote it (a conversation continued on another provider shows
    both), and each summary marked where it starts, its text collapsed under the mark."""
    out = _markdown_head(meta, cid, len(messages))
    for i, b in enumerate(blocks(messages, answered)):
        for line, text in (marks or {}).get(i, ()):
            out += ([] if out[-1] == "" else [""]) + [f"> **{line.strip('─ ')}**", ""]
            out += _details("the summary", fence(text))
        head = f"## {b.index}. {b.role.capitalize()}" if b.index is not None else "## System prompt"
        by = f"{b.by}; " if b.by else ""
        out += ([] if out[-1] == "" else [""]) + [head + (f" ({by}run `{b.run_id}`)" if b.run_id else ""), ""]
        for item in b.items:
            out += _MARKDOWN[item.kind](item)
    return "\n".join(out).rstrip() + "\n"


def _markdown_head(meta: ConversationMeta | None, cid: str, count: int) -> list[str]:
    """The document's title and the list of what it is: its ID, model, size and lineage."""
    title = (meta.display_title if meta else "") or "Conversation"
    out = [f"# {title}", "", f"- Conversation: `{cid}`"]
    if meta is not None and meta.model:
        out.append(f"- Model: `{meta.model}`")
    out.append(f"- Messages: {count}")
    if meta is not None and meta.parent:
        out.append(f"- Forked from `{meta.parent}` after message {meta.fork_at}")
    return out


def _markdown_call(item: Item) -> list[str]:
    note = f" *({item.note})*" if item.note else ""
    summary = ": `" + item.summary.replace("`", "'") + "`" if item.summary else ""
    info = "json" if item.text.startswith("{") else ""
    return [
        f"**Tool call** `{item.name}` (`{item.call_id}`){note}{summary}",
        "",
        *_details("arguments", fence(item.text, info)),
    ]


def _markdown_result(item: Item) -> list[str]:
    """A result's first lines, and all of them in a collapsed block when there are more."""
    head_word = "Tool failed" if item.kind == FAILED else "Tool result"
    head, more = _head(item.text)
    out = [f"**{head_word}** `{item.name}` (`{item.call_id}`):", "", fence(head), ""]
    return out + (_details(f"all {len(item.text.splitlines())} lines", fence(item.text)) if more else [])


_MARKDOWN: dict[str, Callable[[Item], list[str]]] = {
    TEXT: lambda item: [item.text, ""],
    MARKDOWN: lambda item: [item.text, ""],
    THINKING: lambda item: ["> " + line for line in ("*thinking:* " + item.text).splitlines()] + [""],
    PART: lambda item: [f"*Attachment: {item.text}*", ""],
    INTERRUPTED_REPLY: lambda item: ["**⚠ Reply interrupted.**", ""],
    NO_RESULT: lambda item: [f"**⚠ No result** for `{item.name}` (`{item.call_id}`): {item.text}.", ""],
    CALL: _markdown_call,
    RESULT: _markdown_result,
    FAILED: _markdown_result,
}


def _details(summary: str, body: str) -> list[str]:
    """A collapsed block in the markdown export (rendered by GitHub and most viewers)."""
    return [f"<details><summary>{summary}</summary>", "", body, "", "</details>", ""]
