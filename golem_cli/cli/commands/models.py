"""``golem models``: which model golem will use, and which providers are ready and why not.

Configuring a provider is where people get stuck (a key exported in another shell, a typo in
``config.toml``); this command answers "what will `golem chat` talk to" without sending a
request, and never prints a key.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from golem_cli.cli.command import GolemCommand

if TYPE_CHECKING:
    from golem_cli.config.settings import Settings
    from golem_cli.providers.resolve import ProviderStatus

app = typer.Typer()


Provider = Annotated[
    str | None,
    typer.Argument(metavar="[PROVIDER]", help="List the models this provider's endpoint serves (GET /models)."),
]


@app.command("models", cls=GolemCommand, rich_help_panel="Chat")
def models(
    provider: Provider = None, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
) -> int:
    """The default model and providers, or the models one serves."""
    from golem_cli.config.paths import config_file
    from golem_cli.config.settings import load_settings
    from golem_cli.providers.resolve import provider_statuses

    settings = load_settings()
    if provider:
        named = settings.aliases.get(provider, provider)  # an alias: its provider
        return _served(named.partition(":")[0], settings, as_json=as_json)
    default, source = _default(settings)
    statuses = provider_statuses(settings.providers)
    path = config_file()
    if as_json:
        from golem_cli.cli.render.console import camel, print_json

        providers = camel([s.to_json() for s in statuses])
        print_json({"defaultModel": default, "defaultFrom": source, "configFile": str(path),
                    "configExists": path.exists(), "unknownKeys": list(settings.unknown_keys),
                    "aliases": dict(settings.aliases), "providers": providers})  # fmt: skip
        return 0
    from golem_cli.cli.model_choice import unknown_keys_note

    typo = unknown_keys_note(settings)
    _out(f"default model: {default} ({source})\n")
    _out(f"config file:   {path}{'' if path.exists() else ' (not created yet)'}\n")
    _out(f"               {typo}\n\n" if typo else "\n")
    if settings.aliases:
        width = max(len(alias) for alias in settings.aliases)
        _out("aliases:\n" + "".join(f"  {a:<{width}}  {t}\n" for a, t in sorted(settings.aliases.items())) + "\n")
    _print_providers(statuses)
    _out("\nUse one with: golem chat -m PROVIDER:MODEL (e.g. openai:gpt-4o-mini, ollama:llama3.2)\n")
    return 0


def _served(provider: str, settings: Settings, *, as_json: bool) -> int:
    """``golem models NAME``: what the provider's endpoint lists, with context windows."""
    from golem_cli.cli.render.console import out, print_json
    from golem_cli.providers.listing import served_models

    url, served = served_models(provider, settings.providers, os.environ)
    if as_json:
        print_json({"provider": provider, "url": url or None, "models": [m.to_json() for m in served]})
        return 0
    out(f"{provider}: {len(served)} {'model' if len(served) == 1 else 'models'}" + (f" ({url})" if url else ""))
    width = max((len(m.id) for m in served), default=0)
    for m in served:
        window = f"{m.context_window:,} tokens of context" if m.context_window else ""
        out(f"  {provider}:{m.id:<{width}}  {window}".rstrip())
    return 0


def _default(settings: Settings) -> tuple[str, str]:
    """The model golem uses when none is named, and what chose it."""
    from golem_cli.config.settings import MODEL_ENV
    from golem_cli.providers.keys import OFFLINE_MODEL, default_model

    if settings.model:
        source = MODEL_ENV if os.environ.get(MODEL_ENV, "").strip() else f"model in {settings.source}"
        return settings.aliases.get(settings.model, settings.model), source
    found = default_model(settings.providers)
    return found, "a provider whose key is set" if found != OFFLINE_MODEL else "nothing configured"


def _print_providers(statuses: list[ProviderStatus]) -> None:
    """Each provider and its state; the built-in services whose key is not set come last,
    with the variable to set."""
    width = max(len(s.name) for s in statuses)
    waiting = [s for s in statuses if s.preset and s.problem and s.key_env]
    for s in statuses:
        if s not in waiting:
            _out(f"  {s.name:<{width}}  {_state(s)}\n")
    if waiting:
        _out("\nBuilt in, ready once their key is set:\n")
    for s in waiting:
        at = f" at {s.base_url}" if s.base_url else " (also needs AZURE_OPENAI_ENDPOINT)"
        _out(f"  {s.name:<{width}}  {s.key_env}{at}, e.g. {s.example or s.name + ':DEPLOYMENT'}\n")


def _state(s: ProviderStatus) -> str:
    if s.kind == "offline":
        return "built in, no network: offline:echo"
    if s.problem:
        return f"not ready: {s.problem}"
    key = f", key from {s.key}" if s.key else ", no key set (local servers need none)"
    return f"configured: {s.kind} API at {s.base_url}{key}"


def _out(text: str) -> None:
    """Names and addresses from the config: shown, not obeyed."""
    from golem_cli.cli.render.terminal_text import for_terminal

    sys.stdout.write(for_terminal(text, sys.stdout))
