"""An HTTP endpoint that refuses every request with a given status, header and body: an MCP
server behind authorisation (401 with ``WWW-Authenticate``), or one that fails (500). Run as
``python refusing.py FD STATUS [BODY] [WWW-AUTHENTICATE]`` on a listening socket it is given."""

from __future__ import annotations

import socket
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

fd, status = int(sys.argv[1]), int(sys.argv[2])
body = (sys.argv[3] if len(sys.argv) > 3 else "").encode()
challenge = sys.argv[4] if len(sys.argv) > 4 else ""


class Refuse(BaseHTTPRequestHandler):
    def refuse(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(status)
        if challenge:
            self.send_header("WWW-Authenticate", challenge)
        self.send_header("Content-Type", "application/json" if body.startswith(b"{") else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = do_DELETE = refuse

    def log_message(self, *args: object) -> None:
        pass


class Server(HTTPServer):
    def server_bind(self) -> None:  # the socket is given, bound and listening
        self.server_address = self.socket.getsockname()


server = Server(("127.0.0.1", 0), Refuse, bind_and_activate=False)
server.socket = socket.socket(fileno=fd)
server.server_bind()
server.serve_forever()
