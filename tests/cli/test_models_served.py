"""``golem models NAME``: the models a provider's endpoint serves (``GET /models``), with their
context windows where the listing says them; a gateway's listing (LiteLLM, OpenRouter) too."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import assert_one_line_error

LISTING = {"object": "list", "data": [
    {"id": "gpt-4o-mini", "object": "model", "owned_by": "openai"},
    {"id": "llama-3.3-70b", "object": "model", "context_length": 131072},
    {"id": "qwen", "max_model_len": 32768},
    {"id": 5}, "junk",
]}  # fmt: skip


@pytest.fixture
def gateway(home, server):
    home.mkdir()
    (home / "config.toml").write_text(
        f'[providers.gw]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n'
        f'[providers.bare]\nbase_url = "{server.url}/nothing"\napi_key = "sk-test"\n'
    )
    server.files["/v1/models"] = (json.dumps(LISTING).encode(), "application/json")
    return server


def test_lists_what_the_endpoint_serves_with_context_windows(golem_main, gateway):
    done = golem_main("models", "gw")
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == f"gw: 3 models ({gateway.openai_base_url}/models)"
    assert lines[1].split() == ["gw:gpt-4o-mini"]
    assert lines[2].split()[:2] == ["gw:llama-3.3-70b", "131,072"] and lines[3].split()[:2] == ["gw:qwen", "32,768"]
    request = [r for r in gateway.requests if r.path == "/v1/models"][-1]
    assert request.method == "GET" and request.headers["authorization"] == "Bearer sk-test"
    doc = json.loads(golem_main("models", "gw", "--json").out)
    assert doc["models"][1] == {"id": "llama-3.3-70b", "contextWindow": 131072}
    assert doc["models"][0] == {"id": "gpt-4o-mini", "contextWindow": None}


def test_an_endpoint_without_a_listing_is_one_line(golem_main, gateway):
    done = golem_main("models", "bare")
    assert done.code != 0 and "answered HTTP 404: this endpoint lists no models" in done.err
    assert_one_line_error(done)
    assert "sk-test" not in done.err


def test_aliases_stand_for_a_model_wherever_one_is_named(golem_main, home, server):
    home.mkdir()
    (home / "config.toml").write_text(
        f'model = "quick"\n[aliases]\nquick = "gw:echo"\nfast = "gw:gpt-fast"\n'
        f'[providers.gw]\nbase_url = "{server.openai_base_url}"\napi_key = "sk-test"\n'
    )
    done = golem_main("ask", "-m", "fast", "hello")
    assert done.code == 0, done.err
    assert server.requests[-1].json["model"] == "gpt-fast"
    assert json.loads(golem_main("ask", "--json", "hi").out)["model"] == "gw:echo"  # model = "quick"
    doc = json.loads(golem_main("models", "--json").out)
    assert doc["defaultModel"] == "gw:echo" and doc["aliases"] == {"quick": "gw:echo", "fast": "gw:gpt-fast"}
    assert "fast   gw:gpt-fast" in golem_main("models").out


@pytest.mark.parametrize(("table", "says"), [
    ('[aliases]\nfast = "no-provider"\n', 'aliases.fast must be a "provider:model" name'),
    ('[aliases]\n"a:b" = "gw:x"\n', "an alias is a name without ':'"),
])  # fmt: skip
def test_a_bad_alias_is_one_line_naming_it(golem_main, home, table, says):
    home.mkdir()
    (home / "config.toml").write_text(table)
    done = golem_main("ask", "-m", "offline:echo", "hi")
    assert done.code != 0 and says in done.err, done.err
    assert_one_line_error(done)
