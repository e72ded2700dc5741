"""The run loop behind ``Agent``: model turn, tool batch, repeat (Go ``internal/runner``).

Kept apart from ``agent.py`` so that file reads as the public contract (preparation, identity,
request assembly) and this one as the mechanics: model turns with retries and streaming,
usage bounds, the optional output validator. The loop reads only its ``RunConfig``, never the
agent. Tool batches are ``_batch.py``; the run's state and the evidence a failure leaves are
``_state.py``; the retry policy is ``retry.py``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

from golem_cli.core._batch import run_batch
from golem_cli.core._state import RunState, cut_message, interruption
from golem_cli.core.errors import GolemError, ModelError, RunError, UsageLimitError
from golem_cli.core.messages import USER, Message
from golem_cli.core.model import ModelRequest, ModelResponse, ResponseAccumulator, StreamEvent, TextDelta
from golem_cli.core.retry import policy_for
from golem_cli.core.runconfig import RunConfig, RunHooks
from golem_cli.core.tools import ModelRetry

# --- the loop ---------------------------------------------------------------------------------


class Loop:
    """Drives one run configured by ``config`` over ``state`` (streamed when ``stream`` is true)."""

    def __init__(self, config: RunConfig, state: RunState, hooks: RunHooks, *, stream: bool) -> None:
        self.config, self.state, self.hooks, self.stream = config, state, hooks, stream
        self.definitions = config.tool_definitions()
        self.retry = config.retry or policy_for(config.model)

    async def run(self) -> tuple[ModelResponse, Any]:
        """Turns until a reply without tool calls; returns it and the decoded output.

        Failures the steps below did not classify (a callback raising, Ctrl-C between
        steps) surface at the ``model`` stage, Go's stage for unclassified errors.
        """
        try:
            return await self._turns()
        except RunError:
            raise
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            raise self.state.fail("model", interruption(exc), interrupted=True) from exc
        except Exception as exc:
            raise self.state.fail("model", exc) from exc

    async def _turns(self) -> tuple[ModelResponse, Any]:
        config, state = self.config, self.state
        corrections = 0
        turn = 0
        while True:
            if turn >= config.max_turns:
                raise state.fail("loop", f"runner: model turn limit exceeded after {config.max_turns} turns")
            request = ModelRequest(
                messages=list(state.messages),
                tools=self.definitions,
                settings=config.settings,
                cache_key=config.cache_key,
            )
            self._check_request_size(request)
            response = await self._model_turn(request)
            state.finish_reason = response.finish_reason
            state.usage = state.usage + response.usage
            state.messages.append(state.stamp(response.message))
            self._check_limits()
            calls = response.message.tool_calls
            if not calls:
                try:
                    return response, await self._decode(response)
                except ModelRetry as rejection:
                    if corrections >= config.output_retries:
                        raise self._decode_failure(rejection, corrections) from rejection
                    corrections += 1
                    state.messages.append(
                        state.stamp(
                            Message(
                                role=USER,
                                content=f"Your previous response was rejected: {rejection.reason}. "
                                "Correct it and respond again.",
                            )
                        )
                    )
                    turn = 0  # a correction round restarts the loop, as in Go
                    continue
                except Exception as exc:
                    raise self._decode_failure(exc, corrections) from exc
            await self.hooks.record(state.messages[state.prompt_index :])
            await run_batch(config, state, calls, self.hooks)
            await self.hooks.record(state.messages[state.prompt_index :])
            self._check_limits()
            turn += 1

    # --- model ---------------------------------------------------------------------------

    async def _model_turn(self, request: ModelRequest) -> ModelResponse:
        """One model turn under the retry policy (``core.retry``, the only place a model call
        is sent again); every failure becomes a RunError."""
        config, state = self.config, self.state
        attempt = 0
        while True:
            attempt += 1
            state.requests += 1
            acc = ResponseAccumulator()
            try:
                if self.stream:
                    return await self._stream_once(request, acc)
                return await config.model.request(request)
            except (asyncio.CancelledError, KeyboardInterrupt) as exc:
                raise state.fail("model", interruption(exc), interrupted=True, cut=cut_message(acc)) from exc
            except Exception as exc:
                delay = self.retry.delay(attempt, exc, started=not acc.is_empty())
                if delay is not None:
                    try:
                        if delay > 0:
                            await asyncio.sleep(delay)
                    except (asyncio.CancelledError, KeyboardInterrupt) as stop:
                        raise state.fail("model", interruption(stop), interrupted=True) from stop
                    continue
                error: BaseException = _retried(exc, attempt) if attempt > 1 else exc
                raise state.fail("model", error, cut=cut_message(acc)) from exc

    async def _stream_once(self, request: ModelRequest, acc: ResponseAccumulator) -> ModelResponse:
        stream_method = getattr(self.config.model, "stream", None)
        events: AsyncIterator[StreamEvent] = stream_method(request)  # type: ignore[misc]
        try:
            async for event in events:
                acc.add(event)
                await self.hooks.event(event)
                if isinstance(event, TextDelta) and event.text:
                    await self.hooks.delta(event.text)
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    pass
        if acc.done is None:
            raise ModelError("model: stream ended before the response was complete")
        return acc.done

    def _check_request_size(self, request: ModelRequest) -> None:
        """The pre-send per-request bound (needs the configured token counter)."""
        limit = self.config.usage_limits.per_request_input_tokens if self.config.usage_limits else 0
        counter = self.config.token_counter
        if not limit or counter is None:
            return
        try:
            count = counter.count(request.messages)
        except Exception as exc:
            raise self.state.fail("model", f"golem: token count failed before request: {exc}") from exc
        if count > limit:
            raise self.state.fail("usage", UsageLimitError("per-request input token", limit, count))

    def _check_limits(self) -> None:
        limits, state = self.config.usage_limits, self.state
        crossed = limits.crossed(state.usage, state.requests, state.tool_calls) if limits else None
        if crossed is not None:
            raise state.fail("usage", UsageLimitError(*crossed))

    async def _decode(self, response: ModelResponse) -> Any:
        validator = self.config.output_validator
        if validator is None:
            return response.message.content
        value = validator(response.message.content)
        return await value if inspect.isawaitable(value) else value

    def _decode_failure(self, exc: BaseException, corrections: int) -> RunError:
        if corrections > 0:
            return self.state.fail("decode", f"golem: output failed validation after {corrections + 1} attempts: {exc}")
        return self.state.fail("decode", exc)


def _retried(exc: Exception, attempts: int) -> Exception:
    """Go's ``runner: model failed after <n> attempts: <err>``, keeping ModelError details."""
    if isinstance(exc, ModelError):
        wrapped: Exception = ModelError(
            exc.message,
            status=exc.status,
            hint=exc.hint,
            retryable=exc.retryable,
            retry_after=exc.retry_after,
            attempts=attempts,
        )
    else:
        wrapped = GolemError(f"runner: model failed after {attempts} attempts: {exc}")
    wrapped.__cause__ = exc
    return wrapped
