"""fetch_url against a real HTTP server on 127.0.0.1: readable text from HTML, size limit,
redirects checked, refusals for other schemes and for binary content."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from golem_cli.core.tools import ToolFailed
from golem_cli.tools.page_text import html_to_text
from golem_cli.tools.web import PrivateGate, Web, _not_public, check_url

from tests.tools.conftest import run

PAGE = b"""<!doctype html><html><head><title>The  Title</title><style>p{color:red}</style>
<script>var secret = "no";</script></head><body><h1>Heading</h1><p>First   paragraph
with <a href="/next">a link</a>.</p><ul><li>one</li><li>two</li></ul><pre>  keep
  spacing</pre><noscript>hidden</noscript></body></html>"""


def loopback(**settings: int) -> Web:
    """``fetch_url`` as the tests reach their server on 127.0.0.1: allowed by a rule."""
    return Web(**settings, gate=PrivateGate(lambda url: url.startswith(("http://127.0.0.1:", "http://localhost:"))))


BOMB = gzip.compress(b"a" * 60_000_000, compresslevel=9)  # 60 MB of text in ~60 KB


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/plain": (200, "text/plain", "caf\u00e9\n".encode()),
            "/json": (200, "application/json", b'{"a": 1}'),
            "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00"),
            "/missing": (404, "text/html", b"<p>Not here</p>"),
            "/nuls": (200, "text/plain", b"ok\n" + b"\x00" * 5000),
            "/hostile": (200, "text/html", b"<p>start</p>" + b"<![CDATA[ >" * 190_000),  # 2 MB that never end
        }
        if self.path in ("/bomb", "/gzipped"):
            body = BOMB if self.path == "/bomb" else gzip.compress(b"small and squeezed\n")
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/host":  # the Host header the request came with
            body = f"host: {self.headers['host']}".encode()
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/elsewhere":  # the same server under another host name
            self.send_response(302)
            self.send_header("location", f"http://localhost:{self.server.server_address[1]}/plain")
            self.end_headers()
        elif self.path.startswith("/to/"):  # a redirect to the URL that follows
            self.send_response(302)
            self.send_header("location", self.path.removeprefix("/to/"))
            self.end_headers()
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("location", "/plain")
            self.end_headers()
        elif self.path == "/to-file":
            self.send_response(302)
            self.send_header("location", "file:///etc/passwd")
            self.end_headers()
        elif self.path == "/loop":
            self.send_response(302)
            self.send_header("location", "/loop")
            self.end_headers()
        elif self.path == "/endless":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            try:
                for _ in range(100_000):  # 100 MB if nobody stops reading
                    self.wfile.write(b"y" * 1023 + b"\n")
            except OSError:
                pass
        else:
            status, kind, body = routes[self.path]
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_html_becomes_readable_text(site: str):
    text = run(loopback().fetch_url(site + "/page"))
    head, _, body = text.partition("\n\n")
    assert head == f"{site}/page (200 OK, text/html)"
    assert body.splitlines()[:2] == ["# The Title", ""]
    assert "# Heading" in body and "First paragraph with a link (" + site + "/next)." in body
    assert "- one\n- two" in body and "  keep\n  spacing" in body
    assert "secret" not in body and "color" not in body and "hidden" not in body


def test_text_json_and_redirects(site: str):
    assert run(loopback().fetch_url(site + "/plain")).endswith("café")
    assert run(loopback().fetch_url(site + "/json")).endswith('{"a": 1}')
    assert run(loopback().fetch_url(site + "/redirect")).startswith(f"{site}/plain (200 OK")


def test_refusals(site: str):
    with pytest.raises(ToolFailed, match="only http and https URLs can be fetched, not 'file'"):
        run(loopback().fetch_url("file:///etc/passwd"))
    with pytest.raises(ToolFailed, match="only http and https URLs can be fetched, not 'file'"):
        run(loopback().fetch_url(site + "/to-file"))
    with pytest.raises(ToolFailed, match="more than 5 redirects"):
        run(loopback().fetch_url(site + "/loop"))
    with pytest.raises(ToolFailed, match=r"is image/png \(10 bytes\), not text"):
        run(loopback().fetch_url(site + "/image"))
    with pytest.raises(ToolFailed, match=r"(?s)^HTTP 404: .*Not here"):
        run(loopback().fetch_url(site + "/missing"))
    with pytest.raises(ToolFailed, match="cannot fetch http://127.0.0.1:9/x: ConnectError"):
        run(loopback().fetch_url("http://127.0.0.1:9/x"))
    with pytest.raises(ToolFailed, match="without a scheme"):
        check_url("example.com/x")


def test_an_endless_body_is_read_up_to_the_limit(site: str):
    text = run(loopback(output_limit=1000, max_bytes=50_000).fetch_url(site + "/endless"))
    assert "[golem: only the first 50,000 bytes were read]" in text
    assert "characters cut here" in text and len(text) < 1100


def test_html_to_text_survives_broken_markup(site: str):
    assert html_to_text("<p>a<b>b</p><div>c") == "ab\n\nc"
    assert html_to_text("<<<>>>") == "<<<>>>"
    assert run(loopback().fetch_url(site + "/hostile")) == f"{site}/hostile (200 OK, text/html)\n\nstart"


def test_a_redirect_to_another_host_is_reported_not_followed(site: str):
    with pytest.raises(ToolFailed) as failed:
        run(loopback().fetch_url(site + "/elsewhere"))
    port = site.rsplit(":", 1)[1]
    assert f"redirects to another host: http://localhost:{port}/plain (302)" in str(failed.value)
    assert "Call fetch_url with that URL" in str(failed.value)


def test_a_redirect_to_another_port_or_scheme_of_the_host_is_reported_not_followed(site: str):
    other = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # a second service on the loopback address
    asked: list[str] = []
    other.RequestHandlerClass = type("Counting", (Handler,), {"do_GET": lambda self: asked.append(self.path)})
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        second = f"http://127.0.0.1:{other.server_address[1]}/plain"
        with pytest.raises(ToolFailed) as failed:
            run(loopback().fetch_url(f"{site}/to/{second}"))
        assert f"redirects to another port: {second} (302)" in str(failed.value)
        host, port = site.removeprefix("http://").split(":")
        secure = f"https://{host}:{port}/plain"
        with pytest.raises(ToolFailed, match=f"redirects to another scheme: {secure}"):
            run(loopback().fetch_url(f"{site}/to/{secure}"))
        assert run(loopback().fetch_url(f"{site}/to/{site}/plain")).startswith(f"{site}/plain (200 OK")  # same origin
    finally:
        other.shutdown()
        other.server_close()
    assert asked == []


def test_compressed_bodies_are_decompressed_in_bounded_steps(site: str):
    assert run(loopback().fetch_url(site + "/gzipped")).endswith("small and squeezed")
    tracemalloc.start()
    try:
        text = run(loopback(output_limit=1000, max_bytes=100_000).fetch_url(site + "/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "[golem: only the first 100,000 bytes were read]" in text
    assert peak < 5_000_000, f"{peak:,} bytes at the peak for a 100 KB read"


def test_text_that_is_mostly_nul_bytes_is_refused(site: str):
    with pytest.raises(ToolFailed, match=r"is text/plain \(5,003 bytes\) but holds binary data \(5,000 NUL bytes\)"):
        run(loopback().fetch_url(site + "/nuls"))


# --- private, loopback and link-local addresses (issue 25 item 7) -------------------------------


def test_addresses_that_are_not_public_are_told_apart():
    kinds = {a: _not_public(a) for a in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "192.168.0.1",
                                          "169.254.169.254", "fe80::1", "0.0.0.0", "8.8.8.8", "2606:4700::1111")}  # fmt: skip
    assert kinds == {
        "127.0.0.1": "a loopback address", "::1": "a loopback address", "::ffff:127.0.0.1": "a loopback address",
        "10.1.2.3": "a private address", "192.168.0.1": "a private address",
        "169.254.169.254": "a link-local address", "fe80::1": "a link-local address",
        "0.0.0.0": "an unspecified address", "8.8.8.8": "", "2606:4700::1111": "",
    }  # fmt: skip


def test_a_loopback_url_is_refused_unless_a_rule_names_it(site: str):
    port = site.rsplit(":", 1)[1]
    with pytest.raises(ToolFailed) as refused:
        run(Web().fetch_url(site + "/plain"))
    assert str(refused.value) == (
        f"{site}/plain is refused: 127.0.0.1 is a loopback address (127.0.0.1), which a fetched page could make the "
        f"model reach; to allow it: --allow 'fetch_url({site}/*)' (or /tools allow fetch_url({site}/*))"
    )
    with pytest.raises(ToolFailed, match=r"localhost is a loopback address \((127\.0\.0\.1|::1)\)"):  # by its name
        run(Web().fetch_url(f"http://localhost:{port}/plain"))
    from golem_cli.tools.toolbox import toolbox

    [allowed] = toolbox(enabled=["web"], allow=[f"fetch_url({site}/*)"]).enabled  # the toolbox's rules decide
    assert run(allowed.tool.call({"url": f"{site}/to/{site}/json"}, context())).text.endswith('{"a": 1}')
    [first_hop] = toolbox(enabled=["web"], allow=[f"fetch_url({site}/to/*)"]).enabled
    with pytest.raises(ToolFailed, match=f"^{site}/plain is refused"):  # checked again on the redirect
        run(first_hop.tool.call({"url": f"{site}/to/{site}/plain"}, context()))


def context():
    from golem_cli.core.tools import ToolContext

    return ToolContext(call_id="c", tool_name="fetch_url", args="{}")


def test_the_request_goes_to_the_address_the_check_saw_whatever_the_name_answers_next(site, monkeypatch):
    """DNS rebinding: the name answers the check with one address and the connection with
    another (here: none at all). The request goes to the checked address, under its name."""
    port = site.rsplit(":", 1)[1]
    asked: list[str] = []
    real = asyncio.BaseEventLoop.getaddrinfo

    async def rebinding(self, host, *args, **keys):
        if host == "rebind.invalid":
            asked.append(host)
            if len(asked) > 1:
                raise socket.gaierror(socket.EAI_NONAME, "the name now answers otherwise")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]
        return await real(self, host, *args, **keys)

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", rebinding)
    web = Web(gate=PrivateGate(lambda url: url.startswith("http://rebind.invalid:")))
    assert run(web.fetch_url(f"http://rebind.invalid:{port}/host")).endswith(f"\nhost: rebind.invalid:{port}")
    assert asked == ["rebind.invalid"]  # resolved once, by the check
