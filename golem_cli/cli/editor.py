"""Editing a text in the user's editor (``$VISUAL``, else ``$EDITOR``, else ``vi``): a private
temporary file, the editor run on it in the foreground, what it holds after read back
(bounded: the editor may have been pointed anywhere)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from golem_cli.cli.errors import InputError

#: Far more than a summary a person writes; what is read back from the editor's file.
MAX_EDITED = 1 << 20


def editor_command() -> list[str]:
    """The editor's command line from the environment."""
    text = os.environ.get("VISUAL", "").strip() or os.environ.get("EDITOR", "").strip() or "vi"
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise InputError(f"the editor command {text!r} cannot be read ({e})", hint="set EDITOR to a command") from None
    return words or ["vi"]


def edit_text(text: str, *, suffix: str = ".md") -> str:
    """``text`` as the user left it in their editor. ``InputError`` when the editor cannot be
    started or ends with an error (the text is then unchanged)."""
    command = editor_command()
    fd, name = tempfile.mkstemp(prefix="golem-", suffix=suffix)  # 0600, in the user's temp dir
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            done = subprocess.run([*command, name], check=False)
        except OSError as e:
            raise InputError(f"cannot start the editor {command[0]!r}: {e.strerror or e}",
                             hint="set VISUAL or EDITOR to an editor's command") from None  # fmt: skip
        if done.returncode != 0:
            raise InputError(f"the editor {command[0]!r} ended with exit code {done.returncode}; nothing was changed")
        with path.open("rb") as f:
            data = f.read(MAX_EDITED + 1)
        if len(data) > MAX_EDITED:
            raise InputError(f"the edited text is over {MAX_EDITED // 2**20} MB; nothing was changed")
        return data.decode("utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
