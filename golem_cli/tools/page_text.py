"""The readable text of an HTML page, for the model: plain lines with Markdown's marks.

Headings become ``#`` lines, list items ``-`` or ``1.`` lines indented by nesting, links
``text (url)``, ``<pre>`` a fenced block kept as it is, table rows ``| a | b |`` lines, block
quotes ``>`` lines; scripts, styles and whatever else a reader does not see are dropped, and
the page's title comes first.

The page is the server's, so any markup. ``html.parser`` reads anything without raising, and
what is kept here while it reads is counters and flags (and one number per open list), so
deep nesting costs no more than its text. Two bounds are golem's own: the text stops at about
twice the page's size (a page of short links resolved against a long URL would otherwise
multiply it), and a tag, comment or declaration that never ends runs to the end of the page,
as in a browser, instead of being read back as text by ``close``, which takes time quadratic
in what follows it on Python releases without the fix of CPython issue 135462.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin

BLOCKS = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "hr", "dl",
                    "figure", "form", "details", "summary", "address", "fieldset"})  # fmt: skip
LINES = frozenset({"br", "dt", "dd", "figcaption", "caption"})
HEADINGS = {f"h{level}": "#" * level + " " for level in range(1, 7)}
LISTS = frozenset({"ul", "ol", "menu"})
BREAKS = BLOCKS | LINES | HEADINGS.keys() | {"blockquote"}
TABLE = frozenset({"table", "tr", "td", "th"})
INLINE_CODE = frozenset({"code", "kbd", "samp", "tt"})
HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object"})
UNSHOWN_LINKS = ("#", "javascript:", "data:")
MAX_INDENT = 10  # list and quote levels shown; deeper ones are shown at this depth
FENCE = "```"


class PageText(HTMLParser):
    """The text of one page, built as it is parsed (``html_to_text`` drives it)."""

    def __init__(self, base: str = "", budget: int = 1_000_000) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.budget = budget  # characters of text kept at most
        self.size = 0
        self.full = False  # text was left out: the budget is spent
        self.lines: list[str] = []  # the finished lines
        self.words: list[str] = []  # the line being built; its spaces are collapsed when it is finished
        self.marker = ""  # the line's mark: a heading's "## ", a list item's "- "
        self.gap = False  # a blank line goes before the next line
        self.title: list[str] | None = None  # the title's text while it is read
        self.page_title = ""
        self.hidden = 0  # depth inside elements a reader does not see
        self.code: list[str] | None = None  # the text of the open <pre>, kept as it is
        self.pre_depth = 0
        self.lists: list[int] = []  # per open list: 0 for bullets, else its next number
        self.quotes = 0
        self.href = ""  # the target of the open link
        self.link_text = 0  # where the open link's text starts in ``words``
        self.cells = 0  # cells of the open table row
        self.header_row = False  # the open row has header cells
        self.rows = 0  # rows of the open table so far

    # --- the parser's events -------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN:
            self.hidden += 1
        elif self.hidden:
            return
        elif tag == "title":
            self.title = None if self.page_title else []
        elif tag in BREAKS:
            self._block_start(tag)
        elif tag in LISTS or tag == "li":
            self._list_start(tag)
        elif tag in TABLE:
            self._table_start(tag)
        elif tag == "pre":
            self._pre_start()
        elif tag == "a":
            self._link_start(dict(attrs).get("href") or "")
        elif tag in INLINE_CODE:
            self._code_mark()

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif self.hidden:
            return
        elif tag == "title" and self.title is not None:
            self.page_title = " ".join("".join(self.title).split())
            self.title = None
        elif tag in BREAKS:
            self._block_end(tag)
        elif tag in LISTS or tag == "li":
            self._list_end(tag)
        elif tag in TABLE:
            self._table_end(tag)
        elif tag == "pre":
            self._pre_end()
        elif tag == "a":
            self._link_end()
        elif tag in INLINE_CODE:
            self._code_mark()

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self._add(data, self.title if self.title is not None else self.code)

    # --- what the tags do ----------------------------------------------------------------------

    def _block_start(self, tag: str) -> None:
        self._block(blank=tag not in LINES)
        if tag in HEADINGS:
            self.marker = HEADINGS[tag]
        elif tag == "blockquote":
            self.quotes += 1

    def _block_end(self, tag: str) -> None:
        self._block(blank=tag not in LINES)
        if tag in HEADINGS:
            self.marker = ""
        elif tag == "blockquote":
            self.quotes = max(0, self.quotes - 1)

    def _list_start(self, tag: str) -> None:
        self._line()
        if tag != "li":
            self.gap = self.gap or not self.lists  # a blank line around the outermost list
            self.lists.append(1 if tag == "ol" else 0)
        elif self.lists and self.lists[-1]:
            self.marker = f"{self.lists[-1]}. "
            self.lists[-1] += 1
        else:
            self.marker = "- "

    def _list_end(self, tag: str) -> None:
        self._line()
        self.marker = ""
        if tag != "li" and self.lists:
            self.lists.pop()
            self.gap = self.gap or not self.lists

    def _table_start(self, tag: str) -> None:
        if tag == "table":
            self._row_end()
            self._block(blank=True)
            self.rows = 0
        elif tag == "tr":
            self._row_end()  # an unclosed row ends where the next begins
            self._block(blank=False)
        else:
            self._add(" | " if self.cells else "| ")
            self.cells += 1
            self.header_row = self.header_row or tag == "th"

    def _table_end(self, tag: str) -> None:
        if tag in ("table", "tr"):
            self._row_end()
        if tag == "table":
            self._block(blank=True)

    def _row_end(self) -> None:
        """Finish the open table row as ``| a | b |``, with Markdown's rule under a header row."""
        if not self.cells:
            return
        cells, rule = self.cells, self.header_row and not self.rows
        self._add(" |")
        self.cells, self.header_row = 0, False
        self._line()
        if rule:
            self._emit("|" + " --- |" * cells)
        self.rows += 1

    def _pre_start(self) -> None:
        self.pre_depth += 1
        if self.code is None:
            self._block(blank=True)
            self.code = []

    def _pre_end(self) -> None:
        self.pre_depth = max(0, self.pre_depth - 1)
        if self.code is None or self.pre_depth:
            return
        text = "".join(self.code).removeprefix("\n").rstrip()  # HTML drops the newline after <pre>
        self.code = None
        if text:
            self._emit(FENCE)
            for line in text.split("\n"):
                self._emit(line, counted=len(line))
            self._emit(FENCE)
        self.gap = True

    def _code_mark(self) -> None:
        if self.code is None:  # inside <pre>, code is the block's own
            self._add("`")

    def _link_start(self, href: str) -> None:
        self._link_end()  # a link holds no other: an unclosed one ends where the next begins
        target = href.strip()
        if target and not self.full and not target.lower().startswith(UNSHOWN_LINKS):
            try:
                self.href = urljoin(self.base, target)
            except ValueError:  # a malformed address (an unclosed IPv6 bracket): shown as written
                self.href = target
            self.link_text = len(self.words)

    def _link_end(self) -> None:
        """The open link's target after its text, unless the text says it already."""
        text = "".join(self.words[self.link_text :])
        if self.href and text.strip() != self.href:
            self._add(f" ({self.href})" + (" " if text[-1:].isspace() else ""))
        self.href = ""

    # --- lines ----------------------------------------------------------------------------------

    def _add(self, text: str, into: list[str] | None = None) -> None:
        """Text of the page (to the open line, unless ``into`` says where), within the budget."""
        if self.full or self.size + len(text) > self.budget:
            self.full = True
            return
        self.size += len(text)
        (self.words if into is None else into).append(text)

    def _block(self, blank: bool) -> None:
        """A block starts or ends: its text goes on lines of its own, with a blank line between
        paragraphs, but not inside a list or a table row, which stay together."""
        if self.cells:
            self._add(" ")
            return
        self._line()
        self.gap = self.gap or (blank and not self.lists)

    def _line(self) -> None:
        """Finish the line being built, if it holds any text."""
        text = " ".join("".join(self.words).split())
        self.words.clear()
        self.link_text = 0
        if not text:
            return
        depth = min(len(self.lists), MAX_INDENT)
        indent = "  " * (depth - 1 if self.marker and depth else depth)
        self._emit(indent + self.marker + text, counted=len(text))
        self.marker = ""

    def _emit(self, line: str, counted: int = 0) -> None:
        """Add a finished line; ``counted`` of its characters were counted in the budget as text.
        Once the budget is spent, only the line of the text that spent it is still added."""
        if self.full and not counted:
            return
        quote = "> " * min(self.quotes, MAX_INDENT)
        blank = [quote.rstrip()] if self.gap and self.lines and self.lines[-1].strip("> ") else []
        self.size += len(quote) * (1 + len(blank)) + len(line) - counted + 2
        self.full = self.full or self.size > self.budget
        self.gap = False
        self.lines += [*blank, quote + line]

    def text(self) -> str:
        """The title and the text read so far, with what is still open finished."""
        if self.code is not None:
            self.pre_depth = 1
            self._pre_end()
        self._row_end()
        self._line()
        if self.full:
            self.lines.append(f"[golem: the page's text stops here: it grew past {self.budget:,} characters]")
        body = "\n".join(self.lines).strip("\n")
        title = self.page_title or " ".join("".join(self.title or ()).split())
        return f"# {title}\n\n{body}" if title and not body.startswith(f"# {title}") else body


def html_to_text(html: str, base: str = "") -> str:
    """The readable text of ``html``, its links resolved against ``base``."""
    page = PageText(base, budget=2 * len(html) + 1000)
    page.feed(html)
    if page.rawdata.startswith("<"):  # a tag, comment or declaration that never ends: see the module docstring
        page.reset()  # drops it, as a browser does, with all that follows
    page.close()
    return page.text()
