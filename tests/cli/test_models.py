"""`golem models`: the default model and each provider's state, never a key."""

from __future__ import annotations

import json
import subprocess

import pytest


@pytest.fixture
def run(golem_main, tmp_path, monkeypatch):
    """``run(tmp_path, *args, **env)``: `golem models` through golem_main with ``tmp_path`` as
    GOLEM_HOME (where the tests write the config), answered as a finished process."""
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path))

    def models(home, *args, **env):
        assert home == tmp_path
        done = golem_main("models", *args, env=env)
        return subprocess.CompletedProcess(["golem", "models", *args], done.code, done.out, done.err)

    return models


def test_nothing_configured_falls_back_to_offline(run, tmp_path):
    done = run(tmp_path)
    assert done.returncode == 0
    assert "default model: offline:echo (nothing configured)" in done.stdout
    assert "not ready: no API key for provider 'openai'" in done.stdout


def test_keys_and_tables_are_reported_without_the_key(run, tmp_path):
    (tmp_path / "config.toml").write_text(
        '[providers.groq]\nbase_url = "https://api.groq.com/openai/v1"\napi_key_env = "GROQ_API_KEY"\n'
    )
    done = run(tmp_path, "--json", OPENAI_API_KEY="sk-secret-1", GROQ_API_KEY="gsk-secret-2")
    data = json.loads(done.stdout)
    assert data["defaultModel"] == "openai:gpt-4o-mini"
    by_name = {p["name"]: p for p in data["providers"]}
    assert by_name["openai"]["usable"] and by_name["openai"]["key"] == "OPENAI_API_KEY"
    assert by_name["groq"] == {"name": "groq", "type": "openai", "baseUrl": "https://api.groq.com/openai/v1",
                               "key": "GROQ_API_KEY", "usable": True, "problem": "", "preset": True,
                               "keyEnv": "GROQ_API_KEY", "example": "groq:llama-3.3-70b-versatile"}  # fmt: skip
    assert not by_name["anthropic"]["usable"]
    assert "secret" not in done.stdout


def test_configured_model_wins(run, tmp_path):
    (tmp_path / "config.toml").write_text('model = "ollama:llama3.2"\n')
    assert "default model: ollama:llama3.2 (model in " in run(tmp_path).stdout
    assert "default model: anthropic:x (GOLEM_MODEL)" in run(tmp_path, GOLEM_MODEL="anthropic:x").stdout


def test_presets_are_listed_with_their_key_variables(run, tmp_path):
    done = run(tmp_path, GROQ_API_KEY="gsk-secret")
    assert "groq        configured: openai API at https://api.groq.com/openai/v1, key from GROQ_API_KEY" in done.stdout
    ready_once = done.stdout.split("Built in, ready once their key is set:")[1]
    for name, variable in [("gemini", "GEMINI_API_KEY"), ("openrouter", "OPENROUTER_API_KEY"), ("mistral", "MISTRAL_API_KEY"),
                           ("deepseek", "DEEPSEEK_API_KEY"), ("together", "TOGETHER_API_KEY"), ("xai", "XAI_API_KEY"),
                           ("azure", "AZURE_OPENAI_API_KEY")]:  # fmt: skip
        assert f"  {name}" in ready_once and variable in ready_once
    assert "groq" not in ready_once and "secret" not in done.stdout
    data = json.loads(run(tmp_path, "--json").stdout)
    gemini = next(p for p in data["providers"] if p["name"] == "gemini")
    assert gemini["preset"] and gemini["keyEnv"] == "GEMINI_API_KEY" and not gemini["usable"]


def test_a_provider_without_a_key_does_not_claim_one(run, tmp_path):
    (tmp_path / "config.toml").write_text('[providers.local]\nbase_url = "http://127.0.0.1:8080/v1"\n')
    out = run(tmp_path).stdout
    line = next(line for line in out.splitlines() if line.strip().startswith("local"))
    assert "no key set" in line and "key from" not in line


def test_a_mistyped_key_is_named_where_people_look_for_why(run, golem_main, tmp_path):
    """`modle = "..."` used to leave `golem ask` saying only "no model configured" (the note
    about the unknown key was never printed) and `golem models` silent about it."""
    (tmp_path / "config.toml").write_text('modle = "offline:echo"\n')
    done = run(tmp_path)
    assert done.returncode == 0
    assert "default model: offline:echo (nothing configured)" in done.stdout
    assert "unknown setting(s) modle (did you mean model?) ignored" in done.stdout
    assert json.loads(run(tmp_path, "--json").stdout)["unknownKeys"] == ["modle"]
    ask = golem_main("ask", "hi")
    assert ask.code == 2 and ask.out == ""
    (line,) = ask.err.splitlines()
    assert line.startswith("golem: no model configured") and "modle (did you mean model?) ignored" in line


def test_ask_continuing_says_why_the_conversations_model_is_not_used(golem_main, tmp_path, monkeypatch):
    """`golem ask -c` on a conversation whose provider is no longer configured, with no default:
    the refusal used to say only "no model configured", as if the conversation had no model."""
    from golem_cli.core.messages import Message
    from golem_cli.store import Store

    Store(tmp_path).create([Message("user", "hi"), Message("assistant", "hello")], model="gone:echo")
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path))
    ask = golem_main("ask", "-c", "again")
    assert ask.code == 2 and ask.out == ""
    (line,) = ask.err.splitlines()
    assert line.startswith("golem: this conversation's model gone:echo is not available (unknown provider 'gone'")
    assert "no model configured" in line
