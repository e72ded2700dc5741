"""Choosing the model for a chat: the flag, then the config, then what the environment offers.

With nothing configured golem still works: it falls back to the offline echo model and says
how to configure a real one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from golem_cli.config.settings import Settings
    from golem_cli.core.model import Model, ModelSettings

OFFLINE = "offline:echo"


class Choice(Struct):
    model: Model
    settings: Settings
    note: str = ""  # said once to the person (on stderr) when the fallback was taken


def choose_model(flag: str | None = None, *, stored: str = "", fallback: bool = True, lazy: bool = False) -> Choice:
    """The model for this command: ``--model``, else the conversation's own model (on resume,
    when it is still available here), else ``model`` in the config or ``GOLEM_MODEL``, else a
    provider whose key is set, else the offline echo model. With ``fallback=False`` (scripts:
    ``golem ask``) that last step is an ``InputError`` instead: a fake reply with exit code 0
    would pass for a real one. Naming the offline model (``-m offline:echo``) still works.
    ``lazy`` (a chat) builds the provider's adapter on first use, after the prompt is shown."""
    from golem_cli.config.settings import load_settings

    settings = load_settings()
    flag = real_name(flag, settings)
    notes: list[str] = []
    if stored and not flag:
        from golem_cli.core.errors import ModelError
        from golem_cli.providers.resolve import resolve

        try:
            model = resolve(stored, providers=settings.providers, models=settings.models, lazy=lazy)
            return Choice(model, settings, "\n".join(_with_notes(notes, settings)))
        except ModelError as e:  # the conversation's model is not available here: say so, go on
            reason = f"{e}; {e.hint}" if e.hint else str(e)
            notes.append(f"This conversation's model is not available ({reason}); using the default instead.")
            if not fallback:  # a script gets no default: the refusal says why the stored model is not used
                from golem_cli.cli.errors import InputError

                try:
                    plan_model(flag, settings, fallback=False)
                except InputError as refused:
                    raise InputError(
                        f"this conversation's model {stored} is not available ({reason}), and {refused}"
                    ) from None
    planned = plan_model(flag, settings, fallback=fallback)
    choice = Choice(resolve_planned(planned, lazy=lazy), settings)
    choice.note = "\n".join([*notes, *planned.notes])
    return choice


class Planned:
    """The model a new chat will use, by name, before anything is resolved: what its banner
    shows while the adapter is checked and built after the prompt is on screen. (A plain
    class: a dataclass costs the prompt a millisecond to build.)"""

    def __init__(self, name: str, settings: Settings, notes: list[str]) -> None:
        self.name = name
        self.settings = settings
        self.notes = notes

    @property
    def note(self) -> str:
        return "\n".join(self.notes)


def plan_model(flag: str | None, settings: Settings, *, fallback: bool = True) -> Planned:
    """``choose_model`` without a conversation's own model and without resolving the name:
    nothing of the providers layer is imported when the flag or the config names the model.
    ``resolve_planned`` then checks the name (a bad one is a ``ModelError``)."""
    notes: list[str] = []
    name = real_name(flag, settings) or real_name(settings.model, settings)
    if not name:
        from golem_cli.providers.keys import default_model

        name = default_model(settings.providers)
    if name == OFFLINE and not (flag or settings.model):
        from golem_cli.config.paths import config_file

        how = (
            "set OPENAI_API_KEY or ANTHROPIC_API_KEY, pass --model provider:model, or put "
            f'model = "openai:gpt-4o-mini" in {config_file()}'
        )
        if not fallback:
            from golem_cli.cli.errors import InputError

            typo = "".join(f"; {note}" for note in _with_notes([], settings))  # `modle = ...` is why, often
            raise InputError(f"no model configured: {how} (-m {OFFLINE} asks the offline echo model){typo}")
        notes.append(f"No model configured: using the built-in offline echo model. For a real one, {how}.")
    return Planned(name, settings, _with_notes(notes, settings))


def real_name(name: str | None, settings: Settings) -> str | None:
    """The model an alias stands for (``[aliases] fast = "groq:llama-3.3-70b"``), else ``name``:
    wherever a model is named (``-m``, ``model =``, ``GOLEM_MODEL``, ``/model``)."""
    return settings.aliases.get(name, name) if name else name


def resolve_planned(planned: Planned, *, lazy: bool = False) -> Model:
    """The model ``planned`` names, checked against the configuration (``ModelError`` for an
    unknown provider, a missing key or an option it cannot take)."""
    from golem_cli.providers.resolve import resolve

    s = planned.settings
    return resolve(planned.name, providers=s.providers, models=s.models, lazy=lazy)


def _with_notes(notes: list[str], settings: Settings) -> list[str]:
    note = unknown_keys_note(settings)
    return [*notes, note] if note else notes


def unknown_keys_note(settings: Settings) -> str:
    """The config file's unknown top-level keys, each with the known key it most looks like
    (a typo's usual cause: ``modle``), or "" when there are none."""
    if not settings.unknown_keys:
        return ""
    import difflib

    from golem_cli.config.schema import KNOWN_KEYS

    def named(key: str) -> str:
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.7)
        return f"{key} (did you mean {close[0]}?)" if close else key

    keys = ", ".join(named(key) for key in settings.unknown_keys)
    known = ", ".join(sorted(KNOWN_KEYS))
    return f"{settings.source}: unknown setting(s) {keys} ignored (known: {known})"


def max_messages(flag: int | None, settings: Settings) -> int:
    return flag if flag is not None else settings.max_messages


async def close_model(model: object) -> None:
    """Close a model's HTTP client, if it has one (the offline models have none)."""
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        await aclose()


def context_tokens(flag: int | None, settings: Settings) -> int | None:
    return flag if flag is not None else settings.context_tokens


def run_options(given: list[str] | None, model: Model, where: str = "given with -o") -> ModelSettings:
    """The ``-o KEY=VALUE`` options (``-o KEY VALUE`` arrives joined) as settings, checked
    against ``model`` so that an option it cannot take is refused before the prompt is sent.
    A refused option is a usage error, as every other bad flag is (exit 2)."""
    from golem_cli.cli.errors import InputError
    from golem_cli.core.errors import ModelError
    from golem_cli.providers.options import settings_from

    pairs = []
    for item in given or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"-o needs a name and a value, like -o temperature 0.2 (got {item!r})")
        pairs.append((key.strip(), value))
    try:
        settings = settings_from(pairs, where)
        check = getattr(model, "check_settings", None)
        if check is not None:
            check(settings)
    except ModelError as e:
        raise InputError(str(e), hint=e.hint) from None
    return settings
