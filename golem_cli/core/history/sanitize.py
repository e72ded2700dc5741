"""Sanitizing a history that crossed a trust boundary (spec §4).

An imported transcript can assert anything: a system prompt with operator authority, an image
URL naming ``file:///etc/passwd``, a fabricated tool call. Sanitize removes what the model
must not see, repairs pairing, and reports every removal so the boundary can log or refuse it.
It never rewrites content, arguments, thinking or identity.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct, field

from golem_cli.core.history.repair import HistoryRepair, normalize_history
from golem_cli.core.history.urlscheme import url_scheme
from golem_cli.core.messages import SYSTEM, USER, Message, replace

__all__ = ["SanitizeReport", "UnsafePart", "sanitize_history"]

SAFE_SCHEMES = ("http", "https")


class UnsafePart(Struct, frozen=True, kw_only=True):
    """A URL part that was removed: where it was (index in the input, system messages
    included), its kind, and the rejected scheme (``""`` when none or unparsable)."""

    message_index: int
    kind: str
    scheme: str

    def to_json(self) -> dict[str, object]:
        return {"MessageIndex": self.message_index, "Kind": self.kind, "Scheme": self.scheme}


class SanitizeReport(Struct, kw_only=True):
    system_prompts: int = 0
    unsafe_parts: list[UnsafePart] = field(default_factory=list)
    repair: HistoryRepair = field(default_factory=HistoryRepair)

    @property
    def changed(self) -> bool:
        return bool(self.system_prompts or self.unsafe_parts or self.repair.changed)

    def to_json(self) -> dict[str, object]:
        """The Go field names, lists never null."""
        return {
            "SystemPrompts": self.system_prompts,
            "UnsafeParts": [p.to_json() for p in self.unsafe_parts],
            "Repair": self.repair.to_json(),
        }


def sanitize_history(history: Sequence[Message]) -> tuple[list[Message], SanitizeReport]:
    """Drop system messages and non-http(s) URL parts, drop user messages left empty, then
    repair pairing. Deterministic, idempotent, never mutates its input."""
    report = SanitizeReport()
    out: list[Message] = []
    for index, m in enumerate(history):
        if m.role == SYSTEM:
            report.system_prompts += 1
            continue
        if m.parts:
            keep = []
            for part in m.parts:
                if part.url == "":
                    keep.append(part)  # inline data or malformed: run validation's business
                    continue
                scheme = url_scheme(part.url)
                if scheme in SAFE_SCHEMES:
                    keep.append(part)
                else:
                    report.unsafe_parts.append(UnsafePart(message_index=index, kind=part.kind, scheme=scheme))
            if len(keep) != len(m.parts):
                m = replace(m, parts=keep)
        if m.role == USER and m.content == "" and not m.parts:
            continue  # nothing left to say; not reported, as in the reference
        out.append(m)
    messages, report.repair = normalize_history(out)
    return messages, report
