"""Where a chat's conversation goes when golem's store refuses to save it to the end.

A save can be refused in the middle of a chat: the disk is full, the directory became
read-only, the history grew over the size limit on history files (``GOLEM_MAX_HISTORY_BYTES``).
The file on disk stays as it was (saves are atomic), and the REPL keeps the turn in memory
and saves the whole history again after the next turn (``ChatSession.keep_unsaved``). When the
chat ends and the store still refuses, the whole conversation is written here instead, as a
history file golem reads back (``golem import FILE``): in golem's data directory (a size
limit refused it, the disk is fine), else the temporary directory (often another file system),
else the working directory. (``salvage.py`` is the other direction: reading what is left of a
damaged file.)
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from golem_cli.cli.errors import describe
from golem_cli.config.paths import data_dir
from golem_cli.core.codec.history import dump_history
from golem_cli.store.atomic import write_atomic

if TYPE_CHECKING:
    from collections.abc import Sequence

    from golem_cli.core.messages import Message


def places() -> list[Path]:
    """Where to try, in order."""
    return [data_dir() / "unsaved", Path(tempfile.gettempdir()), Path.cwd()]


def write_elsewhere(cid: str, history: Sequence[Message]) -> tuple[Path | None, list[str]]:
    """Write ``history`` as a history file in the first place that takes it: its path (None
    when none did) and, for each place that refused, why."""
    data = dump_history(history)
    name = f"golem-unsaved-{cid}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    problems: list[str] = []
    for i, place in enumerate(places()):
        try:
            if i == 0:
                os.makedirs(place, mode=0o700, exist_ok=True)
            write_atomic(place / name, data)
        except OSError as e:
            problems.append(f"{place}: {describe(e)}")
            continue
        return place / name, problems
    return None, problems
