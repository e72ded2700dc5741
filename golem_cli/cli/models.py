"""Choosing the model for a chat: the flag, then the config, then what the environment offers.

With nothing configured golem still works: it falls back to the offline echo model and says
how to configure a real one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from golem_cli.config.settings import Settings
    from golem_cli.core.model import Model

OFFLINE = "offline:echo"


@dataclass
class Choice:
    model: Model
    settings: Settings
    note: str = ""  # said once to the person (on stderr) when the fallback was taken


def choose_model(flag: str | None = None, *, stored: str = "") -> Choice:
    """The model for this command: ``--model``, else the conversation's own model (on resume),
    else ``model`` in the config or ``GOLEM_MODEL``, else a provider whose key is set, else the
    offline echo model."""
    from golem_cli.config.paths import config_file
    from golem_cli.config.settings import load_settings
    from golem_cli.providers.resolve import default_model, resolve

    settings = load_settings()
    name = flag or stored or settings.model or default_model(settings.providers)
    note = ""
    if name == OFFLINE and not (flag or stored or settings.model):
        note = (
            "No model configured: using the built-in offline echo model. For a real one, set "
            "OPENAI_API_KEY or ANTHROPIC_API_KEY, pass --model provider:model, or put "
            f'model = "openai:gpt-4o-mini" in {config_file()}.'
        )
    if settings.unknown_keys:
        keys = ", ".join(settings.unknown_keys)
        note = "\n".join(filter(None, [note, f"{settings.source}: unknown setting(s) {keys} ignored (known: model, max_messages, providers)"]))
    return Choice(resolve(name, providers=settings.providers), settings, note)


def max_messages(flag: int | None, settings: Settings) -> int:
    return flag if flag is not None else settings.max_messages


async def close_model(model: object) -> None:
    """Close a model's HTTP client, if it has one (the offline models have none)."""
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        await aclose()
