"""``golem models``: which model golem will use, and which providers are ready and why not.

Configuring a provider is where people get stuck (a key exported in another shell, a typo in
``config.toml``); this command answers "what will `golem chat` talk to" without sending a
request, and never prints a key.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from golem_cli.cli.command import GolemCommand

app = typer.Typer()


@app.command("models", cls=GolemCommand, rich_help_panel="Chat")
def models(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> int:
    """Show the default model and which providers are configured."""
    from golem_cli.config.paths import config_file
    from golem_cli.config.settings import MODEL_ENV, load_settings
    from golem_cli.providers.resolve import default_model, provider_statuses

    settings = load_settings()
    if os.environ.get(MODEL_ENV, "").strip():
        source = MODEL_ENV
    elif settings.model:
        source = f"model in {settings.source}"
    else:
        source = (
            "a provider whose key is set"
            if default_model(settings.providers) != "offline:echo"
            else "nothing configured"
        )
    default = settings.model or default_model(settings.providers)
    statuses = provider_statuses(settings.providers)
    path = config_file()
    if as_json:
        from golem_cli.cli.render.console import camel, print_json

        providers = camel([s.to_json() for s in statuses])
        print_json({"defaultModel": default, "defaultFrom": source, "configFile": str(path),
                    "configExists": path.exists(), "unknownKeys": list(settings.unknown_keys),
                    "providers": providers})  # fmt: skip
        return 0
    from golem_cli.cli.model_choice import unknown_keys_note
    from golem_cli.cli.render.terminal_text import for_terminal

    def out(text: str) -> None:  # names and addresses from the config: shown, not obeyed
        sys.stdout.write(for_terminal(text, sys.stdout))

    out(f"default model: {default} ({source})\n")
    out(f"config file:   {path}{'' if path.exists() else ' (not created yet)'}\n")
    typo = unknown_keys_note(settings)
    out(f"               {typo}\n\n" if typo else "\n")
    width = max(len(s.name) for s in statuses)
    presets = [s for s in statuses if s.preset and s.problem and s.key_env]
    for s in statuses:
        if s in presets:
            continue
        if s.kind == "offline":
            where = "built in, no network: offline:echo"
        elif s.problem:
            where = f"not ready: {s.problem}"
        else:
            key = f", key from {s.key}" if s.key else ", no key set (local servers need none)"
            where = f"configured: {s.kind} API at {s.base_url}{key}"
        out(f"  {s.name:<{width}}  {where}\n")
    if presets:
        out("\nBuilt in, ready once their key is set:\n")
        for s in presets:
            at = f" at {s.base_url}" if s.base_url else " (also needs AZURE_OPENAI_ENDPOINT)"
            example = f", e.g. {s.example or s.name + ':DEPLOYMENT'}"
            out(f"  {s.name:<{width}}  {s.key_env}{at}{example}\n")
    out("\nUse one with: golem chat -m PROVIDER:MODEL (e.g. openai:gpt-4o-mini, ollama:llama3.2)\n")
    return 0
