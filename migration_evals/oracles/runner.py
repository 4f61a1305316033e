"""Running many changesets: parallel trials, one ledger append per trial, a budget.

The CLI and the bot both call ``Runner.run``; neither owns grading logic.
"""

from __future__ import annotations

import logging
import queue
import secrets
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from migration_evals.core.artifacts import ArtifactStore
from migration_evals.core.errors import StoreError
from migration_evals.core.ledger import Ledger
from migration_evals.core.liveness import Holder
from migration_evals.core.model import Changeset, Envelope, RunSummary, Tier, Trial, Verdict
from migration_evals.core.runs import Runs
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.cascade import (
    Budget,
    Carried,
    Cascade,
    TrialDeferredError,
    TrialRecord,
    trial_id,
)

__all__ = [
    "RunOutcome",
    "RunStatus",
    "Runner",
    "crashed_trial",
    "internal_error_trial",
    "new_run_id",
]

log = logging.getLogger(__name__)


class RunStatus(StrEnum):
    COMPLETED = "completed"
    STOPPED_BUDGET = "stopped: budget exhausted"
    INTERNAL_ERRORS = "completed with internal errors"
    # The run's one trial was put back (an outside API unavailable): its job runs again.
    DEFERRED = "deferred: an outside API was unavailable"


def new_run_id() -> str:
    return f"r-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


@dataclass
class RunOutcome:
    run_id: str
    trials: list[Trial]
    status: RunStatus
    not_started: int = 0
    internal_errors: list[str] = field(default_factory=list)

    def summary(self, tiers: Sequence[Tier]) -> RunSummary:
        return RunSummary.of(self.trials, tiers)


def internal_error_trial(
    specs: SpecSet,
    run_id: str,
    changeset: Changeset,
    reason: str,
    details: Mapping[str, Any] | None = None,
) -> Trial:
    """A trial whose grading could not finish: an infrastructure error on the first tier,
    the others skipped. Recorded like any trial, so nothing is lost and nothing counts."""
    stamps = specs.stamps_for(changeset.recipe)
    tid = trial_id(run_id, changeset.id)
    envelopes = []
    for index, tier in enumerate(spec.tier for spec in specs.oracle.tiers):
        verdict = Verdict.ERROR if index == 0 else Verdict.SKIPPED
        why = reason if index == 0 else "not reached"
        extra = dict(details or {}) if index == 0 else {}
        envelopes.append(
            Envelope(tid, changeset.id, tier, verdict, 0.0, 0.0, 0.0, stamps, why, details=extra)
        )
    return Trial(tid, run_id, changeset, tuple(envelopes))


def crashed_trial(cascade: Cascade, run_id: str, changeset: Changeset, exc: BaseException) -> Trial:
    """A trial whose grading crashed: recorded as an infrastructure error, never lost."""
    return internal_error_trial(
        cascade.specs,
        run_id,
        changeset,
        f"internal error: {type(exc).__name__}: {exc}",
        {"traceback": traceback.format_exception(exc)[-5:]},
    )


class _LedgerWriter:
    """Appends finished trials on its own thread, several per transaction (group commit).

    Grading the next trial overlaps with writing the last one; a trial counts as done
    (``on_written``) only once it is durably in the ledger. After the first trial of a
    batch the writer lingers briefly for more: a transaction costs several times what one
    more trial in it costs, and that cost is paid on the grading threads' interpreter.
    The artifacts the trials' envelopes name (their patches, their commands' outputs) are
    kept here too, just before the rows that name them: a trial waits for no file to be
    created, and a batch's go into one transaction where the store has them.
    """

    def __init__(
        self,
        ledger: Ledger,
        on_written: Callable[[Trial], None],
        max_batch: int = 64,
        linger_s: float = 0.05,
        *,
        artifacts: ArtifactStore | None = None,
    ):
        self.ledger = ledger
        self.on_written = on_written
        self.artifacts = artifacts
        self.max_batch = max_batch
        self.linger_s = linger_s
        self.error: BaseException | None = None
        self._queue: queue.Queue[TrialRecord | None] = queue.Queue()
        # Set when lingering should stop early (the run ended, or a batch is full); a put
        # otherwise wakes nobody, which keeps the grading threads' interpreter to themselves.
        self._hurry = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ledger-writer", daemon=True)

    def __enter__(self) -> _LedgerWriter:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._queue.put(None)
        self._hurry.set()
        self._thread.join()

    def put(self, record: TrialRecord) -> None:
        self._queue.put(record)
        if self._queue.qsize() >= self.max_batch:
            self._hurry.set()

    def _next_batch(self) -> tuple[list[TrialRecord], bool]:
        first = self._queue.get()
        if first is None:
            return [], True
        batch = [first]
        self._hurry.wait(self.linger_s)
        self._hurry.clear()
        while len(batch) < self.max_batch:
            try:
                record = self._queue.get_nowait()
            except queue.Empty:
                break
            if record is None:
                return batch, True
            batch.append(record)
        return batch, False

    def _loop(self) -> None:
        finished = False
        while not finished:
            batch, finished = self._next_batch()
            if not batch or self.error is not None:
                continue
            try:
                held = [found for record in batch for found in record.artifacts]
                if held and self.artifacts is not None:  # before the rows that name them
                    self.artifacts.keep(held)
                self.ledger.append_trials([(r.trial, r.cache_keys) for r in batch])
            except BaseException as exc:  # handed to the runner, which raises it
                self.error = exc
                continue
            for record in batch:
                self.on_written(record.trial)


