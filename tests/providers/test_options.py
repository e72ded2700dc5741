"""Model options: typed and bounded where they are set, spelled as each API wants them, refused
before sending when a provider has no place for them, and every body valid for the SDK types."""

from __future__ import annotations

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelSettings
from golem_cli.providers.options import settings_from
from golem_cli.providers.resolve import resolve

from tests.providers.helpers import complete, make_model, model_tables, prompt, provider_tables, stream
from tests.providerserver import ProviderServer


def test_values_from_the_command_line_are_typed_and_bounded() -> None:
    settings = settings_from([("temperature", "0.2"), ("max_tokens", "300"), ("stop", "END"), ("stop", "###"),
                              ("seed", "-7"), ("reasoning_effort", "high"), ("top_p", "1")])  # fmt: skip
    assert settings == ModelSettings(max_tokens=300, temperature=0.2, top_p=1.0, seed=-7, stop=("END", "###"), reasoning_effort="high")


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("temperature", "warm", "is not a number from 0 to 2"), ("temperature", "2.5", "from 0 to 2"),
        ("temperature", "nan", "number"), ("max_tokens", "1.5", "whole number from 1 to 2147483647"),
        ("max_tokens", str(2**31), "from 1 to 2147483647"), ("seed", str(2**63), "from -9223372036854775808 to 9223372036854775807"),
        ("seed", "9" * 5000, "is not a whole number"), ("thinking_budget", 2**40, "from 1024 to 2147483647"),
        ("max_tokens", "0", "from 1 to"), ("max_tokens", True, "whole number"), ("top_p", 0.5j, "number"),
        ("reasoning_effort", "extreme", "one of none, minimal, low"), ("thinking_budget", "512", "from 1024 to"),
        ("stop", "", "a text"), ("colour", "red", "unknown model option 'colour'"),
    ],
)  # fmt: skip
def test_ill_typed_or_unknown_options_are_refused_with_what_they_take(key: str, value: object, says: str) -> None:
    with pytest.raises(ModelError) as caught:
        settings_from([(key, value)], "on the command line")
    assert says in str(caught.value) and "on the command line" in str(caught.value) and caught.value.hint
    assert len(str(caught.value)) < 200  # a long value is not repeated whole


def test_a_number_out_of_range_is_said_so_and_a_typo_is_named() -> None:
    """``-o temperature 3`` said "temperature = '3' … is not a number from 0 to 2" (3 is a
    number); ``-o temprature`` gave no "did you mean temperature"."""
    with pytest.raises(ModelError) as caught:
        settings_from([("temperature", "3")], "given with -o")
    assert str(caught.value) == "option temperature = 3 given with -o is out of range: it takes a number from 0 to 2"
    with pytest.raises(ModelError, match=r"unknown model option 'temprature' given with -o \(did you mean temperature\?\)"):
        settings_from([("temprature", "0.2")], "given with -o")


def test_toml_values_must_have_the_type_already() -> None:
    assert settings_from([("max_tokens", 100), ("temperature", 1), ("stop", ["a", "b"])]) == ModelSettings(
        max_tokens=100, temperature=1.0, stop=("a", "b"))
    with pytest.raises(ModelError):
        settings_from([("max_tokens", 100.0)])


@pytest.mark.parametrize(("model", "key"), [("gpt-4o-mini", "max_tokens"), ("o3-mini", "max_completion_tokens"),
                                            ("o1", "max_completion_tokens"), ("gpt-5-nano", "max_completion_tokens"),
                                            ("gpt-5", "max_completion_tokens"), ("llama-o1x", "max_tokens")])  # fmt: skip
def test_openai_reasoning_models_get_max_completion_tokens(server: ProviderServer, model: str, key: str) -> None:
    settings = ModelSettings(max_tokens=50, temperature=0.3, seed=4, stop=("END",), reasoning_effort="low")
    complete(make_model("openai", server, model=model), prompt_with(settings))
    body = server.requests[-1].json
    other = "max_tokens" if key == "max_completion_tokens" else "max_completion_tokens"
    assert body[key] == 50 and other not in body
    assert (body["temperature"], body["seed"], body["stop"], body["reasoning_effort"]) == (0.3, 4, ["END"], "low")
    assert server.sdk_rejections == []


def prompt_with(settings: ModelSettings):  # type: ignore[no-untyped-def]
    import msgspec

    return msgspec.structs.replace(prompt(), settings=settings)


def test_anthropic_options_on_its_wire(server: ProviderServer) -> None:
    settings = ModelSettings(temperature=0.5, stop=("END",), thinking_budget=2048, reasoning_effort="high")
    assert stream(make_model("anthropic", server), prompt_with(settings)).error is None
    body = server.requests[-1].json
    assert body["max_tokens"] == 8192 and body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert (body["stop_sequences"], body["output_config"], body["temperature"]) == (["END"], {"effort": "high"}, 0.5)
    complete(make_model("anthropic", server), prompt_with(ModelSettings(thinking_budget=10000)))
    assert server.requests[-1].json["max_tokens"] == 10000 + 8192  # room for the thinking and a reply
    assert server.sdk_rejections == []


@pytest.mark.parametrize(
    ("kind", "settings", "says"),
    [
        ("openai", ModelSettings(thinking_budget=2048), "thinking_budget is an option of Anthropic models"),
        ("anthropic", ModelSettings(seed=1), "seed is not an option of Anthropic models"),
        ("anthropic", ModelSettings(temperature=1.5), "above 1"),
        ("anthropic", ModelSettings(reasoning_effort="minimal"), "not one Anthropic models take"),
        ("anthropic", ModelSettings(max_tokens=2000, thinking_budget=4000), "must be below max_tokens 2000"),
    ],
)
def test_options_a_provider_cannot_take_are_refused_before_sending(server: ProviderServer, kind: str, settings: ModelSettings, says: str) -> None:
    error = complete(make_model(kind, server), prompt_with(settings))
    assert isinstance(error, ModelError) and says in str(error) and error.hint
    assert server.requests == []
    with pytest.raises(ModelError):
        make_model(kind, server).check_settings(settings)


def test_options_from_the_provider_table_and_the_model_table(server: ProviderServer) -> None:
    providers = {"local": {"base_url": server.openai_base_url, "api_key": "sk-test", "temperature": 0.1, "max_tokens": 99}}
    models = {"local:m": {"temperature": 0.7, "stop": ["x"]}}
    model = resolve("local:m", providers=provider_tables(providers), models=model_tables(models), env={})
    assert model.defaults == ModelSettings(max_tokens=99, temperature=0.7, stop=("x",))  # type: ignore[attr-defined]
    complete(model, prompt_with(ModelSettings(temperature=0.0)))  # the request's own settings win
    assert (server.requests[-1].json["temperature"], server.requests[-1].json["max_tokens"]) == (0.0, 99)
    with pytest.raises(ModelError) as caught:
        resolve("local:m", providers=provider_tables(providers), models=model_tables({"local:m": {"temperature": "hot"}}), env={})
    assert '[models."local:m"]' in str(caught.value)
    with pytest.raises(ModelError) as caught:
        resolve("local:m", providers=provider_tables({"local": {**providers["local"], "thinking_budget": 2000}}), env={})
    assert "thinking_budget is an option of Anthropic models" in str(caught.value)
    with pytest.raises(ModelError) as caught:  # a typo is not ignored without a word
        resolve("local:m", providers=provider_tables({"local": {**providers["local"], "temprature": 0.2}}), env={})
    assert "unknown key 'temprature' in [providers.local]" in str(caught.value) and "temperature" in caught.value.hint
