"""config.toml and GOLEM_MODEL."""

from __future__ import annotations

import pytest
from golem_cli.config.settings import DEFAULT_MAX_MESSAGES, ConfigError, Settings, load_settings
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
    "text, fragment",
    [
        ("model = 5\n", '"model"'),
        ('model = ""\n', '"model"'),
        ("max_messages = 0\n", '"max_messages"'),
        ("max_messages = true\n", '"max_messages"'),
        ('max_messages = "20"\n', '"max_messages"'),
        ('providers = "openai"\n', "[providers]"),
        ("[providers]\nopenai = 1\n", "providers.openai"),
    ],
)
def test_wrong_types_are_refused(tmp_path, text, fragment):
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, text), env={})
    assert fragment in str(info.value)


def test_not_utf8_is_a_config_error(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load_settings(path, env={})


def test_unknown_keys_are_kept_for_a_warning(tmp_path):
    s = load_settings(write(tmp_path, 'modle = "typo"\nmodel = "a:b"\n'), env={})
    assert s.unknown_keys == ("modle",) and s.model == "a:b"
