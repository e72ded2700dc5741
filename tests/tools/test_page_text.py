"""HTML to readable text: what a page's structure becomes, and bounds on hostile markup (the
page is the server's: deep nesting, huge attributes, tags and comments that never end)."""

from __future__ import annotations

import tracemalloc

from golem_cli.tools.page_text import html_to_text

BASE = "https://example.com/docs/page"
PAGE_SIZE = 2 * 1024 * 1024  # fetch_url's default limit: the most a page can be


def test_headings_paragraphs_and_the_title():
    text = html_to_text("<title> The  Title </title><h1>Top</h1><p>One\n  two.</p><h3>Small</h3><div>three</div>")
    assert text == "# The Title\n\n# Top\n\nOne two.\n\n### Small\n\nthree"
    assert html_to_text("<title>Same</title><h1>Same</h1><p>x") == "# Same\n\nx"  # not said twice


def test_links_are_resolved_and_shown_after_their_text():
    text = html_to_text(
        '<p><a href="/a">first</a>, <a href="b.html">second</a>, <a href="https://x.org/">https://x.org/</a>, '
        '<a href="#top">top</a>, <a href="javascript:go()">run</a>, <a href="data:text/plain,x">data</a>, '
        '<a href="http://[::1">broken</a>',
        BASE,
    )
    assert text == (
        "first (https://example.com/a), second (https://example.com/docs/b.html), https://x.org/, "
        "top, run, data, broken (http://[::1)"
    )
    assert html_to_text('<a href="/one">one <a href="/two">two</a>', BASE) == (
        "one (https://example.com/one) two (https://example.com/two)"  # an unclosed link ends at the next
    )


def test_lists_nest_and_number():
    text = html_to_text(
        "<p>Intro</p><ul><li>one</li><li>two<ul><li>two.a</li><li><p>two.b</p><p>more</p></li></ul></li></ul>"
        "<ol><li>first<li>second</ol><p>after"
    )
    assert text == "Intro\n\n- one\n- two\n  - two.a\n  - two.b\n    more\n\n1. first\n2. second\n\nafter"


def test_code_blocks_keep_their_spacing_and_inline_code_is_marked():
    text = html_to_text("<p>Call <code>run()</code>:</p><pre>\n  if x:\n\n      <code>go()</code>\n</pre>end")
    assert text == "Call `run()`:\n\n```\n  if x:\n\n      go()\n```\n\nend"


def test_tables_become_rows_with_a_header_rule():
    text = html_to_text(
        "<table><caption>Sizes</caption><tr><th>Name</th><th>Size</th></tr>"
        "<tr><td>a</td><td><p>1</p></td></tr><tr><td>b<td>2</table>"
    )
    assert text == "Sizes\n| Name | Size |\n| --- | --- |\n| a | 1 |\n| b | 2 |"
    assert html_to_text("<table><tr><td>x</td><td>y</td></tr></table>") == "| x | y |"  # no header: no rule


def test_quotes_are_marked():
    assert html_to_text("<blockquote><p>said</p><p>twice</p></blockquote>after") == "> said\n>\n> twice\n\nafter"


def test_what_a_reader_does_not_see_is_dropped():
    text = html_to_text(
        "<head><style>p{color:red}</style><script>var secret = '</p>';</script></head><body>"
        "<noscript>enable js</noscript><svg><title>icon</title><text>drawn</text></svg><p>shown"
        "<template><p>later</p></template><iframe>frame</iframe>"
    )
    assert text == "shown"


def test_broken_markup_still_reads():
    assert html_to_text("<p>a<b>b</p><div>c") == "ab\n\nc"
    assert html_to_text("<<<>>>") == "<<<>>>"
    assert html_to_text("<p>AT&T &amp; &lt;tags&gt;") == "AT&T & <tags>"
    assert html_to_text("</ul></li></pre></blockquote></table><p>x") == "x"  # ends without starts


def test_what_never_ends_runs_to_the_end_of_the_page():
    """As in a browser; Python's own end-of-data handling would read it back as text (before the
    fix of CPython issue 135462, in time quadratic in what follows)."""
    assert html_to_text("<p>before</p><![CDATA[ x > <p>after") == "before"
    assert html_to_text("<p>before</p><!-- x > <p>after") == "before"
    assert html_to_text('<p>before</p><a href="x > <p>after') == "before"
    assert html_to_text("<p>before</p><pre>kept") == "before\n\n```\nkept\n```"  # open blocks are finished


def test_hostile_pages_of_the_largest_size_are_read_in_one_pass():
    """Each of these took Python's parser minutes to hours at this size (a construct that never
    ends, then many more of it: each one scanned to the end of the page again)."""
    for unit in ("<![CDATA[ >", "<a", "</", "<?", "<!-- >", "<svg><![CDATA[x"):
        page = "<p>start</p>" + unit * (PAGE_SIZE // len(unit))
        assert html_to_text(page) == "start", unit


def test_deep_nesting_costs_no_more_than_its_text():
    depth = 20_000
    tracemalloc.start()
    try:
        divs = html_to_text("<div>" * depth + "deep" + "</div>" * depth)
        lists = html_to_text("<ul><li>x" * depth)
        quotes = html_to_text("<blockquote>" * depth + "q")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert divs == "deep"
    *_, deepest, end = lists.splitlines()
    assert deepest == " " * 18 + "- x"  # indentation stops at ten levels
    assert end.startswith("[golem: the page's text stops here")  # and what it adds counts
    assert quotes == "> " * 10 + "q"
    assert peak < 10_000_000, f"{peak:,} bytes at the peak"


def test_huge_attributes_and_many_links_stay_within_twice_the_page():
    huge = "x" * PAGE_SIZE
    assert html_to_text(f'<p title="{huge}">text</p>') == "text"
    assert html_to_text(f'<p title="{huge}') == ""  # an attribute that never ends: to the end
    long_base = "https://example.com/" + "p/" * 1000  # every relative link shown with it
    page = '<a href="x">y</a>' * 50_000
    text = html_to_text(page, long_base)
    assert len(text) <= 2 * len(page) + 1000 + 100
    assert text.startswith(f"y ({long_base}x)y ({long_base}x)")
    assert text.endswith(f"[golem: the page's text stops here: it grew past {2 * len(page) + 1000:,} characters]")
