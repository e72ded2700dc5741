"""The official SDKs' request types as schema oracles: every request body the tests produce is
validated against them, through pydantic's ``TypeAdapter``.

``openai`` and ``anthropic`` are test dependencies only (golem talks over httpx). pydantic
checks ``Iterable`` fields lazily, so the validated result is walked to the last leaf; a body
that only looks valid until its messages are iterated is caught too. ``COUNTS`` keeps how many
bodies were validated, per protocol, for the summary line at the end of a test session.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

COUNTS: Counter[str] = Counter()
_lock = threading.Lock()


@cache
def _adapter(protocol: str, streaming: bool) -> TypeAdapter[Any]:
    if protocol == "openai":
        from openai.types.chat import completion_create_params as openai_params

        kind: Any = (
            openai_params.CompletionCreateParamsStreaming if streaming else openai_params.CompletionCreateParamsNonStreaming
        )
    else:
        from anthropic.types import message_create_params as anthropic_params

        kind = anthropic_params.MessageCreateParamsStreaming if streaming else anthropic_params.MessageCreateParamsNonStreaming
    return TypeAdapter(kind)


def warm_up() -> None:
    """Import the SDK types and build the adapters now (about 2 s), not during a timed request."""
    for protocol in ("openai", "anthropic"):
        for streaming in (True, False):
            _adapter(protocol, streaming)


def _walk(value: Any) -> None:
    """Touch every leaf, so that lazily validated iterables raise their errors now."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return
    if isinstance(value, Mapping):
        for item in value.values():
            _walk(item)
        return
    for item in value:  # lists, tuples and pydantic's ValidatorIterator
        _walk(item)


def sdk_problem(protocol: str, body: Any) -> str | None:
    """Why ``body`` is not a valid request of ``protocol`` (``openai``/``anthropic``) for the
    SDK's request type, or None. Every call counts one validated body."""
    streaming = isinstance(body, dict) and body.get("stream") is True
    with _lock:
        COUNTS[protocol] += 1
    try:
        _walk(_adapter(protocol, streaming).validate_python(body))
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        return f"{exc.error_count()} validation error(s) for the {protocol} SDK request type: {errors}"
    return None


def assert_valid(protocol: str, body: Any) -> None:
    """For tests that build bodies without the server: fail with the SDK's complaint."""
    problem = sdk_problem(protocol, body)
    assert problem is None, problem
