"""What golem knows about a built-in provider before reading any configuration.

Each protocol package (``openai``, ``anthropic``) declares the facts of its own service next to
the adapter that speaks it; ``presets`` lists the OpenAI-compatible services. ``resolve`` only
reads these facts, so adding a service is one line of a table, not a new code path. Nothing here
imports httpx: ``golem models`` and the default-model choice read facts without loading the
HTTP stack.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from golem_cli.core.model import Model, ModelSettings


class ProviderFacts(Struct, frozen=True, kw_only=True):
    """One provider as golem knows it out of the box.

    ``protocol`` names the adapter that speaks to it (``openai`` or ``anthropic``);
    ``key_env`` is the environment variable holding the key (``""``: no key needed);
    ``base_url_env`` the variable that moves the endpoint; ``default_model`` what golem picks
    when this provider's key is the one that is set.
    """

    name: str
    protocol: str
    base_url: str
    key_env: str = ""
    base_url_env: str = ""
    default_model: str = ""
    #: Turns the value of ``base_url_env`` into a base URL (Ollama's ``OLLAMA_HOST`` is a host).
    read_base_url_env: Callable[[str], str] | None = None
    #: The adapter class as ``module:Class`` (protocol packages only), imported on first use.
    adapter: str = ""
    #: The function that refuses options the protocol cannot take, as ``module:function``
    #: (protocol packages only): it checks a chat's options before the adapter is imported.
    settings_check: str = ""
    #: Azure OpenAI's shape: the model name is a deployment
    #: (``{base}/openai/deployments/{model}/chat/completions?api-version=…``) and the key goes
    #: in an ``api-key`` header.
    azure: bool = False
    #: The endpoint documents ``prompt_cache_key`` (OpenAI, Azure OpenAI): golem sends it
    #: without being told (docs/adr/0024).
    prompt_cache_key: bool = False


def load_settings_check(facts: ProviderFacts) -> Callable[[ModelSettings], None]:
    """The protocol's options check (in its package: neither the wire module nor the HTTP stack)."""
    module, _, name = facts.settings_check.partition(":")
    check: Callable[[ModelSettings], None] = getattr(importlib.import_module(module), name)
    return check


def load_adapter(facts: ProviderFacts) -> Callable[..., Model]:
    """The adapter class a protocol's facts name (this is where the HTTP stack gets imported)."""
    module, _, name = facts.adapter.partition(":")
    cls: Callable[..., Model] = getattr(importlib.import_module(module), name)
    return cls
