"""Shell completion: the scripts for ``completions/``, and what golem offers at tab time.

The scripts are small shims: completions are computed by ``golem`` at tab time
(``_GOLEM_COMPLETE=complete_<shell>``), so they stay right as commands change. Regenerate
with ``python -m golem_cli.cli.completion``; tests/repl/test_completions.py keeps the files
current. Conversation IDs complete from the store, with their titles as descriptions where
the shell shows them (zsh, fish).
"""

from __future__ import annotations

from pathlib import Path

SHELLS = {"bash": "golem.bash", "zsh": "_golem", "fish": "golem.fish"}
COMPLETE_VAR = "_GOLEM_COMPLETE"


def script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="golem", complete_var=COMPLETE_VAR, shell=shell).strip() + "\n"


ID_HELP = "A conversation: its ID, the start or the end of it, or `last`."
MAX_OFFERED = 200  # the newest conversations a completion offers


def conversation_ids(incomplete: str) -> list[tuple[str, str]]:
    """Stored conversations whose ID starts with what was typed (``last`` too), newest first,
    as (ID, "title · updated"). (typer offers only values that start with what was typed, so a
    tail, which golem accepts, does not complete.)"""
    from golem_cli.cli.common import open_store
    from golem_cli.cli.render.console import local_time

    typed = incomplete.strip().lower()
    offered = [("last", "the most recently updated conversation")] if "last".startswith(typed) else []
    try:
        rows = open_store().list()
    except Exception:  # a completion must never print a traceback into the command line
        return offered
    for info in rows:
        if info.id.startswith(typed):
            title = " ".join((info.meta.display_title or "(empty)").split())[:60]
            offered.append((info.id, f"{title} · {local_time(info.meta.updated)}"))
            if len(offered) >= MAX_OFFERED:
                break
    return offered


def model_names(incomplete: str) -> list[tuple[str, str]]:
    """``-m``: the configured model, then a model of each provider (those whose key is set
    first), as (name, what it is). golem knows no provider's model list without asking it, so
    a provider with no known model offers ``NAME:`` to go on from."""
    try:
        from golem_cli.config.settings import load_settings
        from golem_cli.providers.resolve import provider_statuses

        settings = load_settings()
        statuses = provider_statuses(settings.providers)
    except Exception:  # a broken config must not print into the command line
        return []
    offered = [(settings.model, "model in config.toml")] if settings.model else []
    offered += [(alias, f"alias of {target}") for alias, target in sorted(settings.aliases.items())]
    for ready in (True, False):
        for s in statuses:
            if (not s.problem) != ready:
                continue
            if s.kind == "offline":
                offered.append(("offline:echo", "built in, no network: echoes the prompt"))
            else:
                state = "ready" if ready else "not ready: " + s.problem.split(";")[0]
                offered.append((s.example or f"{s.name}:", f"{s.kind} API · {state}"))
    unique = dict(reversed(offered))  # each name once, with its first description
    return [(n, unique[n]) for n in dict.fromkeys(n for n, _ in offered) if n.startswith(incomplete)]


def tool_names(incomplete: str) -> list[tuple[str, str]]:
    """``-T`` and ``--allow``: the built-in groups and tools, and the configured tool servers."""
    from golem_cli.config.schema import RESERVED_SERVER_NAMES

    groups = {"fs": "files: read, list, search, write, edit", "shell": "run_command", "web": "fetch_url",
              "all": "every built-in tool"}  # fmt: skip
    offered = [*groups.items(), *((n, "built-in tool") for n in sorted(RESERVED_SERVER_NAMES - {*groups, "builtin"}))]
    try:
        from golem_cli.config.settings import load_settings

        offered += [(name, "tool server") for name in sorted(load_settings().mcp_servers)]
    except Exception:
        pass
    return [(n, d) for n, d in offered if n.startswith(incomplete)]


def roles(incomplete: str) -> list[tuple[str, str]]:
    """``search --role``."""
    return [(r, "") for r in ("user", "assistant", "system", "tool") if r.startswith(incomplete)]


def write_all(directory: Path) -> list[Path]:
    written = []
    for shell, name in SHELLS.items():
        path = directory / name
        path.write_text(script(shell), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all(Path(__file__).resolve().parents[2] / "completions"):
        print(path)
