"""The one retry policy: which failures are sent again, and how long it waits in between."""

from __future__ import annotations

import pytest
from golem_cli.core.errors import ModelError
from golem_cli.core.offline import EchoModel
from golem_cli.core.retry import RetryPolicy, policy_for

BUSY = ModelError("busy", status=503, retryable=True)


def test_backoff_is_exponential_with_jitter_and_capped():
    policy = RetryPolicy(max_attempts=20, backoff_base=0.5, backoff_max=4.0)
    for attempt, step in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (10, 4.0)]:
        waits = {policy.delay(attempt, BUSY) for _ in range(50)}
        assert all(w is not None and step / 2 <= w <= step for w in waits) and len(waits) > 1


def test_what_the_provider_asked_for_is_honoured_up_to_a_bound():
    policy = RetryPolicy(max_attempts=3, max_retry_after=60)
    assert policy.delay(1, ModelError("slow down", status=429, retryable=True, retry_after=12.0)) == 12.0
    assert policy.delay(1, ModelError("slow down", status=429, retryable=True, retry_after=0.0)) == 0.0
    assert policy.delay(1, ModelError("come back tomorrow", retryable=True, retry_after=3600)) is None


@pytest.mark.parametrize(
    ("attempt", "error", "started"),
    [
        (3, BUSY, False),  # attempts used up
        (1, ModelError("bad request", status=400), False),  # the adapter says it would fail again
        (1, ValueError("not a model error"), False),
        (1, BUSY, True),  # part of a streamed reply arrived: a retry would replay it
    ],
)
def test_what_is_never_sent_again(attempt, error, started):
    assert RetryPolicy(max_attempts=3).delay(attempt, error, started=started) is None


def test_one_attempt_is_the_default_and_the_bounds_are_checked():
    assert RetryPolicy().delay(1, BUSY) is None
    with pytest.raises(ValueError, match="max attempts must be at least 1, got 0"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="must not be negative"):
        RetryPolicy(backoff_base=-1)


def test_a_model_may_declare_its_policy():
    class Configured(EchoModel):
        retry_policy = RetryPolicy(max_attempts=5)

    assert policy_for(Configured()).max_attempts == 5
    assert policy_for(EchoModel()) == RetryPolicy()
