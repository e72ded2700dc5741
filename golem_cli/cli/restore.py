"""A chat's settings kept with its conversation (issue 24 bug 3): the tools, the model options,
the trim, rolling summaries and where the system prompt came from, in the ``meta`` sidecar (ADR 0025), never in
the history file. ``resume``, ``fork`` and ``ask -c`` restore them under the command line's
flags and over the config (``restore``), saying which in one line; a chat keeps them as they
change (``keep``). Only what differs from the config is kept, so a value the person never chose
follows the config; and what is read back is checked again, since the sidecar is outside input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from msgspec import Struct, field

from golem_cli.core.model import ModelSettings
from golem_cli.store.meta import ChatSettings

if TYPE_CHECKING:
    from golem_cli.cli.model_choice import Choice
    from golem_cli.cli.options import ChatFlags
    from golem_cli.cli.tools.choice import ToolChoice
    from golem_cli.config.settings import Settings
    from golem_cli.session import ChatSession

#: Where a restored option was set, as its refusal says it.
KEPT = "kept with this conversation"


class Restored(Struct, kw_only=True):
    """What a resumed chat starts with: each setting the flag's when given, else the kept one,
    else None (the config's); ``said`` names what was restored, ``problems`` what was left out."""

    tools: list[str] = field(default_factory=list)
    off: list[str] = field(default_factory=list)
    options: ModelSettings = ModelSettings()
    max_messages: int | None = None
    context_tokens: int | None = None
    trim_stride: int | None = None
    summarize_trimmed: bool = False
    system: str = ""
    kept: ChatSettings | None = None
    said: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The one line saying what was restored, and one for each kept value left out."""
        head = [f"Restored this chat's settings: {'; '.join(self.said)}."] if self.said else []
        return head + [f"golem: {problem}" for problem in self.problems]

    def apply(self, session: ChatSession, choice: Choice, *, max_cost: float | None = None) -> None:
        """Set ``session`` up so: what each run sends and may spend (``common.set_window``),
        the system prompt's source, and what is kept now."""
        from golem_cli.cli.common import set_window

        set_window(session, choice, self.context_tokens, self.options, self.trim_stride, self.summarize_trimmed,
                   max_cost=max_cost)  # fmt: skip
        if session.system and not session.system_source:
            session.system_source = self.system
        session.kept_settings = self.kept


def reopen(kept: ChatSettings | None, choice: Choice, flags: ChatFlags) -> tuple[Restored, ToolChoice]:
    """For a command that continues a conversation: its settings (``restore``, ``-o`` checked
    against the model first) and its tools, the restored ones among them."""
    from golem_cli.cli.model_choice import run_options
    from golem_cli.cli.tools.choice import choose_tools

    out = restore(kept, choice, tool=flags.tool, options=run_options(flags.options, choice.model),
                  max_messages=flags.max_messages, context_tokens=flags.context_tokens,
                  trim_stride=flags.trim_stride, summarize_trimmed=flags.summarize_trimmed)  # fmt: skip
    tools = choose_tools(choice.settings, flags.tool, flags.allow, flags.yes, deny=flags.deny)
    tools.restore(out.tools, out.off)
    if tools.restored or tools.off:
        tools.ensure()  # each restored name checked now, before the banner says it is back
    out.problems[:0] = tools.left_out
    if tools.restored or tools.off:
        off = f" (off: {', '.join(tools.off)})" if tools.off else ""
        out.said.insert(0, f"tools {', '.join(tools.restored) or 'none'}{off}")
    return out, tools


def restore(
    kept: ChatSettings | None,
    choice: Choice,
    *,
    tool: list[str] | None,
    options: ModelSettings,
    max_messages: int | None,
    context_tokens: int | None,
    trim_stride: int | None,
    summarize_trimmed: bool = False,
) -> Restored:
    """The settings a resumed chat starts with: the flags (``options`` are ``-o``'s), then what
    ``kept`` holds, then the config (left as None)."""
    out = Restored(options=options, max_messages=max_messages, context_tokens=context_tokens,
                   trim_stride=trim_stride, summarize_trimmed=summarize_trimmed, kept=kept)  # fmt: skip
    if kept is None:
        return out
    if not tool:
        out.tools, out.off = list(kept.tools), list(kept.off)
    _restore_options(out, kept, choice)
    _restore_trim(out, kept, choice.settings)
    if kept.summarize_trimmed and not out.summarize_trimmed and not choice.settings.summarize_trimmed:
        out.summarize_trimmed = True
        out.said.append("rolling summaries")
    if kept.system in ("-s", "/system"):
        out.system = kept.system
        out.said.append(f"the system prompt (set by {kept.system})")
    return out


def _restore_options(out: Restored, kept: ChatSettings, choice: Choice) -> None:
    """The kept options the flags do not set, each checked as if given again (a value of the
    wrong type, or one the model now refuses, is left out and said)."""
    from golem_cli.core.errors import GolemError
    from golem_cli.providers.options import describe, merged, parse_value

    check = getattr(choice.model, "check_settings", None)
    values = {}
    for key, value in kept.options.items():
        if getattr(out.options, key, None) is not None:
            continue  # -o wins
        try:
            parsed = parse_value(key, value, KEPT)
            if check is not None:
                check(msgspec.structs.replace(ModelSettings(), **{key: parsed}))
        except GolemError as e:
            out.problems.append(f"left out the option {key} {KEPT}: {e}")
            continue
        values[key] = parsed
    if values:
        restored = msgspec.structs.replace(ModelSettings(), **values)
        out.options = merged(restored, out.options)
        out.said.append(", ".join(describe(restored)))


def _restore_window(out: Restored, kept: ChatSettings) -> None:
    """The kept window (messages or tokens) unless a flag sets either."""
    if out.max_messages is not None or out.context_tokens is not None:
        return
    if kept.max_messages is not None and kept.max_messages >= 1:
        out.max_messages = kept.max_messages
        out.said.append(f"the newest {kept.max_messages} messages a run")
    if kept.context_tokens is not None and kept.context_tokens >= 0:
        out.context_tokens = kept.context_tokens
        if kept.context_tokens:
            out.said.append(f"about {kept.context_tokens} tokens a run")


def _restore_trim(out: Restored, kept: ChatSettings, config: Settings) -> None:
    """The kept window, and the kept stride unless ``--trim-stride`` is given or it no longer
    fits the window."""
    _restore_window(out, kept)
    if out.trim_stride is not None or kept.trim_stride is None or kept.trim_stride < 1:
        return
    window = out.max_messages if out.max_messages is not None else config.max_messages
    tokens = out.context_tokens if out.context_tokens is not None else config.context_tokens
    if kept.trim_stride > 1 and not tokens and kept.trim_stride >= window:
        out.problems.append(f"left out the trim stride {kept.trim_stride} {KEPT}: it does not fit {window} messages")
        return
    out.trim_stride = kept.trim_stride
    out.said.append(f"cut in steps of {kept.trim_stride}")


def recorded(session: ChatSession, tools: ToolChoice) -> ChatSettings:
    """How ``session`` is set up now, as far as it differs from the config (``tools.settings``
    and the project file's tools)."""
    config = tools.settings
    box = session.toolbox
    configured = set(tools.configured)
    options = {
        f.name: list(value) if isinstance(value, tuple) else value
        for f in msgspec.structs.fields(session.options)
        if (value := getattr(session.options, f.name)) is not None
    }
    tokens = session.context_tokens or 0
    return ChatSettings(
        tools=[name for name in box.chosen if name not in configured] if box is not None else [],
        off=box.refused if box is not None else [],
        options=options,
        max_messages=session.max_messages if session.max_messages != config.max_messages else None,
        context_tokens=tokens if tokens != (config.context_tokens or 0) else None,
        trim_stride=session.trim_stride if session.trim_stride != config.trim_stride else None,
        system=session.system_source if session.system else "",
        summarize_trimmed=session.compactor.rolling and not config.summarize_trimmed,
    )


def keep(session: ChatSession, tools: ToolChoice | None) -> None:
    """Write the chat's settings beside its conversation when they changed since last kept (a
    failed write is tried again at the next change: nothing of the conversation depends on it)."""
    from golem_cli.store.errors import StoreError

    if tools is None or session.uncreated:
        return
    now = recorded(session, tools)
    if now == (session.kept_settings or ChatSettings()):
        return
    try:
        session.store.set_settings(session.conversation_id, now)
    except (StoreError, OSError):
        return
    session.kept_settings = now
