"""config.toml and GOLEM_MODEL."""

from __future__ import annotations

import pytest
from golem_cli.config.settings import DEFAULT_MAX_MESSAGES, KNOWN_KEYS, ConfigError, Settings, load_settings
from golem_cli.core.errors import GolemError


def write(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_gives_defaults(tmp_path):
    s = load_settings(tmp_path / "config.toml", env={})
    assert s == Settings()
    assert s.model is None and s.max_messages == DEFAULT_MAX_MESSAGES and s.source is None


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
    assert s.provider("openai") == {"base_url": "http://localhost:11434/v1", "timeout": 30}
    assert s.provider("anthropic") == {"api_key_env": "MY_KEY"}
    assert s.provider("missing") == {}
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


def test_the_schema_knows_every_key_settings_reads():
    from golem_cli.config.schema import ConfigFile

    assert set(ConfigFile.model_fields) == KNOWN_KEYS


def _load_in_a_fresh_process(home) -> str:
    """Load the user's settings in a new interpreter; say whether pydantic was imported."""
    import subprocess
    import sys

    code = (
        "import sys; from golem_cli.config.settings import load_settings\n"
        "try: print(load_settings().max_messages, 'pydantic' in sys.modules)\n"
        "except Exception as e: print(e)"
    )
    env = {"GOLEM_HOME": str(home), "PATH": ""}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.strip()


def test_a_file_that_passed_is_not_checked_again_until_it_changes(tmp_path):
    path = write(tmp_path, "max_messages = 7\n")
    assert _load_in_a_fresh_process(tmp_path) == "7 True"
    assert _load_in_a_fresh_process(tmp_path) == "7 False"  # start-up does not pay for pydantic
    path.write_text("max_messages = 0\n")
    assert _load_in_a_fresh_process(tmp_path) == f"{path}: max_messages must be a whole number of at least 1, not 0"
    assert _load_in_a_fresh_process(tmp_path).endswith("not 0")  # a failure is never remembered
    path.write_text("max_messages = 8\n")
    assert _load_in_a_fresh_process(tmp_path) == "8 True"


def test_no_file_needs_no_check(tmp_path):
    assert _load_in_a_fresh_process(tmp_path) == "20 False"


def test_not_utf8_is_a_config_error(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings(path, env={})


def test_unknown_keys_are_kept_for_a_warning(tmp_path):
    s = load_settings(write(tmp_path, 'modle = "typo"\nmodel = "a:b"\n'), env={})
    assert s.unknown_keys == ("modle",) and s.model == "a:b"
