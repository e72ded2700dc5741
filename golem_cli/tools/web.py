"""``fetch_url``: a web page as readable text for the model.

Only ``http`` and ``https`` URLs (redirects included) are fetched, and a redirect is
followed only on the host the person approved: one to another host is reported to the model,
which must call again (and so be approved again) to go there. The body is read in pieces
and decompressed by golem in bounded steps, and the reading stops at ``max_bytes`` of text,
so a huge, endless or compressed-bomb response costs that much at most; the whole fetch has
a deadline. HTML becomes text (scripts, styles and markup dropped, headings, list items and
links kept readable); other text types are returned as they are; anything else (images,
archives, "text" that is mostly NUL bytes) is refused with its type and size.
"""

from __future__ import annotations

import asyncio
import re
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, cap

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/javascript",
              "application/ld+json", "application/rss", "application/atom")  # fmt: skip
DECODE_STEP = 64 * 1024  # at most this much decompressed text per step
NUL_SHARE = 0.01  # "text" with more NUL bytes than this share of it is binary
USER_AGENT = "golem-cli fetch_url (https://github.com/abubakarsiddik31/golem)"


def check_url(url: str) -> str:
    """The URL, stripped, or ``ToolFailed`` when it is not http(s) with a host."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ToolFailed(f"only http and https URLs can be fetched, not {parts.scheme or 'a URL without a scheme'!r}")
    if not parts.hostname:
        raise ToolFailed(f"{url!r} has no host")
    return url


@dataclass(frozen=True)
class Web:
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = DEFAULT_TIMEOUT

    async def fetch_url(self, url: str) -> str:
        import httpx  # only when a page is fetched

        url = check_url(url)
        host = _host(url)
        headers = {"user-agent": USER_AGENT, "accept-encoding": "gzip, deflate"}
        try:
            async with asyncio.timeout(self.timeout):
                async with httpx.AsyncClient(follow_redirects=False, timeout=self.timeout, headers=headers) as client:
                    for _ in range(MAX_REDIRECTS + 1):
                        async with client.stream("GET", url) as response:
                            if response.is_redirect and "location" in response.headers:
                                target = check_url(urljoin(url, response.headers["location"]))
                                if _host(target) != host:
                                    raise ToolFailed(
                                        f"{url} redirects to another host: {target} ({response.status_code}); "
                                        "golem does not follow it unasked. Call fetch_url with that URL to fetch it."
                                    )
                                url = target
                                continue
                            return await self._read(response, url)
                    raise ToolFailed(f"more than {MAX_REDIRECTS} redirects")
        except TimeoutError:
            raise ToolFailed(f"no complete answer from {url} within {self.timeout:g}s") from None
        except httpx.HTTPError as e:
            raise ToolFailed(f"cannot fetch {url}: {type(e).__name__}: {e}") from None

    async def _read(self, response: object, url: str) -> str:
        import httpx

        assert isinstance(response, httpx.Response)
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        decoder = _decoder(response.headers.get("content-encoding", ""), url)
        body = bytearray()
        cut = False
        async for chunk in response.aiter_raw():
            cut = _take(body, chunk, decoder, self.max_bytes, url)
            if cut:
                break
        size = f"{len(body):,}{'+' if cut else ''} bytes"
        if kind and not kind.startswith(TEXT_TYPES) and not _looks_textual(bytes(body[:2048])):
            raise ToolFailed(f"{url} is {kind} ({size}), not text; fetch_url returns text only")
        encoding = response.encoding or "utf-8"
        nuls = body.count(0)
        if nuls > NUL_SHARE * len(body) and not encoding.lower().replace("-", "").startswith(("utf16", "utf32")):
            raise ToolFailed(
                f"{url} is {kind or 'without a content type'} ({size}) but holds binary data "
                f"({nuls:,} NUL bytes); fetch_url returns text only"
            )
        text = bytes(body).decode(encoding, "replace")
        if "html" in kind or (not kind and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))):
            text = html_to_text(text, url)
        notes = [f"{url} ({response.status_code} {response.reason_phrase}, {kind or 'no content type'})"]
        if cut:
            notes.append(f"[golem: only the first {self.max_bytes:,} bytes were read]")
        result = cap("\n".join(notes) + "\n\n" + text.strip(), self.output_limit)
        if response.status_code >= 400:
            raise ToolFailed(f"HTTP {response.status_code}: " + result)
        return result


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _decoder(encoding: str, url: str) -> Any:
    """A zlib decompressor for the response's ``Content-Encoding`` (None for none)."""
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    raise ToolFailed(f"{url} is sent with content encoding {encoding!r}, which fetch_url does not read")


