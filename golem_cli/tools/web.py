"""``fetch_url``: a web page as readable text for the model.

Only ``http`` and ``https`` URLs (redirects included) are fetched, and a redirect is
followed only within the origin the person approved (scheme, host and port): one to another
origin, another port of the same host included, is reported to the model, which must call
again (and so be approved again) to go there. The body is read in pieces
and decompressed by golem in bounded steps, and the reading stops at ``max_bytes`` of text,
so a huge, endless or compressed-bomb response costs that much at most; the whole fetch has
a deadline. HTML becomes readable text (``page_text``); other text types are returned as
they are; anything else (images, archives, "text" that is mostly NUL bytes) is refused with
its type and size.

A fetched page can ask the model to reach services only this machine reaches (a router's admin
page, a cloud's metadata address, a development server on the loopback address). So a host
that resolves to a private, loopback, link-local or otherwise non-public address is fetched
only when an allow rule names the URL (``fetch_url(http://127.0.0.1:8080/*)``, checked through
``PrivateGate``): every address the name resolves to is checked, before the first request and
again before each redirect is followed, and the request goes to an address the check saw (the
name kept in the Host header and, over TLS, in the server name the certificate is checked
against): a name whose answer changes between the check and the connection (DNS rebinding)
cannot lead it elsewhere.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from msgspec import Struct, field

from golem_cli.core.tools import ToolFailed
from golem_cli.tools.output import DEFAULT_OUTPUT_LIMIT, cap
from golem_cli.tools.page_text import html_to_text
from golem_cli.tools.threads import off_thread

if TYPE_CHECKING:
    import httpx

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


def _never(url: str) -> bool:
    return False


class PrivateGate(Struct):
    """Whether a URL whose host is a non-public address may be fetched: only when an allow
    rule names it (the toolbox points ``allows`` at its rules once they exist)."""

    allows: Callable[[str], bool] = _never


class Web(Struct, frozen=True):
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = DEFAULT_TIMEOUT
    gate: PrivateGate = field(default_factory=PrivateGate)

    async def fetch_url(self, url: str) -> str:
        import httpx  # only when a page is fetched

        url = check_url(url)
        origin = _origin(url)
        headers = {"user-agent": USER_AGENT, "accept-encoding": "gzip, deflate"}
        try:
            async with asyncio.timeout(self.timeout):
                async with httpx.AsyncClient(follow_redirects=False, timeout=self.timeout, headers=headers) as client:
                    for _ in range(MAX_REDIRECTS + 1):
                        response = await _send(client, url, await self._checked_addresses(url))
                        try:
                            target = _redirect(response, url, origin)
                            if target is None:
                                return await self._read(response, url)
                        finally:
                            await response.aclose()
                        url = target
                    raise ToolFailed(f"more than {MAX_REDIRECTS} redirects")
        except TimeoutError:
            raise ToolFailed(f"no complete answer from {url} within {self.timeout:g}s") from None
        except httpx.HTTPError as e:
            raise ToolFailed(f"cannot fetch {url}: {type(e).__name__}: {e}") from None

    async def _checked_addresses(self, url: str) -> list[str]:
        """The addresses the URL's host resolves to, in the resolver's order, once each is
        public or an allow rule names the URL; ``ToolFailed`` otherwise. None found: the
        request then fails with its own words."""
        scheme, host, port = _origin(url)
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            return []
        for *_, address in found:
            what = _not_public(str(address[0]).split("%", 1)[0])
            if what and not self.gate.allows(url):
                site = f"{scheme}://{urlsplit(url).netloc}/*"
                raise ToolFailed(
                    f"{url} is refused: {host} is {what} ({address[0]}), which a fetched page could make the model "
                    f"reach; to allow it: --allow 'fetch_url({site})' (or /tools allow fetch_url({site}))"
                )
        return list(dict.fromkeys(str(address[0]) for *_, address in found))

    async def _read(self, response: httpx.Response, url: str) -> str:
        """The answer as the model reads it: a line saying what it is, then its text."""
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        body, cut = await self._body(response, url)
        size = f"{len(body):,}{'+' if cut else ''} bytes"
        encoding = response.encoding or "utf-8"
        _refuse_binary(url, kind, body, size, encoding)
        text = body.decode(encoding, "replace")
        if "html" in kind or (not kind and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))):
            text = await off_thread(html_to_text, text, url)  # seconds for a large page: off the event loop
        notes = [f"{url} ({response.status_code} {response.reason_phrase}, {kind or 'no content type'})"]
        if cut:
            notes.append(f"[golem: only the first {self.max_bytes:,} bytes were read]")
        result = cap("\n".join(notes) + "\n\n" + text.strip(), self.output_limit)
        if response.status_code >= 400:
            raise ToolFailed(f"HTTP {response.status_code}: " + result)
        return result

    async def _body(self, response: httpx.Response, url: str) -> tuple[bytes, bool]:
        """The body, decompressed, up to ``max_bytes``; True when that cut it."""
        decoder = _decoder(response.headers.get("content-encoding", ""), url)
        body = bytearray()
        async for chunk in response.aiter_raw():
            if _add_chunk(body, chunk, decoder, self.max_bytes, url):
                return bytes(body), True
        return bytes(body), False


async def _send(client: httpx.AsyncClient, url: str, addresses: list[str]) -> httpx.Response:
    """The response's head from the first of ``addresses`` that takes the connection, as
    ``socket.create_connection`` tries them; the URL as it is when there are none."""
    import httpx

    for address in addresses[:-1]:
        try:
            return await client.send(_pinned(client, url, address), stream=True)
        except httpx.ConnectError:
            continue
    return await client.send(_pinned(client, url, addresses[-1] if addresses else None), stream=True)


def _pinned(client: httpx.AsyncClient, url: str, address: str | None) -> httpx.Request:
    """A GET of ``url`` sent to ``address``: the name stays in the Host header and is the TLS
    server name. A scoped IPv6 address (``fe80::1%eth0``) cannot be a URL's host: sent by name."""
    import httpx

    if address is None or "%" in address:
        return client.build_request("GET", url)
    target = httpx.URL(url)
    name = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return client.build_request("GET", target.copy_with(host=address), headers={"host": target.netloc.decode("ascii")},
                                extensions=name)  # fmt: skip