class Runner:
    """Grades changesets through a cascade and appends every trial to the ledger, under a
    run recorded in ``runs``."""

    def __init__(
        self,
        cascade: Cascade,
        runs: Runs,
        ledger: Ledger,
        *,
        jobs: int = 1,
        on_trial: Callable[[Trial], None] | None = None,
    ) -> None:
        self.cascade = cascade
        self.runs = runs
        self.ledger = ledger
        self.jobs = max(1, jobs)
        self.on_trial = on_trial

    def _one(
        self,
        run_id: str,
        changeset: Changeset,
        budget: Budget,
        errors: list[str],
        writer: _LedgerWriter,
        *,
        defer: bool = False,
        carried: Carried | None = None,
    ) -> Trial | None:
        if budget.exhausted or writer.error is not None:
            return None
        try:
            record = self.cascade.run_trial(
                run_id, changeset, budget, defer=defer, carried=carried, hold_artifacts=True
            )
        except TrialDeferredError:
            raise
        except Exception as exc:  # one crashing trial must not lose the run
            log.exception("internal error grading %s", changeset.id)
            errors.append(f"{changeset.id}: {type(exc).__name__}: {exc}")
            record = TrialRecord(crashed_trial(self.cascade, run_id, changeset, exc))
        writer.put(record)
        return record.trial

    def _grade_all(
        self, changesets: Sequence[Changeset], grade: Callable[[Changeset], Trial | None]
    ) -> list[Trial | None]:
        """Grade in order; on this thread when there is one job (no hand-off per trial)."""
        if self.jobs == 1:
            return [grade(changeset) for changeset in changesets]
        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="trial") as pool:
            return list(pool.map(grade, changesets))

    def _written(self, trial: Trial) -> None:
        if self.on_trial is not None:
            self.on_trial(trial)

    def run(
        self,
        changesets: Sequence[Changeset],
        *,
        budget: Budget,
        run_id: str | None = None,
        options: Mapping[str, Any] | None = None,
        holder: Holder | None = None,
        earlier: Sequence[Trial] | None = None,
        defer: bool = False,
        carried: Carried | None = None,
    ) -> RunOutcome:
        """Grade ``changesets`` as run ``run_id`` (a new one by default).

        ``earlier``: resuming a run already started (and taken over by this process):
        its trials already in the ledger, which join the outcome and the run's summary;
        nothing is started, only ``changesets`` (the missing ones) are graded.

        ``defer`` and ``carried``: a run of one trial graded by a job with attempts left
        (``Cascade.run_trial``). When the trial is put back, the run ends ``deferred``
        with no trial and ``TrialDeferredError`` is raised for the job to be put back."""
        if defer and len(changesets) != 1:
            raise ValueError("only a run of one trial can be put back with its job")
        run_id = run_id or new_run_id()
        if earlier is None:
            self.runs.start_run(run_id, dict(options or {}), holder=holder)
        errors: list[str] = []
        try:
            writer = _LedgerWriter(self.ledger, self._written, artifacts=self.cascade.artifacts)
            with writer:
                results = self._grade_all(
                    changesets,
                    lambda c: self._one(
                        run_id, c, budget, errors, writer, defer=defer, carried=carried
                    ),
                )
        except TrialDeferredError:
            nothing = RunSummary.of([], self.cascade.tiers).to_dict()
            self.runs.finish_run(run_id, RunStatus.DEFERRED, nothing)
            raise
        if writer.error is not None:
            raise StoreError(
                f"could not write results to the ledger: {writer.error}"
            ) from writer.error
        graded = [t for t in results if t is not None]
        status = RunStatus.COMPLETED
        if errors:
            status = RunStatus.INTERNAL_ERRORS
        if budget.exhausted:
            status = RunStatus.STOPPED_BUDGET
        trials = [*(earlier or ()), *graded]
        outcome = RunOutcome(run_id, trials, status, len(changesets) - len(graded), errors)
        summary = outcome.summary(self.cascade.tiers).to_dict()
        self.runs.finish_run(run_id, status, summary)
        return outcome
