"""The run ledger: what each run of a conversation was, in its ``runs`` log beside the history
(``<id>.runs.jsonl``, the sidecars scheme), never in the history file, which stays Go's
``[]model.Message``.

A run writes two records, keyed by its run ID: ``run-start`` before its prompt is saved (kind,
provider, model, start time) and ``run-end`` when it is over (end time, requests, usage with
the cache and reasoning counts, finish reason, whether it failed or was stopped, its cost when
the price was known). Records are whole lines appended with ``O_APPEND``; a process killed
mid-write leaves a torn last line that readers skip and the next append ends first, so the log
always reads. Reading folds the records of one run ID in file order (``fold``): a run with a
start and no end is one a killed process never finished. A record of another event (a newer
golem's, the tool-call records of issue 24) or a damaged line is skipped: a damaged or missing
ledger leaves the conversation loadable with less to say.

Totals count each run ID once (``totals``): a fork copies the records of the runs it copies,
so the same run appears in both ledgers.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec import Struct, field

from golem_cli.core.usage import Usage
from golem_cli.store.sidecars import RUNS, VERSION, Appender, decode_records, encode_record, read_log

if TYPE_CHECKING:
    from golem_cli.store.store import Store

__all__ = ["KINDS", "Ledger", "Run", "RunEnded", "RunStarted", "Totals", "fold", "read_runs", "totals"]

#: What a run was: a chat turn, a ``/retry`` of one, (later) a compaction.
KINDS = ("turn", "retry", "compact")


class RunStarted(msgspec.Struct, kw_only=True, tag_field="event", tag="run-start"):
    v: int = VERSION
    key: str
    run: str
    kind: str = "turn"
    provider: str = ""
    model: str = ""
    started: float = 0.0


class RunEnded(msgspec.Struct, kw_only=True, tag_field="event", tag="run-end"):
    v: int = VERSION
    key: str
    run: str
    ended: float = 0.0
    requests: int = 0
    usage: dict[str, int] = {}
    finish_reason: str = ""
    failed: bool = False
    stopped: bool = False
    cost: float | None = None
    last_input_tokens: int = 0  # the provider's count of the input of the run's last request


Record = RunStarted | RunEnded


class Run(Struct, frozen=True, kw_only=True):
    """One run as its records tell it; ``ended`` is None for a run that never finished."""

    run_id: str
    kind: str = "turn"
    provider: str = ""
    model: str = ""
    started: float | None = None
    ended: float | None = None
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = ""
    failed: bool = False
    stopped: bool = False
    cost: float | None = None
    last_input_tokens: int = 0


def fold(records: Iterable[Record]) -> dict[str, Run]:
    """The runs ``records`` tell of, by run ID in the order they first appear; a later record
    of a run completes (or corrects) what an earlier one said."""
    runs: dict[str, Run] = {}
    for r in records:
        before = runs.get(r.run) or Run(run_id=r.run)
        if isinstance(r, RunStarted):
            runs[r.run] = msgspec.structs.replace(before, kind=r.kind, provider=r.provider, model=r.model,
                                              started=r.started)  # fmt: skip
        else:
            runs[r.run] = msgspec.structs.replace(
                before, ended=r.ended, requests=r.requests, usage=Usage.from_json(r.usage),
                finish_reason=r.finish_reason, failed=r.failed, stopped=r.stopped, cost=r.cost,
                last_input_tokens=r.last_input_tokens,
            )  # fmt: skip
    return runs


def read_runs(path: Path) -> dict[str, Run]:
    """The runs in the log at ``path``: none when it is missing, unreadable or damaged (what
    of it can be read is read)."""
    records: list[Record] = decode_records(read_log(path, RUNS).lines, Record)  # type: ignore[arg-type]
    return fold(records)


class Totals(Struct, frozen=True, kw_only=True):
    runs: int = 0
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    unpriced: int = 0  # runs with usage but no known price: their cost is not in ``cost``


def totals(runs: Iterable[Run]) -> Totals:
    """The sums over ``runs``, each run ID counted once (a fork's ledger repeats its parent's)."""
    seen: set[str] = set()
    count = requests = unpriced = 0
    usage, cost = Usage(), 0.0
    for run in runs:
        if run.run_id in seen:
            continue
        seen.add(run.run_id)
        count += 1
        requests += run.requests
        usage = usage + run.usage
        if run.cost is not None:
            cost += run.cost
        elif not run.usage.is_zero():
            unpriced += 1
    return Totals(runs=count, requests=requests, usage=usage, cost=cost, unpriced=unpriced)


class Ledger:
    """The runs log of one conversation as one process writes it (under the conversation's
    lock). Appends are not fsynced: the history file's save after each carries the turn, and a
    record lost to a power cut only says less. A log that cannot be written (a full disk,
    something planted at its path) never fails the turn: ``problem`` says why."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._appender = Appender(path, RUNS)
        self.problem = ""

    def started(self, run_id: str, *, kind: str, model: str, at: float | None = None) -> None:
        provider = model.partition(":")[0]
        self._append(RunStarted(key=run_id, run=run_id, kind=kind, provider=provider, model=model,
                                started=time.time() if at is None else at))  # fmt: skip

    def ended(
        self, run_id: str, *, usage: Usage, requests: int, finish_reason: str, failed: bool, stopped: bool,
        cost: float | None, last_input_tokens: int = 0, at: float | None = None,
    ) -> None:  # fmt: skip
        self._append(RunEnded(key=run_id, run=run_id, ended=time.time() if at is None else at, requests=requests,
                              usage=usage.to_json(), finish_reason=finish_reason, failed=failed, stopped=stopped,
                              cost=cost, last_input_tokens=last_input_tokens))  # fmt: skip

    def _append(self, record: Record) -> None:
        try:
            self._appender.append([encode_record(record)])
        except OSError as e:
            self.problem = f"{self.path}: {e.strerror or e}"


def runs_of(store: Store, cid: str) -> dict[str, Run]:
    """The runs of a stored conversation (none when its ledger is missing or damaged)."""
    return read_runs(store.sidecar_path(cid, RUNS))


def answered(runs: Mapping[str, Run]) -> dict[str, tuple[str, float | None]]:
    """Which model answered in each run, and when (its end, else its start): what transcripts
    show beside each reply."""
    return {rid: (run.model, run.ended or run.started) for rid, run in runs.items() if run.model}
