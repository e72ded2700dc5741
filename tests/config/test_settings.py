"""config.toml and GOLEM_MODEL."""

from __future__ import annotations

import pytest
from golem_cli.config.schema import ModelTable, ProviderTable
from golem_cli.config.settings import ConfigError, Settings, load_settings
from golem_cli.core.errors import GolemError


def write(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_gives_defaults(tmp_path):
    s = load_settings(tmp_path / "config.toml", env={})
    assert s == Settings()
    assert s.model is None and s.max_messages == 20 and s.source is None
    assert s.tool_output_limit == 30_000 and s.command_timeout == 120.0 and s.providers == {} and s.mcp_servers == {}


def test_reads_model_max_messages_and_provider_tables(tmp_path):
    path = write(
        tmp_path,
        'model = "openai:gpt-4o-mini"\nmax_messages = 40\n\n'
        '[providers.openai]\nbase_url = "http://localhost:11434/v1"\ntimeout = 30\n\n'
        '[providers.anthropic]\napi_key_env = "MY_KEY"\n',
    )
    s = load_settings(path, env={})
    assert s.model == "openai:gpt-4o-mini"
    assert s.max_messages == 40
    assert s.providers == {
        "openai": ProviderTable(base_url="http://localhost:11434/v1", timeout=30.0),
        "anthropic": ProviderTable(api_key_env="MY_KEY"),
    }
    assert s.source == path
    assert s.unknown_keys == ()


def test_environment_model_overrides_the_file(tmp_path):
    path = write(tmp_path, 'model = "openai:a"\nmax_messages = 7\n')
    s = load_settings(path, env={"GOLEM_MODEL": "anthropic:b"})
    assert s.model == "anthropic:b" and s.max_messages == 7
    assert load_settings(tmp_path / "none.toml", env={"GOLEM_MODEL": "x:y"}).model == "x:y"
    assert load_settings(path, env={"GOLEM_MODEL": "  "}).model == "openai:a"


def test_default_path_follows_golem_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLEM_HOME", str(tmp_path))
    monkeypatch.delenv("GOLEM_MODEL", raising=False)
    write(tmp_path, 'model = "openai:from-home"\n')
    assert load_settings().model == "openai:from-home"


def test_invalid_toml_names_file_and_line(tmp_path):
    path = write(tmp_path, 'model = "a"\nmax_messages = \n')
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert str(path) in str(info.value) and "line 2" in str(info.value)
    assert isinstance(info.value, GolemError)


@pytest.mark.parametrize(
    "text, message",
    [
        ("model = 5\n", 'model must be a "provider:model" name like "openai:gpt-4o-mini", not 5'),
        ('model = " "\n', 'model must be a "provider:model" name like "openai:gpt-4o-mini", not " "'),
        ("max_messages = 0\n", "max_messages must be a whole number of at least 1, not 0"),
        ("max_messages = true\n", "max_messages must be a whole number of at least 1, not true"),
        ('max_messages = "20"\n', 'max_messages must be a whole number of at least 1, not "20"'),
        ('providers = "openai"\n', 'providers must be a table of [providers.NAME] tables, not "openai"'),
        ("[providers]\nopenai = 1\n", "providers.openai must be a table, not 1"),
        ("[providers.local]\ntimeout = -5\n", "providers.local.timeout must be a number of seconds above 0, not -5"),
        ('[providers.x]\ntype = "html"\n',
         'providers.x.type must be "openai" (any OpenAI-compatible server), "anthropic" or "azure", not "html"'),
        ("[providers.x]\nmax_retries = 1.5\napi_key = 3\n",
         "providers.x.api_key must be a string, not 3 (and 1 more)"),
    ],
)  # fmt: skip
def test_wrong_values_are_refused_naming_file_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={})
    assert str(info.value) == f"{path}: {message}"


def test_model_options_are_kept_for_the_provider_layer(tmp_path):
    """Keys a provider table does not declare are its model options (or typos), checked by the
    provider layer when the provider is used; a model table holds nothing else."""
    path = write(tmp_path, '[providers.local]\nbase_url = "http://h/v1"\ntemperature = 0.2\ntemprature = 1\n'
                           '[models."local:m"]\nmax_tokens = 99\n')  # fmt: skip
    s = load_settings(path, env={})
    assert s.providers["local"].options == {"temperature": 0.2, "temprature": 1}
    assert s.models == {"local:m": ModelTable(options={"max_tokens": 99})}


def test_the_file_is_checked_at_every_start_without_pydantic(tmp_path):
    """No verdict is cached (ADR 0019): a broken file fails every time, and reading the file
    imports nothing but the TOML parser and msgspec (already loaded by the core)."""
    import subprocess
    import sys

    code = (
        "import sys; from golem_cli.config.settings import load_settings\n"
        "try: print(load_settings().max_messages, sorted(m for m in ('pydantic', 'hashlib') if m in sys.modules))\n"
        "except Exception as e: print(e)"
    )

    def load() -> str:
        env = {"GOLEM_HOME": str(tmp_path), "PATH": ""}
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.strip()

    assert load() == "20 []"  # no file
    path = write(tmp_path, "max_messages = 7\n")
    assert load() == load() == "7 []"
    path.write_text("max_messages = 0\n")
    assert load() == load() == f"{path}: max_messages must be a whole number of at least 1, not 0"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # nothing written beside it


def test_not_utf8_is_a_config_error(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings(path, env={})


def test_unknown_keys_are_kept_for_a_warning(tmp_path):
    s = load_settings(write(tmp_path, 'modle = "typo"\nmodel = "a:b"\n'), env={})
    assert s.unknown_keys == ("modle",) and s.model == "a:b"
