"""``resolve(..., lazy=True)``: a chat's model is chosen and checked at once, and its adapter
(the HTTP stack) is built on first use, so the prompt does not wait for httpx."""

from __future__ import annotations

import subprocess
import sys

import pytest
from golem_cli.config.schema import ProviderTable
from golem_cli.core.errors import ModelError
from golem_cli.core.model import ModelSettings
from golem_cli.providers.deferred import DeferredModel
from golem_cli.providers.openai.model import OpenAIModel
from golem_cli.providers.resolve import resolve

from tests.providers.helpers import complete, provider_tables, run, stream, through_agent
from tests.providerserver import ProviderServer, Reply, Scenario


def local(server: ProviderServer, **table: object) -> dict[str, ProviderTable] | None:
    return provider_tables({"local": {"base_url": server.openai_base_url, "api_key": "sk-test", **table}})


def test_choosing_a_model_lazily_imports_no_http_stack():
    code = ("import sys; from golem_cli.providers.resolve import resolve; "
            "m = resolve('openai:gpt-4o', env={'OPENAI_API_KEY': 'k'}, lazy=True); "
            "print(m.name, sorted(n for n in ('httpx', 'golem_cli.providers._http') if n in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "openai:gpt-4o []\n"


def test_the_offline_model_too_is_built_on_first_use():
    """A chat with no key checks ``offline:echo`` beside its prompt without loading the model
    (and the compaction marks and token estimates it answers with)."""
    code = ("import sys; from golem_cli.providers.resolve import resolve; "
            "m = resolve('offline:echo', lazy=True); print(type(m).__name__, 'golem_cli.core.offline' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "DeferredModel False\n"
    model = resolve("offline:echo", lazy=True)
    model.check_settings(ModelSettings(temperature=0.5, max_tokens=9))  # the echo model takes every option
    assert isinstance(model, DeferredModel) and not model.built
    reply = complete(model)
    assert model.built and reply.message.content.startswith("You said: ")
    with pytest.raises(ModelError, match="unknown offline model"):
        resolve("offline:parrot", lazy=True)


def test_the_same_checks_run_before_anything_is_built(server: ProviderServer):
    with pytest.raises(ModelError, match="no API key for provider 'openai'"):
        resolve("openai:gpt-4o", env={}, lazy=True)
    with pytest.raises(ModelError, match="thinking_budget is an option of Anthropic models"):
        resolve("local:m", providers=local(server, thinking_budget=2000), env={}, lazy=True)
    model = resolve("local:m", providers=local(server, max_tokens=99), env={}, lazy=True)
    assert isinstance(model, DeferredModel) and model.name == "local:m" and not model.built
    with pytest.raises(ModelError, match="thinking_budget"):
        model.check_settings(ModelSettings(thinking_budget=1000))  # -o, /option: refused unbuilt
    assert model.defaults == ModelSettings(max_tokens=99) and not model.built
    run(model.aclose())  # nothing was built, nothing to close
    assert not model.built


def test_the_first_use_builds_the_adapter_once_and_it_does_the_work(server: ProviderServer):
    server.enqueue(Scenario(reply=Reply(text="streamed")), Scenario(reply=Reply(text="whole")))
    model = resolve("local:m", providers=local(server, max_tokens=99, max_retries=1), env={}, lazy=True)
    assert model.retry_policy.max_attempts == 2 and model.built  # type: ignore[attr-defined]  # asking builds it
    adapter = model.prepare()  # type: ignore[attr-defined]
    assert isinstance(adapter, OpenAIModel) and model.prepare() is adapter  # type: ignore[attr-defined]
    assert stream(model).accumulator.text == "streamed"
    assert complete(model).message.content == "whole"
    assert server.requests[0].json["max_tokens"] == 99 and server.requests[0].json["model"] == "m"


def test_a_run_over_a_model_built_on_first_use(server: ProviderServer):
    server.enqueue(Scenario(reply=Reply(text="hello back")))
    model = resolve("local:m", providers=local(server), env={}, lazy=True)
    result = through_agent(model)
    assert not isinstance(result, Exception) and result.output == "hello back"