def _redirect(response: httpx.Response, url: str, origin: tuple[str, str, int]) -> str | None:
    """Where a redirect leads (None when the response is not one); ``ToolFailed`` for one to
    another origin, which the person did not approve: another host, or another scheme or port
    of the same host (another service: a second one on the loopback address, say)."""
    if not (response.is_redirect and "location" in response.headers):
        return None
    target = check_url(urljoin(url, response.headers["location"]))
    there = _origin(target)
    if there != origin:
        what = (
            "another host" if there[1] != origin[1] else "another port" if there[2] != origin[2] else "another scheme"
        )
        raise ToolFailed(
            f"{url} redirects to {what}: {target} ({response.status_code}); "
            "golem does not follow it unasked. Call fetch_url with that URL to fetch it."
        )
    return target


def _refuse_binary(url: str, kind: str, body: bytes, size: str, encoding: str) -> None:
    """``ToolFailed`` for a body that is not text: of another type, or holding NUL bytes."""
    if kind and not kind.startswith(TEXT_TYPES) and not _looks_textual(body[:2048]):
        raise ToolFailed(f"{url} is {kind} ({size}), not text; fetch_url returns text only")
    nuls = body.count(0)
    if nuls > NUL_SHARE * len(body) and not encoding.lower().replace("-", "").startswith(("utf16", "utf32")):
        raise ToolFailed(
            f"{url} is {kind or 'without a content type'} ({size}) but holds binary data "
            f"({nuls:,} NUL bytes); fetch_url returns text only"
        )


def _not_public(text: str) -> str:
    """What kind of non-public address ``text`` is ("" for a public one)."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return ""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for what, test in (("a loopback address", address.is_loopback), ("a link-local address", address.is_link_local),
                       ("an unspecified address", address.is_unspecified), ("a private address", address.is_private),
                       ("a reserved address", address.is_reserved or address.is_multicast)):  # fmt: skip
        if test:
            return what
    return ""


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a checked URL, the port its scheme's when none is given."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port out of range or not a number
        raise ToolFailed(f"{url!r} has an invalid port") from None
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


def _decoder(encoding: str, url: str) -> Any:
    """A zlib decompressor for the response's ``Content-Encoding`` (None for none)."""
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    raise ToolFailed(f"{url} is sent with content encoding {encoding!r}, which fetch_url does not read")


def _add_chunk(body: bytearray, chunk: bytes, decoder: Any, limit: int, url: str) -> bool:
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
