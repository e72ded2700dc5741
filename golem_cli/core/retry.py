"""golem's one retry policy: when a failed model call is sent again, and after how long.

Who does what (as in Go golem's ADR 0004, "adapters classify, the runner decides"):

* an adapter makes exactly one attempt per call and classifies its failure on the
  ``ModelError`` it raises: ``retryable`` (a 429, a 5xx, a connection that failed before any
  byte of the reply) and ``retry_after`` (what the provider asked for: ``Retry-After``);
* the run loop (``_run.Loop._model_turn``) is the only place that retries. It asks
  ``RetryPolicy.delay`` after each failed attempt, and retries a streamed turn only while
  nothing of it has arrived, so a retry never replays text the caller has already shown;
* tool executions and output validation are never retried by this policy.

The policy a run uses is its agent's ``RunConfig.retry`` or, when that is None, the one its
model declares as ``retry_policy`` (an HTTP adapter's comes from the provider's
``max_retries`` in the config file); a model that declares none gets a single attempt.
"""

from __future__ import annotations

import random

from msgspec import Struct

from golem_cli.core.errors import ModelError

__all__ = ["RetryPolicy"]


class RetryPolicy(Struct, frozen=True, kw_only=True):
    """``max_attempts`` bounds the calls of one model turn, the first included (1: never
    retry). Between attempts the policy waits what the provider asked for, or else
    ``backoff_base`` doubling per failed attempt, capped at ``backoff_max``, with jitter (half
    to all of the step) so that clients spread out. A provider asking for more than
    ``max_retry_after`` seconds is not retried: the error is reported at once."""

    max_attempts: int = 1
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"golem: max attempts must be at least 1, got {self.max_attempts}")
        if min(self.backoff_base, self.backoff_max, self.max_retry_after) < 0:
            raise ValueError(f"golem: retry waits must not be negative, got {self}")

    def delay(self, attempt: int, error: BaseException, *, started: bool = False) -> float | None:
        """Seconds to wait before sending the call again after failed attempt ``attempt``
        (1-based), or None when it must not be sent again: attempts are used up, the error
        is not a retryable ``ModelError``, part of the reply had ``started`` to arrive, or
        the provider asked for a longer wait than ``max_retry_after``."""
        if attempt >= self.max_attempts or started:
            return None
        if not isinstance(error, ModelError) or not error.retryable:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        step = min(self.backoff_max, self.backoff_base * 2.0 ** (attempt - 1))
        return step * random.uniform(0.5, 1.0)


def policy_for(model: object) -> RetryPolicy:
    """The policy a model declares (``retry_policy``), else a single attempt (Go's default)."""
    declared = getattr(model, "retry_policy", None)
    return declared if isinstance(declared, RetryPolicy) else RetryPolicy()
