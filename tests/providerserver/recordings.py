"""The recorded provider exchanges in ``shared/recordings`` (beside the repository checkout)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: ``<checkout>/../shared/recordings``; CI keeps ``shared/`` beside the checkout.
RECORDINGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "recordings"


def available() -> bool:
    return RECORDINGS.is_dir()


def recording_paths(provider: str) -> list[Path]:
    """Every recording of one provider directory (``openai`` or ``anthropic``), sorted."""
    return sorted((RECORDINGS / provider).glob("*.json")) if available() else []


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
