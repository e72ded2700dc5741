"""The streaming reply renderer: finished blocks printed once, only the open tail live."""

from __future__ import annotations

import io

from golem_cli.cli.render.streaming import ReplyRenderer, split_finished
from golem_cli.cli.render.terminal_text import markdown
from rich.console import Console

from tests.repl.conftest import plain


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
    from golem_cli.cli.render.streaming import _OpenBlock

    c, out = console()
    tail = _OpenBlock(max_lines=6)
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
    from golem_cli.cli.render.streaming import MARKDOWN_LIMIT, _OpenBlock

    tail = _OpenBlock(10)
    tail.text = "All work and no play. " * 100_000
    assert len(tail.visible()) == 10 * 400 and tail.visible().endswith("no play. ")
    out = io.StringIO()
    renderer = ReplyRenderer(Console(file=out, force_terminal=True, width=80), markdown=True)
    renderer.feed("*not emphasis* " * (MARKDOWN_LIMIT // 10))
    renderer.finish()
    assert "*not emphasis*" in out.getvalue()  # printed as it came


# --- the incremental splitter: blocks do not depend on where the stream was cut --------------

from golem_cli.cli.render.streaming import BlockSplitter  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: lines that exercise every rule: fences of both kinds (opening, closing, with a language),
#: blank and whitespace-only lines, text, tables, list items, and characters that are line
#: breaks to ``str.splitlines`` but not to markdown streaming (``\r``, U+2028)
LINES = st.sampled_from(
    ["```", "```py", "~~~", "````", "", "  ", "text", "| a | b |", "- item", "x\r", "a\u2028b", "  ```  "]
)


@st.composite
def streamed(draw):
    """A reply and the places a provider cut it into deltas."""
    text = "\n".join(draw(st.lists(LINES, max_size=30))) + draw(st.sampled_from(["", "\n", "tail"]))
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=12)))
    return text, [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@given(streamed())
def test_blocks_found_incrementally_equal_the_blocks_of_the_whole_text(case):
    text, deltas = case
    whole = BlockSplitter()
    expected = whole.feed(text)
    splitter = BlockSplitter()
    found = [block for delta in deltas for block in splitter.feed(delta)]
    assert found == expected
    assert splitter.open_block == whole.open_block
    assert "".join(found) + splitter.open_block == text


@given(streamed(), st.integers(1, 6))
def test_the_live_region_shows_the_open_blocks_last_lines(case, count):
    text, deltas = case
    splitter = BlockSplitter()
    for delta in deltas:
        splitter.feed(delta)
    first, kept, more = splitter.last_lines(count)
    lines = splitter.open_block.split("\n") if splitter.open_block else []
    if splitter.open_block.endswith("\n"):
        lines.pop()
    assert kept == lines[-count:] and more == (len(lines) > count)
    assert not lines or first.rstrip("\n") == lines[0]


def test_a_renderer_prints_the_same_blocks_however_the_reply_arrives():
    text = "# T\n\npara one\nstill one\n\n```py\nx = 1\n\ny = 2\n```\n| a | b |\n|---|---|\n\nend"
    printed = []
    for size in (1, 3, 7, len(text)):
        c, _ = console()
        r = ReplyRenderer(c, clock=lambda: 0.0)
        blocks: list[str] = []
        r._print_block = blocks.append  # what is rendered for good, apart from the live region's noise
        for i in range(0, len(text), size):
            r.feed(text[i : i + size])
        assert r.finish() == text
        printed.append(blocks)
    assert printed[0] == ["# T\n\n", "para one\nstill one\n\n", "```py\nx = 1\n\ny = 2\n```\n",
                          "| a | b |\n|---|---|\n\n", "end"]  # fmt: skip
    assert all(blocks == printed[0] for blocks in printed)


def test_code_blocks_are_cropped_with_a_marker_never_wrapped():
    """rich wrapped a long line of a code block onto the next line: a command copied from the
    screen broke there. A line that does not fit ends in a marker; the next line is the next
    line of code; prose still wraps at words."""
    out = io.StringIO()
    c = Console(file=out, force_terminal=True, width=40, height=24, color_system=None)
    command = "curl -sSL https://example.com/a/very/long/path/that/goes/on --output file.txt"
    r = ReplyRenderer(c, clock=lambda: 0.0)
    r.feed(f"Run this, which fetches the file and writes it where you want it:\n\n```sh\n{command}\necho ok\n```\n\ndone")
    r.finish()
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    code = [line.strip() for line in lines if line.strip().startswith(("curl", "echo", "--output", "file.txt"))]
    assert code == ["curl -sSL https://example.com/a/very/…", "echo ok"], lines
    assert all(len(line) <= 40 for line in lines)
    assert any(line.startswith("Run this, which fetches the file and") for line in lines)  # prose wraps


# --- on the screen: a reply streamed block by block looks like the whole reply rendered ------

REPLY = (
    "# Plan\n\nFirst paragraph, which runs on\nover two lines.\nSecond paragraph.\n\n- one\n- two\n\n"
    "```py\nx = 1\n```\nAfter the code.\n\n---\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "1. first\n2. second\n\n***\nlast words"
)


def test_a_streamed_reply_on_the_screen_is_the_whole_reply_rendered_at_once(spawn, server):
    """Blocks printed one by one are separated by the blank lines rich puts between them in the
    whole reply (they were glued together: paragraphs ran into each other)."""
    from golem_cli.cli.render.terminal_text import markdown

    from tests.providerserver import Reply, Scenario

    server.enqueue(Scenario(reply=Reply(text=REPLY)))
    chat = spawn("chat")
    chat.size = (80, 120)  # room for the banner, the whole reply and the footer
    chat.child.setwinsize(*chat.size)
    chat.prompt()
    chat.say("go")
    screen = chat.screen()
    start = screen.index("you> go") + 1
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=120, color_system=None).print(markdown(REPLY))
    whole = [line.rstrip() for line in out.getvalue().splitlines()]
    assert screen[start : start + len(whole)] == whole
    assert screen[start + len(whole)].strip() != "" and "last words" in screen[start + len(whole) - 1]


