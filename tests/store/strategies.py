"""Hypothesis strategies for search: histories whose text exercises every matching rule,
and queries likely to match them."""

from __future__ import annotations

import json

from golem_cli.core.messages import Message, ThinkingBlock, ToolCall
from golem_cli.store.search import message_text
from hypothesis import strategies as st

# Characters that exercise every rule: ASCII of both cases, what Go escapes, "/", non-ASCII
# with simple and with special case folding, a character outside the BMP.
ALPHABET = 'aAbBsSkKiIfFtTzZ09 .-_/<>&"\\\n\tßſKİﬁéÉΣσς日\u2028😀'

texts = st.text(ALPHABET, max_size=40)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        thinking = [ThinkingBlock(draw(texts))] if draw(st.booleans()) else []
        calls = [ToolCall("c1", draw(texts) or "t", json.dumps({"q": draw(texts)}))] if draw(st.booleans()) else []
        out.append(
            Message(
                draw(st.sampled_from(["system", "user", "assistant"])), draw(texts), thinking=thinking, tool_calls=calls
            )
        )
    return out


@st.composite
def queries(draw: st.DrawFn, history: list[Message]) -> str:
    """A query likely to match: a slice of some text with its case changed, or a word or
    phrase query made from its words; sometimes just random text."""
    pieces = [p for m in history for p in message_text(m).split("\x1e") if p.strip()]
    if not pieces or draw(st.integers(0, 9)) == 0:
        return draw(st.text(ALPHABET, min_size=1, max_size=6))
    piece = draw(st.sampled_from(pieces))
    kind = draw(st.sampled_from(["slice", "word", "prefix", "phrase"]))
    words = piece.split()
    if kind == "slice" or not words:
        start = draw(st.integers(0, len(piece) - 1))
        text = piece[start : start + draw(st.integers(1, 8))]
        return "".join(ch.upper() if draw(st.booleans()) else ch for ch in text) or piece
    word = draw(st.sampled_from(words)).replace('"', "")
    if kind == "prefix" and len(word) > 1:
        return word[: max(1, len(word) // 2)] + "*"
    if kind == "phrase":
        return '"' + " ".join(w.replace('"', "") for w in words[:2]) + '"'
    return word or piece
