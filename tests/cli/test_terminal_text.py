"""``terminal_text.visible``: what a terminal would obey is shown instead, character by
character, so a stream cut anywhere gives the same text; everything else is kept as it is."""

from __future__ import annotations

import unicodedata

from golem_cli.cli.render import terminal_text
from golem_cli.cli.render.terminal_text import VisibleStream, for_terminal, visible
from golem_cli.cli.tools.view import result_preview, summarize_args
from hypothesis import given
from hypothesis import strategies as st

#: Format characters (Cf) kept as they are: visible marks of their scripts, which neither hide
#: text nor reorder it. Every other Cf character is shown as <U+XXXX>.
KEPT_FORMAT = {
    *range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD, *range(0x13430, 0x13440),
}  # fmt: skip
JOINERS = ("\u200c", "\u200d")


def test_controls_in_caret_notation_newlines_and_tabs_kept():
    assert visible("a\x1b[2Jb\x07c\x00d\x7fe") == "a^[[2Jb^Gc^@d^?e"
    assert visible("line\n\tindented\r\nwindows\r\n") == "line\n\tindented\r\nwindows\r\n"
    assert visible("typed\roverwritten") == "typed^Moverwritten"


def test_osc_sequences_c1_and_bidi_are_shown():
    b9 = "evil \x1b]52;c;aGk=\x07\x1b[2J\x1b]0;TITLE\x07"  # QA B9: clipboard, clear, title
    assert visible(b9) == "evil ^[]52;c;aGk=^G^[[2J^[]0;TITLE^G"
    assert visible("\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\") == "^[]8;;http://evil/^[\\link^[]8;;^[\\"
    assert visible("\x9b31m C1 \u202e RLO text") == "<U+009B>31m C1 <U+202E> RLO text"  # QA R16
    assert visible("a\u2066b\u2069c\u200bd\ufeffe\U000e0041") == "a<U+2066>b<U+2069>c<U+200B>d<U+FEFF>e<U+E0041>"
    assert visible("lone \ud800 surrogate") == "lone <U+D800> surrogate"


def test_joiners_are_text_between_letters_and_shown_elsewhere():
    for word in ("👩\u200d💻", "می\u200cخواهم", "क्\u200dष"):
        assert visible(word) == word
    assert visible("rm\u200d -rf") == "rm<U+200D> -rf"
    assert visible("\u200dstart") == "<U+200D>start" and visible("é\u200d") == "é<U+200D>"
    assert visible("\u202e\u200d\u202e") == "<U+202E><U+200D><U+202E>"


def test_plain_text_comes_back_as_it_is():
    for text in (
        "",
        "plain ascii",
        "naïve café — 日本語 “quotes”",
        "emoji 🎉 ✅",
        "\t\n\r\n",
    ):
        assert visible(text) is text


def test_every_invisible_or_reordering_format_character_is_shown():
    for code in range(0x110000):
        char = chr(code)
        if unicodedata.category(char) != "Cf" or code in KEPT_FORMAT:
            continue
        shown = visible(f"x{char}y")
        assert shown == f"x<U+{code:04X}>y", hex(code)


def test_r16_the_tool_result_preview_and_summary_show_them():
    lines, more = result_preview("evil \x9b31m C1 \u202e RLO text\nsecond")
    assert lines == ["evil <U+009B>31m C1 <U+202E> RLO text", "second"] and more == 0
    assert summarize_args('{"command": "ls #\\u202e txt.exe"}') == "ls #<U+202E> txt.exe"


def test_only_terminals_get_it():
    class Tty:
        def isatty(self) -> bool:
            return True

    class Pipe:
        def isatty(self) -> bool:
            return False

    assert for_terminal("a\x1bb", Tty()) == "a^[b" and for_terminal("a\x1bb", Pipe()) == "a\x1bb"
    assert for_terminal("a\x1bb", object()) == "a\x1bb"


TRICKY = st.text(
    alphabet=st.sampled_from("ab \n\t\r\x1b\x07\x9b\u202e\u200b\u200c\u200dé👩\ud800\U000e0041"),
    max_size=40,
)


@given(TRICKY, st.lists(st.integers(1, 8), max_size=40))
def test_a_stream_cut_anywhere_shows_the_same_text(text: str, cuts: list[int]):
    stream, out, at = VisibleStream(), [], 0
    for size in cuts:
        out.append(stream.feed(text[at : at + size]))
        at += size
    out.append(stream.feed(text[at:]))
    out.append(stream.flush())
    assert "".join(out) == visible(text)


@given(st.text(max_size=60) | TRICKY)
def test_nothing_a_terminal_obeys_is_left_and_showing_twice_changes_nothing(text: str):
    shown = visible(text)
    assert visible(shown) == shown
    for i, char in enumerate(shown):
        code = ord(char)
        assert char in "\n\t" or (char == "\r" and shown[i + 1 : i + 2] == "\n") or (
            code >= 0x20 and not 0x7F <= code <= 0x9F and (unicodedata.category(char) not in ("Cf", "Cs", "Zl", "Zp")
                                                       or code in KEPT_FORMAT or char in JOINERS)
        ), (text, shown)  # fmt: skip


@given(st.text(max_size=60) | TRICKY)
def test_the_fast_checks_agree_with_the_replacement(text: str):
    """The quick looks that return plain text as it is (ASCII, a BMP class, joiners, astral
    ranges) never skip what the replacement would change."""
    assert visible(text) == terminal_text._patterns().unsafe.sub(terminal_text._shown, text)
