"""Fetching an attachment by URL when the provider cannot take the URL itself (OpenAI has no
document or audio URLs, Anthropic no audio, no text by URL): golem downloads it and sends it
inline, as ``llm`` does, instead of refusing it or letting the provider fail the turn.

The read stops at ``max_bytes`` whatever the server announced, and a failure is one
``InputError`` line naming the URL (without its userinfo or query).
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from msgspec import Struct

from golem_cli import __version__
from golem_cli.core.errors import InputError
from golem_cli.providers._endpoint import Endpoint

_YOURSELF = "check the URL, or download it yourself and attach the file"


class Downloaded(Struct, frozen=True, kw_only=True):
    data: bytes
    media_type: str  # from Content-Type, without parameters; "" when the server sent none
    name: str  # the last path segment, for people and for inlined text


def download(url: str, max_bytes: int, timeout: float = 30.0) -> Downloaded:
    """GET ``url`` (http or https, redirects followed) into memory, at most ``max_bytes``."""
    import httpx

    try:
        parts = urlsplit(url)
        shown = Endpoint("", "", url).shown_url
    except ValueError:
        raise InputError("the URL to attach is malformed") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{shown}: only http(s) URLs can be attached")
    if parts.username or parts.password:  # never sent as Basic auth behind the user's back
        raise InputError(f"{shown}: a URL with a user name or password cannot be attached")
    name = unquote(parts.path.rstrip("/").rpartition("/")[2]) or parts.hostname
    headers = {"user-agent": f"golem-cli/{__version__}"}
    try:
        with httpx.Client(follow_redirects=True, max_redirects=5, timeout=timeout, headers=headers) as client:
            with client.stream("GET", url) as response:
                if response.status_code >= 400:
                    raise InputError(f"{shown}: the server answered HTTP {response.status_code}")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise InputError(f"{shown}: larger than {max_bytes // 2**20} MB, too large to attach")
                    chunks.append(chunk)
                media_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    except httpx.TimeoutException:
        raise InputError(f"{shown}: cannot download: no answer within {timeout:g} s; {_YOURSELF}") from None
    except httpx.HTTPError as exc:  # ``ConnectError`` alone told people nothing
        detail = Endpoint("", "", url).scrub(str(exc) or type(exc).__name__)
        raise InputError(f"{shown}: cannot download: {detail}; {_YOURSELF}") from None
    return Downloaded(data=b"".join(chunks), media_type=str(media_type), name=name)
