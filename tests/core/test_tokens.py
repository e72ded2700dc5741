"""The offline token estimate: its documented properties, and the door for exact counts."""

from __future__ import annotations

from golem_cli.core.history.processors import TokenCounter, budget_history
from golem_cli.core.messages import Message, Part, ThinkingBlock, ToolCall
from golem_cli.core.tokens import (
    MESSAGE_OVERHEAD,
    PART_TOKENS,
    PRETOKENIZE,
    EstimatingCounter,
    estimate_message,
    estimate_text,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.strategies import HISTORIES

ANY_TEXT = st.text(max_size=200)


def test_empty_text_is_zero_and_nonempty_is_positive():
    assert estimate_text("") == 0
    for text in ["a", " ", "\n", "_", "!", "1", "中", "🙂", "\x00", "\u0301", "'s"]:
        assert estimate_text(text) >= 1, text


@given(st.text(min_size=1, max_size=200))
def test_nonempty_text_costs_at_least_one_token(text):
    assert estimate_text(text) >= 1


@given(ANY_TEXT)
def test_every_character_lands_in_a_piece(text):
    assert "".join(PRETOKENIZE.findall(text)) == text


@given(ANY_TEXT, ANY_TEXT)
def test_appending_or_prepending_text_never_lowers_the_count(a, b):
    assert estimate_text(a + b) >= max(estimate_text(a), estimate_text(b))


@given(ANY_TEXT, ANY_TEXT)
def test_a_join_costs_at_most_one_more_and_at_least_half_of_its_parts(a, b):
    whole, parts = estimate_text(a + b), estimate_text(a) + estimate_text(b)
    assert parts <= 2 * whole
    assert whole <= parts + 1


def test_whitespace_merges_across_a_join():
    assert estimate_text("\r \r") < estimate_text("\r ") + estimate_text("\r")


def test_english_prose_is_in_the_range_of_real_tokenizers():
    # cl100k gives 10 tokens for this pangram and 4 for "Hello, world!"; the estimate may err
    # high, never by more than a factor of two on ordinary prose.
    pangram = "The quick brown fox jumps over the lazy dog."
    assert 10 <= estimate_text(pangram) <= 20
    assert 4 <= estimate_text("Hello, world!") <= 8
    paragraph = (
        "Token budgets keep long conversations inside a model's context window. "
        "The estimate errs on the high side, so a budget never overshoots by much."
    )
    words = len(paragraph.split())
    assert words <= estimate_text(paragraph) <= 2 * words + 10


def test_cjk_costs_one_token_per_character():
    assert estimate_text("你好世界") == 4
    assert estimate_text("こんにちは") == 5
    assert estimate_text("안녕하세요") == 5
    # far more per character than English, where a token spans several letters
    assert estimate_text("你好世界你好世界") > estimate_text("hello world, hi")


def test_numbers_cost_one_token_per_three_digits():
    assert estimate_text("7") == 1
    assert estimate_text("123") == 1
    assert estimate_text("1234") == 2
    assert estimate_text("123456789") == 3
    assert estimate_text("1234567890") == 4


def test_code_counts_punctuation_and_indentation():
    code = "def f(x):\n    return x ** 2\n"
    count = estimate_text(code)
    assert count > estimate_text("def f x return x 2")
    assert 8 <= count <= 20
    # indentation grows with depth, but slowly (runs of spaces merge)
    assert estimate_text("\n" + " " * 32 + "x") < estimate_text("\n" + " x" * 32)


def test_message_cost_includes_overhead_calls_results_thinking_and_parts():
    assert estimate_message(Message(role="user")) == MESSAGE_OVERHEAD
    text = Message(role="user", content="hello world")
    assert estimate_message(text) == MESSAGE_OVERHEAD + estimate_text("hello world")
    with_call = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args='{"sides": 6}')])
    assert estimate_message(with_call) > MESSAGE_OVERHEAD + estimate_text('{"sides": 6}')
    cut_args = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="roll", args='{"sid')])
    assert estimate_message(cut_args) < estimate_message(with_call)
    result = Message(role="tool", content="4", tool_call_id="c1", tool_name="roll")
    assert estimate_message(result) > estimate_message(Message(role="tool", content="4"))
    thinking = Message(role="assistant", thinking=[ThinkingBlock(text="let me think about it")])
    assert estimate_message(thinking) > MESSAGE_OVERHEAD
    image = Message(role="user", parts=[Part(kind="image", url="https://x/y.png")])
    assert estimate_message(image) == MESSAGE_OVERHEAD + PART_TOKENS["image"]


@settings(max_examples=50)
@given(HISTORIES, HISTORIES)
def test_counts_are_additive_over_messages(a, b):
    counter = EstimatingCounter()
    assert counter.count(a + b) == counter.count(a) + counter.count(b)
    assert counter.count(a) == sum(estimate_message(m) for m in a)


def test_cache_returns_the_same_count_and_survives_eviction():
    counter = EstimatingCounter(cache_size=2)
    history = [Message(role="user", content=f"message number {i}") for i in range(5)]
    first = counter.count(history)
    assert counter.count(history) == first
    assert first == sum(estimate_message(m) for m in history)


def test_anything_that_counts_is_a_counter_a_budget_takes():
    class Exact:
        def count(self, messages):
            return 100 * len(messages)

    history = [Message(role="user", content="old"), Message(role="user", content="new")]
    assert isinstance(Exact(), TokenCounter)
    assert budget_history(Exact(), 100)(history) == history[1:]
    assert budget_history(Exact(), 200)(history) == history


def test_budget_history_runs_on_the_estimate():
    history = [Message(role="user", content="word " * 50), Message(role="assistant", content="ok")]
    history += [Message(role="user", content="short"), Message(role="assistant", content="fine")]
    counter = EstimatingCounter()
    small = counter.count(history[2:])
    kept = budget_history(counter, small)(history)
    assert kept == history[2:]
    assert budget_history(counter, counter.count(history))(history) == history
