"""The completion scripts in completions/ are current, and golem answers them at tab time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from golem_cli.cli.completion import SHELLS, script

from tests.repl.conftest import GOLEM, golem_env

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_scripts_are_current(shell):
    assert (COMPLETIONS / SHELLS[shell]).read_text(encoding="utf-8") == script(shell), (
        "regenerate with: python -m golem_cli.cli.completion"
    )


def asked(shell: str, words: str, cword: int) -> dict[str, str]:
    """What a shell's completion function puts in golem's environment at tab time."""
    return {"_GOLEM_COMPLETE": f"complete_{shell}", "COMP_WORDS": words, "COMP_CWORD": str(cword),
            "_TYPER_COMPLETE_ARGS": words, "_TYPER_COMPLETE_FISH_ACTION": "get-args"}  # fmt: skip


def complete_in_a_process(tmp_path, shell: str, words: str, cword: int) -> str:
    """The answer of ``golem`` started as the shell starts it at tab time."""
    env = golem_env(tmp_path) | asked(shell, words, cword)
    return subprocess.run([GOLEM], env=env, capture_output=True, text=True, timeout=30).stdout


@pytest.fixture
def complete(golem_main):
    """``complete(home, shell, words, cword)``: golem's answer to a shell at tab time, from its
    main in this process (``golem_main``); ``test_the_program_answers_at_tab_time`` keeps
    the program itself answering."""

    def answer(home, shell: str, words: str, cword: int) -> str:
        return golem_main(env={"GOLEM_HOME": str(home)} | asked(shell, words, cword)).out

    return answer


def test_the_program_answers_at_tab_time(tmp_path):
    assert complete_in_a_process(tmp_path, "bash", "golem ch", 1).split() == ["chat"]
    assert "chat" in complete_in_a_process(tmp_path, "zsh", "golem ch", 1)
    assert "chat" in complete_in_a_process(tmp_path, "fish", "golem ch", 1)


def test_bash_completes_commands_and_options(complete, tmp_path):
    assert complete(tmp_path, "bash", "golem ch", 1).split() == ["chat"]
    assert set(complete(tmp_path, "bash", "golem ", 1).split()) >= {"chat", "resume", "fork", "ask", "list", "normalize"}
    assert "--max-messages" in complete(tmp_path, "bash", "golem chat --m", 2).split()


def test_zsh_and_fish_answer(complete, tmp_path):
    assert "chat" in complete(tmp_path, "zsh", "golem ch", 1)
    assert "chat" in complete(tmp_path, "fish", "golem ch", 1)


def _stored(home, *titles: str) -> list[str]:
    from golem_cli.core.messages import Message
    from golem_cli.store import Store

    store = Store(home)
    return [store.create([Message("user", "q")], title=title) for title in titles]


@pytest.mark.parametrize("command", ["resume", "show", "fork", "export", "delete"])
def test_conversation_ids_complete_for_every_command_that_takes_one(complete, tmp_path, command):
    ids = _stored(tmp_path, "first", "second")
    offered = complete(tmp_path, "bash", f"golem {command} ", 2).split()
    assert set(ids) <= set(offered) and "last" in offered
    assert complete(tmp_path, "bash", f"golem {command} {ids[1][:-1]}", 2).split() == [ids[1]]


def test_cid_completes_and_zsh_and_fish_show_titles(complete, tmp_path):
    (cid,) = _stored(tmp_path, "Parsing JSON in Go")
    assert cid in complete(tmp_path, "bash", "golem ask --cid ", 3).split()
    assert "Parsing JSON in Go" in complete(tmp_path, "zsh", "golem show ", 2)
    fish = complete(tmp_path, "fish", "golem show ", 2)
    assert f"{cid}\tParsing JSON in Go" in fish


def test_models_tools_and_roles_complete(complete, tmp_path):
    """-m, -T/--allow and --role offered nothing: a first-day user pressing Tab after -m saw files."""
    (tmp_path / "config.toml").write_text('model = "local:echo"\n[providers.local]\nbase_url = "http://127.0.0.1:9/v1"\n'
                                          '[mcp_servers.notes]\ncommand = "notes-server"\n')  # fmt: skip
    models = complete(tmp_path, "bash", "golem chat -m ", 3).split()
    assert models[0] == "local:echo" and {"offline:echo", "local:", "openai:gpt-4o-mini"} <= set(models)
    assert complete(tmp_path, "bash", "golem ask -m anth", 3).split() == ["anthropic:claude-sonnet-4-5"]
    tools = complete(tmp_path, "bash", "golem chat -T ", 3).split()
    assert {"fs", "shell", "web", "all", "run_command", "notes"} <= set(tools) and "builtin" not in tools
    assert complete(tmp_path, "bash", "golem resume --allow run", 3).split() == ["run_command"]
    assert complete(tmp_path, "bash", "golem search x --role as", 4).split() == ["assistant"]
    assert "anthropic API" in complete(tmp_path, "zsh", "golem chat -m anth", 3)
