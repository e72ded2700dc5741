"""What can go wrong in the conversation store, each error saying what the user can do.

The store's branch of golem's one error tree (``golem_cli.core.errors``): all are
``GolemError``s, so the CLI turns them into one line and an exit code; the two about input
(``InvalidReference``, ``CorruptConversation``) are ``InputError``s (exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from golem_cli.core.errors import GolemError, HistoryFormatError, InputError

if TYPE_CHECKING:
    from pathlib import Path

    from golem_cli.store.locks import LockHolder


class StoreError(GolemError):
    """Root of the store's errors."""


class InvalidReference(StoreError, InputError, ValueError):
    """Text that cannot be a conversation ID or prefix (``../x``, ``/etc``, ``ab``).

    Raised before the file system is touched.
    """


class ConversationNotFound(StoreError, LookupError):
    """No stored conversation matches the reference."""


class AmbiguousReference(StoreError, LookupError):
    """A prefix matches several conversations; ``candidates`` lists their IDs."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


class ForkPointOutOfRange(StoreError, InputError):
    """A fork point that is not one of the conversation's message numbers (1 to N)."""


class ConversationExists(StoreError):
    """A conversation with that ID is already stored."""


class ChangedOnDisk(StoreError):
    """Another program replaced a conversation's file between a save's check and its rename
    (the instant a writer that takes no lock can always race): the save was not made."""


class ConversationLocked(StoreError):
    """Another golem process holds the conversation open for writing.

    ``holder`` says who (pid, host, since when), when the lock file tells.
    """

    def __init__(self, message: str, cid: str, holder: LockHolder | None) -> None:
        super().__init__(message)
        self.cid = cid
        self.holder = holder


class CorruptConversation(StoreError, HistoryFormatError):
    """A stored conversation file is not a readable golem history."""

    def __init__(self, cid: str, path: Path, problem: str, *, salvageable: bool = True, deleted: bool = False) -> None:
        where = "" if str(path) in problem else f" (file {path})"
        if deleted:  # in the trash, where ``restore`` leaves it
            fix = "it stays in the trash; remove it by hand"
            super().__init__(f"deleted conversation {cid} cannot be restored: {problem}{where}; {fix}")
        else:
            if salvageable:  # damaged JSON: its complete messages can be recovered
                fix = f"`golem normalize --salvage {cid} --in-place` recovers its complete messages and keeps a backup"
            else:  # not a file golem can read at all (a FIFO, a device, too large): nothing to salvage
                fix = f"move it out of the store, or `golem delete {cid}` moves it to the trash"
            super().__init__(f"conversation {cid} cannot be read: {problem}{where}; {fix}")
        self.cid = cid
        self.path = path
        self.problem = problem
