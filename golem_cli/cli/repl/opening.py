"""A chat shown before its session exists (ADR 0015): what the banner needs, and how to open
the session once the prompt is on screen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.session import ChatSession
    from golem_cli.tools.toolbox import Toolbox


class Opening:
    """A chat shown before its session exists: what the banner says (the model by name, the
    conversation's ID and how much of it tells it apart), and how to open the session once
    the prompt is on screen.

    ``open`` does what the prompt does not need, in a worker thread while the person types:
    for a new chat, resolving the model (a bad name or key is a ``ModelError``), importing the
    session and the codec, creating the conversation; for a long conversation, loading and
    repairing it. It returns the session and lines to print above the prompt (the repair
    report). The REPL waits for it before it acts on any line (a prompt, a slash command,
    Ctrl-D), so the first turn runs on the checked model and the whole, repaired history;
    when it fails, the prompt closes and the error is reported as any command's error is.
    ``before`` are lines printed under the banner, before the prompt; ``abandon`` gives back
    what was taken for the opening (a conversation's lock) when it never runs. (A plain
    class: a dataclass costs the prompt a millisecond to build.)"""

    def __init__(
        self,
        model: str,
        conversation_id: str,
        unique: int,
        open: Callable[[], tuple[ChatSession, list[str]]],
        toolbox: Toolbox | None = None,
        *,
        before: Sequence[str] = (),
        abandon: Callable[[], None] | None = None,
    ) -> None:
        self.model = model
        self.conversation_id = conversation_id
        self.unique = unique
        self.open = open
        self.toolbox = toolbox
        self.before = list(before)
        self.abandon = abandon
