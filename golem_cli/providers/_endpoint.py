"""Where one adapter posts, and how that place is named in what golem prints.

The URL may carry credentials (``https://user:key@host/v1?key=...``), and the key itself may be
quoted back by the provider; ``Endpoint`` is the one object that knows both and keeps them out
of every line golem shows.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from msgspec import Struct

#: Strings shaped like an API key or a token: OpenAI/Anthropic/DeepSeek/OpenRouter ``sk-…``
#: (masked ones too), Groq ``gsk_…``, xAI ``xai-…``, Google ``AIza…``, and bearer tokens.
KEY_SHAPED = re.compile(
    r"\b(?:sk|pk|rk|gsk|xai)[-_][A-Za-z0-9_*\-]{3,}|\bAIza[0-9A-Za-z_\-]{20,}|\bBearer\s+[A-Za-z0-9_.=~+/\-]+",
    re.IGNORECASE,
)


def join_path(base_url: str, path: str, query: str = "") -> str:
    """``base_url`` with ``path`` added to its path, before the query string it may have
    (``https://gw/v1?key=k`` and ``/chat/completions`` give ``https://gw/v1/chat/completions?key=k``;
    appended to the whole string, the path would have become part of the query), and ``query``
    added to that query string."""
    parts = urlsplit(base_url)
    joined = "&".join(q for q in (parts.query, query) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, joined, ""))


class Endpoint(Struct, frozen=True):
    """Where one adapter posts, and what to say about it in errors."""

    provider: str
    model: str
    url: str
    key_hint: str = ""
    secret: str = ""

    def __repr__(self) -> str:
        """Every field but the secret: an endpoint may be printed in a traceback or a log."""
        return (
            f"Endpoint(provider={self.provider!r}, model={self.model!r}, url={self.url!r}, key_hint={self.key_hint!r})"
        )

    @property
    def shown_url(self) -> str:
        """The URL without userinfo or query string (either may carry credentials)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def scrub(self, text: str) -> str:
        """``text`` on one line, at most 400 characters, with the key and anything shaped like
        a key removed (providers quote masked keys back: ``Incorrect API key provided: sk-***3456``)."""
        if self.secret and len(self.secret) >= 4:
            text = text.replace(self.secret, "[key]")
        text = KEY_SHAPED.sub("[key]", text)
        text = " ".join(text.split())
        return text if len(text) <= 400 else text[:399] + "…"

    def where(self) -> str:
        return f"{self.provider} model {self.model!r} at {self.shown_url}"
