"""``fetch_url`` through the real ``golem ask``: a loopback address is refused with one line
saying what and how to allow it, even with ``--yes``, and fetched once a rule names it
(issue 25 item 7)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.providerserver import ProviderServer
from tests.repl.test_tools import ask, calls

pytestmark = pytest.mark.slow


@pytest.fixture
def service() -> Iterator[str]:
    """A service only this machine reaches, on the loopback address: its URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = b"the admin page"
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_loopback_fetch_needs_a_rule_naming_it(server: ProviderServer, home: Path, service: str):
    server.enqueue(calls(("c1", "fetch_url", {"url": f"{service}/admin"})))
    done = ask(home, "-T", "web", "--yes", "look")
    assert done.returncode == 0, done.stderr
    assert (f"c1 [failed] {service}/admin is refused: 127.0.0.1 is a loopback address (127.0.0.1), which a fetched "
            f"page could make the model reach; to allow it: --allow 'fetch_url({service}/*)'") in done.stdout  # fmt: skip
    assert "the admin page" not in done.stdout
    server.enqueue(calls(("c2", "fetch_url", {"url": f"{service}/admin"})))
    done = ask(home, "-T", "web", "--allow", f"fetch_url({service}/*)", "look again")
    assert done.returncode == 0, done.stderr
    assert f"c2 {service}/admin (200 OK, text/plain)" in done.stdout
