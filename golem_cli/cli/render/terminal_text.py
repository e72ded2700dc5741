"""Text golem did not write, made safe to show on a terminal.

A reply, a tool's output, a conversation title, a server's error message can hold characters a
terminal obeys instead of showing: ESC starts sequences that write the clipboard (OSC 52),
make hyperlinks (OSC 8), retitle the window (OSC 0) or clear the screen (``ESC[2J``); a C1
control does the same in one character (U+009B is CSI); a bidi override or isolate (U+202E,
U+2066) reorders what is shown, so ``ls #‮…`` can read differently from what runs; and
zero-width characters hide text. ``visible`` shows each of them instead:

- C0 controls and DEL in caret notation, as ``cat -v`` does: ESC is ``^[``, BEL ``^G``,
  a lone CR ``^M``, DEL ``^?``. Newline and tab are kept, and so is CR before a newline.
- C1 controls, bidi controls and invisible format characters as ``<U+202E>``.
- Zero-width (non-)joiners between two non-ASCII letters or symbols are kept: there they are
  text (emoji sequences, Persian, Indic scripts), and they reorder nothing.

It works character by character, without parsing sequences, so a chunk boundary inside an
escape sequence changes nothing: a streamed reply goes through ``VisibleStream``, which only
holds back a final CR or joiner until it sees the character after it.

Terminals only: a pipe or a file gets the text as it is (``for_terminal``), byte for byte.
Everything printed through ``console.rich_console`` on a terminal passes a render hook
(``show_visibly``) as a last line of defence; the places that lay out untrusted text (a reply,
a transcript, a tool result) make it visible first, so rich measures what it will print.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderResult
    from rich.markdown import Markdown

#: Format characters (Unicode category Cf) shown as ``<U+XXXX>``: the invisible and the
#: reordering ones. The other Cf characters (Arabic and Kaithi number signs, Egyptian
#: hieroglyph joiners, …) are visible marks of their scripts and are kept. Line and paragraph
#: separators join them: a terminal does not break the line there.
_FORMAT = "\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u2028\u2029"
_FORMAT_ASTRAL = "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
_JOINERS = "\u200c\u200d"
_SURROGATES = "\ud800-\udfff"  # a lone one cannot even be written to a UTF-8 terminal
_BMP = f"\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_FORMAT}{_SURROGATES}"
# Searching is what costs: a class of characters below U+10000 is one bitmap lookup per
# character, the astral ranges a walk over a list, so they are looked for apart, and only in
# text that has astral characters at all. Joiners are looked for apart too (emoji text is full
# of them): only one that is not between two letters needs showing.
_NOT_LETTER = f"\\x00-\\xbf{_FORMAT}{_FORMAT_ASTRAL}{_JOINERS}{_SURROGATES}"


class _Patterns:
    """The patterns, compiled on first use: ASCII text (a chat's banner, before its prompt)
    never needs them, and compiling them is most of what importing this module costs."""

    def __init__(self) -> None:
        self.unsafe = re.compile(f"[{_BMP}{_FORMAT_ASTRAL}{_JOINERS}]")
        self.bmp = re.compile(f"[{_BMP}]")
        self.astral = re.compile(f"[{_FORMAT_ASTRAL}]")
        self.lone_joiner = re.compile(f"[{_JOINERS}](?:(?<![^{_NOT_LETTER}][{_JOINERS}])|(?![^{_NOT_LETTER}]))")


_compiled: _Patterns | None = None


def _patterns() -> _Patterns:
    global _compiled
    if _compiled is None:
        _compiled = _Patterns()
    return _compiled


#: ASCII text: each control character but tab, newline and CR becomes NUL (then one ``in``).
_ASCII_MARK = str.maketrans(dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F], 0))
_HOLD = "\r" + _JOINERS  # what a streamed chunk may not end with: the next character decides


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code == 0x0D:  # CR: kept before a newline, else later text would overwrite the line
        at = match.end()
        return char if match.string[at : at + 1] == "\n" else "^M"
    if char in _JOINERS and _is_letter(match.string, match.start() - 1) and _is_letter(match.string, match.end()):
        return char
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def _is_letter(text: str, at: int) -> bool:
    """Whether ``text[at]`` is a non-ASCII letter or symbol shown as it is (a joiner's
    neighbour in an emoji sequence or a Persian word)."""
    return 0 <= at < len(text) and text[at] >= "\xc0" and _patterns().unsafe.match(text[at]) is None


def _plain_ascii(text: str) -> bool:
    """ASCII text with no control character but tab, newline and CR before a newline: the
    common case, checked at C speed (``str.translate`` has a fast path for ASCII)."""
    if "\x00" in text.translate(_ASCII_MARK):
        return False
    return "\r" not in text or text.count("\r") == text.count("\r\n")


def _plain(text: str) -> bool:
    """Whether ``text`` holds nothing ``visible`` would change (ASCII: give or take a CR,
    which ``_shown`` decides in context)."""
    if text.isascii():
        return _plain_ascii(text)
    patterns = _patterns()
    if patterns.bmp.search(text) is not None:
        return False
    if ("\u200c" in text or "\u200d" in text) and patterns.lone_joiner.search(text) is not None:
        return False
    has_astral = len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
    return not has_astral or patterns.astral.search(text) is None


def visible(text: str) -> str:
    """``text`` with every control, bidi and invisible format character shown as text
    (``^[``, ``<U+202E>``), newlines and tabs kept. Text without any is returned as is."""
    if _plain(text):
        return text
    return _patterns().unsafe.sub(_shown, text)


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def for_terminal(text: str, stream: Any) -> str:
    """``visible(text)`` when ``stream`` is a terminal, else ``text`` unchanged."""
    return visible(text) if is_terminal(stream) else text


class VisibleStream:
    """``visible`` for text that arrives in pieces (a streamed reply): feed each piece, write
    what comes back, and write ``flush()`` at the end."""

    def __init__(self) -> None:
        self._held = ""  # a final CR or joiner, shown once the next character is known
        self._before = ""  # the last character shown, when it is plain text: a joiner's context

    def feed(self, piece: str) -> str:
        text = self._held + piece
        self._held = ""
        if text and text[-1] in _HOLD:
            text, self._held = text[:-1], text[-1]
        if not text:
            return ""
        context = self._before
        last = text[-1]
        self._before = last if " " <= last < "\x7f" or _patterns().unsafe.match(last) is None else ""
        return visible(context + text)[len(context) :]

    def flush(self) -> str:
        """What is held back, shown as it is at the end of the text."""
        held, self._held = self._held, ""
        if not held:
            return ""
        context, self._before = self._before, ""
        return visible(context + held)[len(context) :]


def markdown(text: str) -> Markdown:
    """Markdown for text golem did not write: made visible first, and links shown with their
    address instead of as terminal hyperlinks (OSC 8), so the link is what it says; code
    blocks are cropped, never wrapped (``code_blocks``)."""
    from golem_cli.cli.render.code_blocks import UnwrappedMarkdown

    return UnwrappedMarkdown(visible(text), hyperlinks=False)


class _Visible:
    """A renderable whose text segments pass through ``visible`` (rich's own control
    segments, such as the cursor moves of a live region, pass untouched)."""

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for segment in console.render(self.renderable, options):
            if segment.control or _plain(segment.text):
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style)


def show_visibly(console: Console) -> None:
    """Make every text ``console`` prints visible: a render hook, the last line of defence
    for a terminal console (what is laid out should be made visible before, so that rich
    measures what it prints)."""
    from rich.console import RenderHook

    class Hook(RenderHook):
        def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
            return [_Visible(r) for r in renderables]

    console.push_render_hook(Hook())
