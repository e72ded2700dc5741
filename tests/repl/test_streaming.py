"""The streaming reply renderer: finished blocks printed once, only the open tail live."""

from __future__ import annotations

import io

from golem_cli.cli.render.streaming import ReplyRenderer, split_finished
from rich.console import Console


def test_split_at_blank_lines_outside_code_fences():
    assert split_finished("one\n\ntwo") == ("one\n\n", "two")
    assert split_finished("one\ntwo") == ("", "one\ntwo")
    text = "intro\n\n```py\nx = 1\n\ny = 2\n"
    assert split_finished(text) == ("intro\n\n", "```py\nx = 1\n\ny = 2\n")  # the fence is still open
    closed = text + "```\nafter"
    assert split_finished(closed) == (text + "```\n", "after")
    assert split_finished("~~~\na\n\n~~~\n\nb") == ("~~~\na\n\n~~~\n\n", "b")


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=80, height=24, color_system=None), out


def test_markdown_mode_prints_each_block_once_and_everything_by_the_end():
    c, out = console()
    r = ReplyRenderer(c, clock=lambda: 0.0)  # a frozen clock: the live tail never redraws,
    r.waiting()  # so the capture holds only what is printed for good
    text = "# Title\n\nfirst paragraph\n\n- a\n- b\n\n```\ncode\n```\n\nlast words"
    for i in range(0, len(text), 3):
        r.feed(text[i : i + 3])
    assert r.finish() == text
    printed = out.getvalue()
    for piece in ("Title", "first paragraph", "code", "last words"):
        assert piece in printed
    assert printed.count("first paragraph") == 1  # a finished block is never re-printed


def test_live_refresh_is_throttled():
    c, _ = console()
    clock = [0.0]
    r = ReplyRenderer(c, clock=lambda: clock[0], fps=10)
    for _ in range(1000):  # 1,000 deltas within 0.5 s of stream time
        clock[0] += 0.0005
        r.feed("word ")
    r.finish()
    assert r.renders <= 8


def test_plain_mode_writes_deltas_verbatim():
    out = io.StringIO()
    r = ReplyRenderer(None, markdown=False, stream=out)
    r.waiting()
    for piece in ("**not", " rendered**", "\n\nsecond"):
        r.feed(piece)
    r.finish()
    assert out.getvalue() == "**not rendered**\n\nsecond\n"


def test_live_tail_shows_the_newest_text_of_a_long_paragraph():
    from golem_cli.cli.render.streaming import _Tail

    c, out = console()
    tail = _Tail(max_lines=6)
    tail.text = " ".join(f"w{i}" for i in range(600))  # one paragraph, ~50 wrapped rows
    c.print(tail)
    shown = out.getvalue()
    assert "w599" in shown and "w0 " not in shown
    assert shown.count("\n") <= 6


def test_spinner_says_thinking_while_the_model_reasons():
    c, out = console()
    r = ReplyRenderer(c, clock=lambda: 0.0)
    r.waiting()
    r.thinking()
    assert "thinking" in str(r._spinner.text)
    r.feed("answer")
    r.thinking()  # after the first token the spinner is gone; nothing breaks
    assert r.finish() == "answer"


def test_an_endless_paragraph_is_drawn_within_bounds():
    """A flood without line breaks: the live region renders only what it can show, and the
    rest is printed as text, not re-rendered as megabytes of markdown (issue 8)."""
    from golem_cli.cli.render.streaming import MARKDOWN_LIMIT, _Tail

    tail = _Tail(10)
    tail.text = "All work and no play. " * 100_000
    assert len(tail.visible()) == 10 * 400 and tail.visible().endswith("no play. ")
    out = io.StringIO()
    renderer = ReplyRenderer(Console(file=out, force_terminal=True, width=80), markdown=True)
    renderer.feed("*not emphasis* " * (MARKDOWN_LIMIT // 10))
    renderer.finish()
    assert "*not emphasis*" in out.getvalue()  # printed as it came