def _take(body: bytearray, chunk: bytes, decoder: Any, limit: int, url: str) -> bool:
    """Add ``chunk`` (decompressed in steps of at most ``DECODE_STEP``) to ``body`` up to
    ``limit`` bytes; True when the limit cut it (a bomb costs ``limit``, never a whole chunk)."""
    if decoder is None:
        room = limit - len(body)
        body += chunk[:room]
        return len(chunk) > room
    data = chunk
    while True:
        step = min(limit - len(body), DECODE_STEP)
        if step <= 0:
            return True
        try:
            out = decoder.decompress(data, step)
        except zlib.error as e:
            raise ToolFailed(f"{url}: the compressed body is broken ({e})") from None
        body += out
        data = decoder.unconsumed_tail
        if not data and len(out) < step:
            return False


def _looks_textual(head: bytes) -> bool:
    return b"\x00" not in head and bool(head.strip())


_PARAGRAPH = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "hr", "table",
                        "ul", "ol", "dl", "pre", "blockquote", "figure", "form", "h1", "h2", "h3", "h4", "h5",
                        "h6", "title"})  # fmt: skip
_LINE = frozenset({"br", "tr", "li", "dt", "dd", "figcaption"})
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head"})


class _Text(HTMLParser):
    """Collects text runs and breaks: 2 = a blank line (paragraphs), 1 = a new line."""

    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.out: list[str | int] = []
        self.skipping = 0
        self.in_title = False
        self.title = ""
        self.pre = 0
        self.href = ""

    def _break(self, tag: str) -> None:
        if tag in _PARAGRAPH:
            self.out.append(2)
        elif tag in _LINE:
            self.out.append(1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skipping += 1
            return
        self._break(tag)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.out.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("- ")
        elif tag == "pre":
            self.pre += 1
        elif tag == "a":
            self.href = dict(attrs).get("href") or ""
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
            return
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag == "a" and self.href and not self.href.startswith(("#", "javascript:")):
            self.out.append(f" ({urljoin(self.base, self.href)})")
            self.href = ""
        self._break(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if self.skipping:
            return
        if self.pre:
            lines = data.split("\n")
            for i, line in enumerate(lines):
                if i:
                    self.out.append(1)
                self.out.append("\x00" + line)  # kept as it is (marked, not collapsed)
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str, base: str = "") -> str:
    """Readable text of an HTML page: its title, then its text with blocks on their own lines."""
    parser = _Text(base)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # HTMLParser is lenient; this is only a guard
        pass
    lines: list[str] = []
    current = ""
    gap = 0
    for token in parser.out:
        if isinstance(token, int):
            gap = max(gap, token)
            continue
        if gap:
            if current.strip() or (current and current.startswith("\x00")):
                lines.append(current)
            if gap == 2 and lines and lines[-1] != "":
                lines.append("")
            current, gap = "", 0
        current += token
    if current.strip():
        lines.append(current)
    shown = [line.replace("\x00", "") if "\x00" in line else " ".join(line.split()) for line in lines]
    body = "\n".join(shown).strip("\n")
    title = " ".join(parser.title.split())
    return f"# {title}\n\n{body}" if title and not body.startswith(f"# {title}") else body
