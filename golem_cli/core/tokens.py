"""Token counting for history budgets: an offline estimate, and a door for exact counts.

``budget_history(counter, max_tokens)`` needs *a* number for a list of messages. The exact
number depends on the provider's tokenizer, which golem cannot download at run time (no
tiktoken files, no network). So the core ships ``EstimatingCounter``, a documented estimate
that errs on the high side; anything with a ``count(messages) -> int`` method
(``history.processors.TokenCounter``) can stand in for it where a caller knows the exact
count.

How the estimate works (``estimate_text``): the text is split into pieces with a
pre-tokenizer close to the one GPT tokenizers use (``PRETOKENIZE``: contractions, a word with
an optional leading non-letter, runs of at most three digits, punctuation runs, whitespace).
Each piece is then priced by what it is made of:

==========================  ===================================================================
character in a piece        weight (a piece costs the rounded-up sum, at least 1)
==========================  ===================================================================
ASCII letter                0.2 token (English words are ~5 letters per token; a leading
                            ASCII space or symbol before a word is free, as in BPE)
CJK, kana, hangul           1 token
other letters               0.5 token (Cyrillic, Greek, accented words split often)
ASCII punctuation, symbol   0.5 token
anything else               0.5 token per UTF-8 byte (emoji, rare symbols)
==========================  ===================================================================

A run of at most three digits costs one token (the pre-tokenizer never yields more); a
whitespace run costs one, plus one per 8 further characters.

A message costs ``MESSAGE_OVERHEAD`` (role and framing) plus its content, each tool call
(``TOOL_CALL_OVERHEAD`` + name + id + raw argument text), the tool name and call ID of a
tool result, thinking text (redacted thinking at one token per 4 characters), and a fixed
price per part kind (``PART_TOKENS``; media cost depends on resolution and pages, which the
core cannot see). A list of messages costs exactly the sum of its messages, so a budget can
drop messages one at a time and know what it saves.

Properties the tests pin: non-empty text costs at least one token; appending or prepending
text never lowers the count; a join costs at most one token more than its parts and at least
half of them (pieces merge across the join, as real tokens do); the message count is exactly
additive; and the estimate is within a factor of two of cl100k on ordinary English prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from golem_cli.core.messages import Message, Part

__all__ = ["EstimatingCounter", "estimate_text"]

MESSAGE_OVERHEAD: Final = 4
TOOL_CALL_OVERHEAD: Final = 3
#: Rough per-part prices: an image at OpenAI's 1024x1024 high-detail cost; a document page
#: run; a short audio clip; a short video. Providers with exact counts should supply them.
PART_TOKENS: Final = {"image": 765, "document": 1500, "audio": 1000, "video": 4000}
UNKNOWN_PART_TOKENS: Final = 1000

#: The pre-tokenizer: GPT-style pieces, using Python ``re`` classes (``[^\W\d_]`` = letters).
PRETOKENIZE: Final = re.compile(
    r"""'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])"""  # contractions
    r"""|[^\r\n\w]?[^\W\d_]+"""  # a word, with an optional leading space or symbol
    r"""|\d{1,3}"""  # numbers in runs of at most three digits
    r"""| ?(?:[^\s\w]|_)+[\r\n]*"""  # punctuation and symbols (and the newlines that follow)
    r"""|\s*[\r\n]+"""  # newline runs
    r"""|\s+(?!\S)|\s+"""  # other whitespace
    r"""|[\s\S]""",  # safety net: every character lands in some piece
)

#: CJK ideographs, kana and hangul, as ranges of code points (a character class over them costs
#: a regular expression several milliseconds to compile, at every import).
_CJK: Final = (
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F),
)  # fmt: skip


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _char_weight(ch: str) -> int:
    """Tenths of a token one character of a word or symbol run costs."""
    if ch.isascii():
        return 2 if ch.isalpha() else 5
    code = ord(ch)
    if any(low <= code <= high for low, high in _CJK):
        return 10
    if ch.isalpha():
        return 5
    return 5 * len(ch.encode("utf-8", "surrogatepass"))


def _piece_tokens(piece: str) -> int:
    if piece.isspace():
        return 1 + len(piece) // 8
    if piece.isdigit() and len(piece) <= 3:
        return 1
    body = piece.rstrip("\r\n") or piece
    head = body[0]
    # An ASCII space or symbol in front of a word merges into the word's first token, as in
    # BPE vocabularies; a non-ASCII one (a full-width comma) costs what it weighs.
    if len(body) > 1 and head.isascii() and not (head.isalnum() or head == "'") and body[1].isalpha():
        body = body[1:]
    return _ceil_div(sum(_char_weight(ch) for ch in body), 10)


def estimate_text(text: str) -> int:
    """Estimated tokens of a text; 0 only for the empty string."""
    return sum(_piece_tokens(piece) for piece in PRETOKENIZE.findall(text))


def estimate_part(part: Part) -> int:
    """Fixed price of a media part by kind (see ``PART_TOKENS``)."""
    return PART_TOKENS.get(part.kind, UNKNOWN_PART_TOKENS)


def estimate_message(message: Message) -> int:
    """Estimated tokens of one message, framing included."""
    total = MESSAGE_OVERHEAD + estimate_text(message.content)
    for call in message.tool_calls:
        total += TOOL_CALL_OVERHEAD + estimate_text(call.name) + estimate_text(call.id)
        total += estimate_text(call.args)
    if message.tool_call_id or message.tool_name:
        total += estimate_text(message.tool_call_id) + estimate_text(message.tool_name)
    for block in message.thinking:
        total += estimate_text(block.text) + _ceil_div(len(block.redacted), 4)
    total += sum(estimate_part(part) for part in message.parts)
    return total


class EstimatingCounter:
    """The offline estimate (module docstring). Remembers per-message counts, because a budget
    counts every suffix of a long history and would otherwise re-read it quadratically."""

    def __init__(self, cache_size: int = 100_000) -> None:
        self._cache: dict[int, tuple[Message, int]] = {}
        self._cache_size = cache_size

    def count(self, messages: Sequence[Message]) -> int:
        return sum(self._count_one(message) for message in messages)

    def _count_one(self, message: Message) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        tokens = estimate_message(message)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        # Keeping the message alive keeps its id() from being reused while cached.
        self._cache[id(message)] = (message, tokens)
        return tokens
