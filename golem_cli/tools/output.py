"""What a tool sends back to the model is bounded: in memory while it is produced, and in
length when it is sent, with a note saying what was cut.

A command can print 10 MB, a file can be a log of gigabytes: the model gets the head and the
tail (the start says what ran, the end usually says how it ended) and a line in between
naming how much was left out, so it can ask for a narrower read instead of guessing.
"""

from __future__ import annotations

#: Characters of one tool result sent to the model unless configured otherwise
#: (``tool_output_limit`` in config.toml): about 8,000 tokens.
DEFAULT_OUTPUT_LIMIT = 30_000


def cut_note(cut: int, total: int, unit: str = "characters") -> str:
    return f"[golem: {cut:,} of {total:,} {unit} cut here; the tool output limit is reached]"


def cap(text: str, limit: int = DEFAULT_OUTPUT_LIMIT) -> str:
    """``text`` if it fits in ``limit`` characters, else its head and tail around a note."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n{cut_note(cut, len(text))}\n{text[len(text) - tail :]}"


class Collector:
    """Bytes of a stream, kept within ``limit`` bytes however much arrives: the first half
    and a rolling last half, and a count of everything seen."""

    def __init__(self, limit: int = DEFAULT_OUTPUT_LIMIT) -> None:
        self.limit = max(2, limit)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit // 2 - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            keep = self.limit - self.limit // 2
            if len(self._tail) > 2 * keep:  # trim in bulk, not per chunk
                del self._tail[: len(self._tail) - keep]

    def text(self) -> str:
        """What was kept, decoded (undecodable bytes replaced), with the cut noted."""
        keep = self.limit - self.limit // 2
        tail = bytes(self._tail[-keep:]) if len(self._tail) > keep else bytes(self._tail)
        cut = self.total - len(self._head) - len(tail)
        head_text = bytes(self._head).decode("utf-8", "replace")
        if cut <= 0:
            return (bytes(self._head) + tail).decode("utf-8", "replace")
        return f"{head_text}\n{cut_note(cut, self.total, 'bytes')}\n{tail.decode('utf-8', 'replace')}"
