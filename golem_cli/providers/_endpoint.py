"""Where one adapter posts, and how that place is named in what golem prints.

The URL may carry credentials (``https://user:key@host/v1?key=...``), and the key itself may be
quoted back by the provider; ``Endpoint`` is the one object that knows both and keeps them out
of every line golem shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where one adapter posts, and what to say about it in errors."""

    provider: str
    model: str
    url: str
    key_hint: str = ""
    secret: str = field(default="", repr=False)

    @property
    def shown_url(self) -> str:
        """The URL without userinfo or query string (either may carry credentials)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def scrub(self, text: str) -> str:
        """``text`` on one line, at most 400 characters, with the key removed."""
        if self.secret and len(self.secret) >= 4:
            text = text.replace(self.secret, "[key]")
        text = " ".join(text.split())
        return text if len(text) <= 400 else text[:399] + "…"

    def where(self) -> str:
        return f"{self.provider} model {self.model!r} at {self.shown_url}"
