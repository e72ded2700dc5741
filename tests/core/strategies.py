"""Hypothesis strategies for golem histories, built to hit every repair case: dangling calls,
orphan results, results before their calls, duplicate results, reused and empty call IDs,
cut-off arguments, system and unknown-role messages, unsafe URLs, awkward text."""

from __future__ import annotations

import json

from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall
from hypothesis import strategies as st

CALL_IDS = st.sampled_from(["", "a", "b", "c", "call-1", "x"])
ROLES = st.sampled_from(["user", "assistant", "tool", "system", "", "critic"])

# Text that exercises Go's escaping: HTML characters, controls, U+2028, non-ASCII, quotes.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab <>&\"\\\n\t\b\f\x00\x1f\x7f\u2028\u2029é中😀")),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=12,
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def args_text(draw) -> str:
    """Argument text: valid JSON (object or not) with random spacing, cut-off JSON, or blank."""
    kind = draw(st.sampled_from(["object", "value", "cut", "blank", "nil", "garbage"]))
    if kind == "nil":
        return ""
    if kind == "blank":
        return draw(st.sampled_from([" ", "\n", " \t "]))
    if kind == "garbage":
        return draw(TEXT)
    value = draw(st.dictionaries(TEXT, JSON_VALUES, max_size=3)) if kind == "object" else draw(JSON_VALUES)
    sep = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    text = json.dumps(value, separators=sep, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        text = " " + text + "\n"
    if kind == "cut":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text


URLS = st.sampled_from([
    "https://example.com/a.png", "HTTP://x.org/b", "file:///etc/passwd", "javascript:alert(1)",
    "data:image/png;base64,AAAA", "//host/x", "https://exa mple.com/", "ftp://f/x", "s3://b/k",
    "https:opaque", "", "https://x:abc/", "http://[::1]:80/", "http://[::1",
])  # fmt: skip

PARTS = st.builds(
    Part,
    kind=st.sampled_from(["image", "document", "audio", "video", "weird"]),
    url=URLS,
    data=st.binary(max_size=6),
    media_type=st.sampled_from(["", "image/png", "application/pdf"]),
)

CALLS = st.builds(ToolCall, id=CALL_IDS, name=st.sampled_from(["roll", "f", ""]), args=args_text(),
                  signature=st.sampled_from(["", "sig"]))  # fmt: skip


# Built once, not inside ``messages``: a strategy built there would be built (and its types
# inspected) again for every message drawn, which cost more than drawing the message.
PART_LISTS = st.lists(PARTS, max_size=2)
CALL_LISTS = st.lists(CALLS, max_size=3)
THINKING = st.lists(st.builds(ThinkingBlock, text=TEXT, signature=st.sampled_from(["", "s"]),
                              redacted=st.sampled_from(["", "R"])), max_size=2)  # fmt: skip
TOOL_NAMES = st.sampled_from(["", "roll"])
RUN_IDS = st.sampled_from(["", "r1"])
CONVERSATION_IDS = st.sampled_from(["", "c1"])


@st.composite
def messages(draw) -> Message:
    role = draw(ROLES)
    return Message(
        role=role,
        content=draw(TEXT),
        parts=draw(PART_LISTS),
        tool_calls=draw(CALL_LISTS) if role in ("assistant", "user") else [],
        tool_call_id=draw(CALL_IDS) if role == "tool" else "",
        tool_name=draw(TOOL_NAMES),
        failed=draw(st.booleans()) if role == "tool" else False,
        thinking=draw(THINKING),
        run_id=draw(RUN_IDS),
        conversation_id=draw(CONVERSATION_IDS),
    )


HISTORIES = st.lists(messages(), max_size=12)
