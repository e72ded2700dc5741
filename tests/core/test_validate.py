"""Run-start validation: the exact Go texts of spec §1.3, in Go's order."""

from __future__ import annotations

import pytest
from golem_cli.core.codec.gojson import go_quote_q
from golem_cli.core.errors import HistoryValidationError
from golem_cli.core.history.validate import part_error, thinking_error, validate_run_input
from golem_cli.core.messages import Message, Part, ThinkingBlock
from hypothesis import given
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES, PARTS

GOOD_IMAGE = Part(kind="image", url="https://example.com/a.png")


@pytest.mark.parametrize(
    ("part", "text"),
    [
        (Part(kind="sticker", url="https://x"), 'model: unsupported part kind "sticker"'),
        (Part(kind="", url="https://x"), 'model: unsupported part kind ""'),
        (Part(kind='a"b\\c\n', url="https://x"), 'model: unsupported part kind "a\\"b\\\\c\\n"'),
        (Part(kind="IMAGE", url="https://x"), 'model: unsupported part kind "IMAGE"'),
        (
            Part(kind="image", url="https://x", data=b"1", media_type="image/png"),
            "model: image part carries both a URL and inline data; set exactly one",
        ),
        (Part(kind="audio"), "model: audio part has neither a URL nor inline data"),
        (Part(kind="document", data=b"%PDF"), "model: document part with inline data requires a media type"),
        (Part(kind="video", url="https://x/v.mp4"), None),
        (Part(kind="image", data=b"\x89PNG", media_type="image/png"), None),
        # the URL is the provider's to fetch; the media type is optional with a URL
        (Part(kind="document", url="https://x/d.pdf", media_type=""), None),
    ],
)
def test_part_errors_in_go_order(part, text):
    assert part_error(part) == text


@pytest.mark.parametrize(
    ("block", "text"),
    [
        (ThinkingBlock(), "model: thinking block carries neither text nor redacted data"),
        (ThinkingBlock(signature="s"), "model: thinking block carries neither text nor redacted data"),
        (ThinkingBlock(text="t", redacted="r"), "model: thinking block carries both text and redacted data; set exactly one"),
        (ThinkingBlock(redacted="r", signature="s"), "model: redacted thinking cannot carry a signature"),
        (ThinkingBlock(text="t", signature="s"), None),
        (ThinkingBlock(text="t"), None),
        (ThinkingBlock(redacted="r"), None),
    ],
)
def test_thinking_errors(block, text):
    assert thinking_error(block) == text


def _raises(parts, history) -> str:
    with pytest.raises(HistoryValidationError) as info:
        validate_run_input(parts, history)
    return str(info.value)


def test_prompt_parts_are_checked_first_with_their_index():
    history = [Message(role="assistant", parts=[GOOD_IMAGE])]  # also invalid, but later
    text = _raises([GOOD_IMAGE, Part(kind="gif", url="https://x")], history)
    assert text == 'golem: prompt part 1: model: unsupported part kind "gif"'


def test_history_message_texts():
    assert _raises([], [Message(role="user"), Message(role="assistant", parts=[GOOD_IMAGE])]) == (
        "golem: history message 1: parts are only supported on user and tool messages"
    )
    assert _raises([], [Message(role="system", parts=[GOOD_IMAGE])]) == (
        "golem: history message 0: parts are only supported on user and tool messages"
    )
    assert _raises([], [Message(role="tool", parts=[GOOD_IMAGE, Part(kind="image")])]) == (
        "golem: history message 0 part 1: model: image part has neither a URL nor inline data"
    )
    assert _raises([], [Message(role="user"), Message(role="user", thinking=[ThinkingBlock(text="t")])]) == (
        "golem: history message 1: thinking is only supported on assistant messages"
    )
    assert _raises([], [Message(role="assistant", thinking=[ThinkingBlock(text="ok"), ThinkingBlock()])]) == (
        "golem: history message 0 thinking block 1: model: thinking block carries neither text nor redacted data"
    )


def test_role_check_comes_before_part_check_within_a_message():
    bad = Message(role="assistant", parts=[Part(kind="nope")])
    assert "parts are only supported" in _raises([], [bad])


def test_valid_input_passes():
    validate_run_input(
        [GOOD_IMAGE],
        [
            Message(role="user", content="hi", parts=[GOOD_IMAGE]),
            Message(role="assistant", thinking=[ThinkingBlock(text="t", signature="s"), ThinkingBlock(redacted="r")]),
            Message(role="tool", parts=[Part(kind="image", data=b"x", media_type="image/png")]),
        ],
    )


def test_go_quote_q():
    assert go_quote_q("plain") == '"plain"'
    assert go_quote_q("é中😀") == '"é中😀"'
    assert go_quote_q("\x00\x07\x7f\t") == '"\\x00\\a\\x7f\\t"'
    assert go_quote_q("\u00a0\u2028") == '"\\u00a0\\u2028"'
    assert go_quote_q("<&>") == '"<&>"'  # %q is not HTML-escaped, unlike JSON
    assert go_quote_q(b"\xff".decode("utf-8", "surrogateescape")) == '"\\xff"'


@given(HISTORIES, st.lists(PARTS, max_size=3))
def test_validation_only_ever_raises_its_own_error(history, parts):
    try:
        validate_run_input(parts, history)
    except HistoryValidationError as exc:
        assert str(exc).startswith("golem: ")
