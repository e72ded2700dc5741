"""Go's url.Parse scheme rules with regular expressions: same answers as the per-character
reference it replaced (issue 8: that one took 34 s for a 50 MB URL part)."""

from __future__ import annotations

from golem_cli.core.history.urlscheme import url_scheme
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core import urlscheme_oracle

PIECES = st.sampled_from(["http", "https", "HTTPS", "data", "mailto", "x+y-z.w", "1a", "", ":", "//", "/", "@", "%",
                          "%25", "%41", "%zz", "%e2", "%0a", "?", "#", "[", "]", "[::1]", "[fe80::1%25en0]", ":80",
                          ":x", "user:pw", "a b", "\x7f", "\t", "é", "東", "<", "\"", "'", "*", ".", "-", "~", "a"])  # fmt: skip


@settings(max_examples=1000)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_agrees_with_the_per_character_reference(url):
    assert url_scheme(url) == urlscheme_oracle.url_scheme(url)


@settings(max_examples=500)
@given(st.text(max_size=40))
def test_agrees_on_any_text(url):
    assert url_scheme(url) == urlscheme_oracle.url_scheme(url)


def test_huge_urls_get_the_same_answers():
    """benchmarks/hostile_input.py times these (the per-character version took 34 s for 50 MB)."""
    assert url_scheme("https://example.com/" + "a%41" * 500_000) == "https"
    assert url_scheme("https://example.com/" + "a%4" * 500_000) == ""
    assert url_scheme("https://example.com/" + "a%41" * 500_000 + "%4") == ""  # the last escape is cut
    assert url_scheme("https://example.com/" + "a%41" * 500_000 + "%g0") == ""
    assert url_scheme("https://example.com/" + "é%41" * 500_000) == "https"  # not ASCII: the other way
    assert url_scheme("https://example.com/" + "é%41" * 500_000 + "%%") == ""
    assert url_scheme("https://ex%41mple.com/" + "a%41" * 500_000) == ""  # a host escape below %80
    assert url_scheme("https://u:" + "p" * 1_000_000 + "@h/") == "https"
    assert url_scheme("x" * 1_000_000 + ":opaque") == "x" * 1_000_000
    assert url_scheme("data:" + "A" * 1_000_000) == "data"
