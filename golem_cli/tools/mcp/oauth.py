"""OAuth for streamable HTTP tool servers, on the SDK's ``OAuthClientProvider``: the
authorization-code flow with PKCE, protected-resource and authorization-server metadata
discovery, dynamic client registration (or the client the server's table names), refresh,
and step-up when a server asks for more scope. Tokens live in a ``TokenFile`` (mode 0600, in
golem's state directory).

Two ways to use it:

* in a chat (``Login`` absent), stored tokens are sent and refreshed; a server that wants a
  person to authorise golem (no tokens yet, a refresh refused, more scope) stops the
  connection with ``NeedsLogin``, which golem words as "run `golem mcp login NAME`";
* ``golem mcp login NAME`` gives a ``Login``: the authorization URL is shown (``show``; golem
  never opens it), and the answer comes to a loopback callback on 127.0.0.1, or is pasted
  (``paste``: the address the browser ended at, or the code) on a machine whose browser is
  elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from msgspec import Struct

from golem_cli.tools.mcp.config import ServerConfig
from golem_cli.tools.mcp.tokens import TokenFile

CALLBACK_PATH = "/callback"
#: The redirect URI a chat's provider declares (a chat never sends a person anywhere).
NO_CALLBACK = "http://127.0.0.1/callback"


class NeedsLogin(Exception):
    """The server wants a person to authorise golem: ``golem mcp login NAME``."""


class Storage:
    """The SDK's ``TokenStorage`` over golem's ``TokenFile``."""

    def __init__(self, file: TokenFile) -> None:
        self.file = file

    async def get_tokens(self) -> OAuthToken | None:
        stored = self.file.get("tokens")
        with contextlib.suppress(ValueError):
            return OAuthToken.model_validate(stored) if stored else None
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await asyncio.to_thread(self.file.put, "tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        stored = self.file.get("client")
        with contextlib.suppress(ValueError):
            return OAuthClientInformationFull.model_validate(stored) if stored else None
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        value = client_info.model_dump(mode="json", exclude_none=True)
        await asyncio.to_thread(self.file.put, "client", value)


class Login(Struct, kw_only=True):
    """How ``golem mcp login`` hears the person: ``show`` the authorization URL; ``paste``
    (optional) reads what they paste; ``redirect_uri`` is the loopback callback's address."""

    show: Callable[[str], Awaitable[None]]
    paste: Callable[[], Awaitable[str]] | None = None
    redirect_uri: str = ""
    answers: asyncio.Queue[str] | None = None


def provider(config: ServerConfig, tokens: Path, login: Login | None = None) -> OAuthClientProvider:
    """The OAuth side of the HTTP client for ``config``'s server, its tokens under ``tokens``."""
    table = config.table
    assert table.url is not None
    file = TokenFile(tokens, config.name)
    storage = Storage(file)
    redirect = login.redirect_uri if login is not None and login.redirect_uri else NO_CALLBACK
    metadata = OAuthClientMetadata.model_validate({
        "client_name": "golem", "redirect_uris": [redirect], "scope": " ".join(table.oauth_scopes) or None,
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
    })  # fmt: skip
    if table.oauth_client_id:  # a client registered beforehand: no dynamic registration
        secret = os.environ.get(table.oauth_client_secret_env, "") if table.oauth_client_secret_env else ""
        file.put("client", {"client_id": table.oauth_client_id, "redirect_uris": [redirect],
                            **({"client_secret": secret, "token_endpoint_auth_method": "client_secret_basic"}
                               if secret else {"token_endpoint_auth_method": "none"})})  # fmt: skip
    elif login is not None:
        stale = file.get("client")
        if stale is not None and redirect not in (stale.get("redirect_uris") or []):
            _forget_client(file)  # registered for another callback address: register again

    async def show(url: str) -> None:
        if login is None:
            raise NeedsLogin(url)
        await login.show(url)

    async def answer() -> AuthorizationCodeResult:
        assert login is not None
        return parse_answer(await _first_answer(login))

    return OAuthClientProvider(table.url, metadata, storage, redirect_handler=show, callback_handler=answer)


def _forget_client(file: TokenFile) -> None:
    stored = file.load()
    file.delete()
    if "tokens" in stored and isinstance(stored["tokens"], dict):
        file.put("tokens", stored["tokens"])


async def _first_answer(login: Login) -> str:
    """The callback's query, or what the person pasted, whichever comes first."""
    waiting: list[asyncio.Future[str]] = []
    if login.answers is not None:
        waiting.append(asyncio.ensure_future(login.answers.get()))
    if login.paste is not None:
        waiting.append(asyncio.ensure_future(login.paste()))
    done, pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return next(iter(done)).result()


def parse_answer(text: str) -> AuthorizationCodeResult:
    """An authorization response from the callback's query, a pasted address, or a bare code."""
    text = text.strip()
    query = urlsplit(text).query if "?" in text or "://" in text else text if "=" in text else ""
    if not query:
        return AuthorizationCodeResult(code=text)
    values = {k: v[0] for k, v in parse_qs(query).items() if v}
    if "error" in values:
        raise NeedsLogin(f"the authorization server said {values['error']}: {values.get('error_description', '')}")
    return AuthorizationCodeResult(code=values.get("code", ""), state=values.get("state"), iss=values.get("iss"))


@contextlib.asynccontextmanager
async def callback_server(answers: asyncio.Queue[str]) -> AsyncIterator[str]:
    """A loopback HTTP server on 127.0.0.1 (a free port) whose ``/callback`` puts its query on
    ``answers``; yields its address."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            target = line.decode("latin-1").split(" ")[1] if line.count(b" ") >= 2 else ""
            ok = urlsplit(target).path == CALLBACK_PATH
            body = b"golem: signed in; you can close this page.\n" if ok else b"not found\n"
            status = b"200 OK" if ok else b"404 Not Found"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)  # fmt: skip
            await writer.drain()
            if ok:
                answers.put_nowait(urlsplit(target).query)
        except (OSError, TimeoutError, IndexError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{CALLBACK_PATH}"
    finally:
        server.close()
        await server.wait_closed()
