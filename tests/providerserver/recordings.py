"""The recorded provider exchanges in ``tests/data/recordings`` (sources and licences in its README)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[1] / "data" / "recordings"


def recording_paths(provider: str) -> list[Path]:
    """Every recording of one provider directory (``openai`` or ``anthropic``), sorted."""
    paths = sorted((RECORDINGS / provider).glob("*.json"))
    assert paths, f"no {provider} recordings under {RECORDINGS}"
    return paths


@cache
def load_recording(name: str) -> dict[str, Any]:
    """A recording by file stem (``openai-stream-text-include-usage``) or by path."""
    path = Path(name)
    if not path.is_file():
        matches = [p for p in RECORDINGS.glob("*/*.json") if p.stem == name]
        if not matches:
            raise FileNotFoundError(f"no recording named {name!r} under {RECORDINGS}")
        path = matches[0]
    return json.loads(path.read_text(encoding="utf-8"))