def test_a_reply_resumed_after_a_tool_call_starts_without_a_gap():
    """``finish()`` ends a stretch of the reply (a tool call's lines come next): the blank line
    between blocks is not carried over to the text after them."""
    c, out = console()
    r = ReplyRenderer(c, clock=lambda: 0.0)
    r.feed("para one\n\npara two")
    r.finish()
    c.print("tool line")
    r.feed("after the tool")
    r.finish()
    lines = [line.rstrip() for line in plain(out.getvalue()).splitlines()]
    assert lines == ["para one", "", "para two", "tool line", "after the tool"], lines


#: blocks a blank line ends in the whole reply too (a list, an indented code block or a list
#: item's continuation can run on past one: splitting at blank lines does not keep those)
BLOCKS = st.sampled_from(
    ["para one\nstill one", "# Head", "## Sub\ntext under", "- a\n- b", "> quoted", "| a | b |\n|---|---|\n| 1 | 2 |",
     "```py\nx = 1\n```", "---", "***", "text\n***", "```\ncode\n```\nafter code", "para\n---", "**bold** and `code`"]
)  # fmt: skip


def screen_of(output: str) -> list[str]:
    """The 60-column screen ``output`` leaves, as tall as its lines: nothing scrolls off (the
    renderers move the cursor down only by newlines), and an emulator's cost is its height."""
    import pyte

    screen = pyte.Screen(60, output.count("\n") + 1)
    pyte.Stream(screen).feed(output.replace("\n", "\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def apart(blocks: list[str]) -> bool:
    """No two lists in a row: the whole reply makes them one loose list."""
    return not any("- a" in a and "- a" in b for a, b in zip(blocks, blocks[1:], strict=False))


@given(st.lists(BLOCKS, min_size=1, max_size=5).filter(apart), st.randoms(use_true_random=False))
def test_blocks_printed_one_by_one_look_like_the_whole_reply(blocks, rng):
    text = "\n\n".join(blocks)
    whole = io.StringIO()
    Console(file=whole, force_terminal=True, width=60, color_system=None).print(markdown(text))
    streamed = io.StringIO()
    r = ReplyRenderer(Console(file=streamed, force_terminal=True, width=60, color_system=None), clock=lambda: 0.0)
    at = 0
    while at < len(text):
        step = rng.randint(1, 7)
        r.feed(text[at : at + step])
        at += step
    r.finish()
    assert screen_of(streamed.getvalue()) == screen_of(whole.getvalue())
