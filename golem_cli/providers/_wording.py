"""How provider failures are worded: one line saying what happened, and a hint saying what to do.

Each function here builds the ``ModelError`` for one kind of failure. The line names the HTTP
status, the provider's own message, the model and the endpoint (``Endpoint`` keeps the key out
of everything quoted and shows the URL without userinfo or query string).
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import msgspec

from golem_cli.core.errors import ContextTooLong, ModelError
from golem_cli.providers._endpoint import Endpoint

_CONTEXT_TOO_LONG = re.compile(
    r"context.length|context_length|context window|maximum context|prompt is too long|"
    r"too many tokens|reduce the length|exceeds the (model's )?(max|context)",
    re.IGNORECASE,
)
HINT_CONTEXT = "the conversation history is too long for this model: start a new conversation or trim the history"


def provider_message(body: bytes) -> tuple[str, str]:
    """(message, code) from an error body in any of the shapes seen in the wild: OpenAI's
    ``{"error": {"message", "code"}}``, Anthropic's ``{"type": "error", "error": {...}}``,
    Ollama's ``{"error": "text"}``, or plain text."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return body.decode("utf-8", "replace").strip(), ""
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, str):
        return error, ""
    if not isinstance(error, dict):
        return str(error), ""
    message = str(error.get("message") or error.get("detail") or "")
    raw = (error.get("metadata") or {}).get("raw") if isinstance(error.get("metadata"), dict) else None
    if raw:
        message = f"{message}: {raw}" if message else str(raw)
    code = error.get("code") or error.get("type") or ""
    return message or str(error), str(code)


def too_long(status: int, message: str, code: str) -> bool:
    """Whether an error reply says the request is longer than the model's context window."""
    return status in (400, 413) and (code == "context_length_exceeded" or bool(_CONTEXT_TOO_LONG.search(message)))


def http_error(endpoint: Endpoint, status: int, body: bytes, retry_after: float | None) -> ModelError:
    """The ``ModelError`` for an HTTP error reply (``ContextTooLong`` for a request too long
    for the model); a 429 and a 5xx are worth another attempt."""
    message, code = provider_message(body)
    text = f"HTTP {status} from {endpoint.where()}: {endpoint.scrub(message) or 'no message'}"
    kind = ContextTooLong if too_long(status, message, code) else ModelError
    return kind(
        text,
        status=status,
        hint=_hint(endpoint, status, message, code, retry_after),
        retryable=status == 429 or status >= 500,
        retry_after=retry_after,
    )


def _hint(endpoint: Endpoint, status: int, message: str, code: str, retry_after: float | None) -> str:
    if too_long(status, message, code):
        return HINT_CONTEXT
    if status in (401, 403):
        return f"check the API key ({endpoint.key_hint or 'the api_key of this provider'})"
    if status == 404:
        return f"check the model name {endpoint.model!r} and the base URL of provider {endpoint.provider!r}"
    if status == 429:
        wait = f" (the provider asked for {retry_after:g} s)" if retry_after else ""
        return f"the provider is rate limiting requests: wait a moment and try again{wait}"
    if status == 529 or code == "overloaded_error":
        return "the provider is overloaded: try again in a moment"
    if status >= 500:
        return "the provider had a server error: try again in a moment"
    return "the provider rejected the request; its message says why"


def event_error(endpoint: Endpoint, payload: Any, *, mid_reply: bool) -> ModelError:
    """The ``ModelError`` for an error the provider reported in a 200 reply: ``mid_reply`` when
    part of the reply had arrived before it. Whether anything is kept is not said here: the
    run loop keeps what arrived, and the command says what it saved."""
    message, code = provider_message(msgspec.json.encode(payload))
    error = payload.get("error") if isinstance(payload, dict) else None
    status = 0
    if isinstance(error, dict):
        for key in ("status_code", "code"):
            if isinstance(error.get(key), int):
                status = error[key]
                break
        if error.get("type") == "overloaded_error":
            status = 529
    text = f"{endpoint.where()} reported an error{' mid-reply' if mid_reply else ''}: {endpoint.scrub(message)}"
    hint = _hint(endpoint, status, message, code, None) if status else "try again"
    kind = ContextTooLong if too_long(status, message, code) else ModelError
    return kind(text, status=status or None, hint=hint, retryable=status == 429 or status >= 500)


def stream_cut(endpoint: Endpoint, cause: str) -> ModelError:
    """The ``ModelError`` for a reply that stopped before it was complete (how much of it had
    arrived, and so what is kept, the command says: it knows what it saved)."""
    return ModelError(f"the reply from {endpoint.where()} was cut off: {endpoint.scrub(cause)}", hint="try again")


def transport_error(endpoint: Endpoint, exc: httpx.HTTPError, timeout: float, *, retryable: bool = False) -> ModelError:
    """The ``ModelError`` for a connection failure or timeout before the reply began;
    ``retryable`` when the request certainly got no reply (a timeout waiting for one never is)."""
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        return ModelError(
            f"no reply from {endpoint.where()} within {timeout:g} s",
            hint=f"raise timeout in [providers.{endpoint.provider}] of the config file for slow models",
        )
    detail = endpoint.scrub(str(exc) or type(exc).__name__)
    return ModelError(
        f"cannot reach {endpoint.where()}: {detail}",
        hint="check that the server is running and the base URL is right",
        retryable=retryable,
    )


def read_error(endpoint: Endpoint, exc: httpx.HTTPError, timeout: float) -> ModelError:
    """The ``ModelError`` for a stream that failed while being read (after its first byte)."""
    if isinstance(exc, httpx.TimeoutException):
        error = stream_cut(endpoint, f"no data for {timeout:g} s")
        error.hint = f"raise timeout in [providers.{endpoint.provider}] for slow models"
        return error
    return stream_cut(endpoint, broken(exc))


def broken(exc: httpx.HTTPError) -> str:
    """Why a reply broke off, in words: httpx's ``peer closed connection without sending
    complete message body (incomplete chunked read)`` means the server hung up mid-reply."""
    if isinstance(exc, httpx.RemoteProtocolError) and "peer closed" in str(exc):
        return "the server closed the connection before the reply was complete"
    return str(exc) or type(exc).__name__


def redirected(endpoint: Endpoint, target: str) -> ModelError:
    """The ``ModelError`` for a redirect golem does not follow: to another host (the key must
    not travel there), or one hop too many."""
    shown = Endpoint(endpoint.provider, endpoint.model, target).shown_url
    return ModelError(
        f"{endpoint.where()} redirected to {shown}",
        hint=f"if that is the new address, set base_url in [providers.{endpoint.provider}] to it",
    )


def size_text(n: int) -> str:
    """A byte count for people: ``16 MB`` for whole mebibytes, else ``1,000,000 bytes``."""
    return f"{n // 2**20} MB" if n % 2**20 == 0 else f"{n:,} bytes"
