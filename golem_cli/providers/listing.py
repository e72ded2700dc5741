"""The models a provider's endpoint serves: ``GET {base_url}/models`` (OpenAI-compatible
services and gateways such as LiteLLM or OpenRouter) or ``GET {base_url}/v1/models``
(Anthropic), with each model's context window where the listing says it.

The answer is a stranger's: read at most ``MAX_LISTING_BYTES``, redirects not followed (the
key must not travel), and only the fields golem shows are taken from it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from msgspec import Struct

from golem_cli.config.schema import ProviderTable
from golem_cli.core.errors import ModelError
from golem_cli.providers._endpoint import join_path
from golem_cli.providers.keys import api_key, is_azure
from golem_cli.providers.resolve import _base_url, _protocol, _table

MAX_LISTING_BYTES = 8 * 2**20
MAX_LISTED = 5000
TIMEOUT = 30.0
#: Where listings put a model's context window: OpenRouter, Anthropic-shaped gateways, vLLM,
#: LiteLLM's model info, others.
CONTEXT_KEYS = ("context_length", "context_window", "max_model_len", "max_input_tokens", "max_context_length")


class ServedModel(Struct, frozen=True, kw_only=True):
    """One model of a listing; ``context_window`` in tokens, when the listing says it."""

    id: str
    context_window: int | None

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "contextWindow": self.context_window}


def served_models(
    provider: str, providers: Mapping[str, ProviderTable], env: Mapping[str, str]
) -> tuple[str, list[ServedModel]]:
    """(the listing's URL, the models it names); ``ModelError`` in one line when the provider
    is not configured, lists nothing, or its answer is not a listing."""
    if provider == "offline":
        return "", [ServedModel(id="echo", context_window=None)]
    table, facts = _table(provider, f"{provider}:", providers)
    kind = _protocol(provider, table, facts)
    if is_azure(table, facts):
        raise ModelError(f"provider {provider!r} is Azure OpenAI, whose deployments golem cannot list",
                         hint="the Azure portal lists your deployments; use one as azure:DEPLOYMENT")  # fmt: skip
    key, _ = api_key(provider, kind, table, facts, env)
    base = _base_url(provider, kind, table, facts, env)
    url = join_path(base, "/v1/models" if kind == "anthropic" else "/models")
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"} if kind == "anthropic" else {}
    if key and kind != "anthropic":
        headers["authorization"] = f"Bearer {key}"
    return url, parse_listing(_get(url, headers, key), url)


def _get(url: str, headers: dict[str, str], secret: str) -> bytes:
    import httpx

    body = bytearray()
    try:
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False) as client:
            with client.stream("GET", url, headers=headers) as r:
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > MAX_LISTING_BYTES:
                        raise ModelError(f"{url} answered more than {MAX_LISTING_BYTES // 2**20} MB: not a listing")
                status = r.status_code
    except httpx.HTTPError as e:
        raise ModelError(f"cannot reach {url}: {str(e).replace(secret, '***') if secret else e}") from None
    if status != 200:
        hint = "an OpenAI-compatible server lists them at GET /models; check base_url and the key"
        raise ModelError(f"{url} answered HTTP {status}: this endpoint lists no models", hint=hint)
    return bytes(body)


def parse_listing(body: bytes, url: str) -> list[ServedModel]:
    """The models of a listing (``{"data": [{"id": ...}, ...]}``, or a bare array), sorted."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise ModelError(f"{url} did not answer JSON: not a model listing") from None
    items = doc.get("data", doc.get("models")) if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise ModelError(f"{url} answered JSON without a list of models")
    found = {}
    for item in items[:MAX_LISTED]:
        name = item.get("id", item.get("name")) if isinstance(item, dict) else None
        if isinstance(name, str) and name:
            found[name] = ServedModel(id=name, context_window=_context(item))
    return sorted(found.values(), key=lambda m: m.id)


def _context(item: dict[str, object]) -> int | None:
    for key in CONTEXT_KEYS:
        value = item.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
