"""One worker process: leasing the jobs the broker names, and its background duties.

``WorkerRuntime.run_job`` is what the Celery task calls with a job id. It leases that row
(a repeated or stale delivery leases nothing), runs the job under a renewed lease and
records how it ended. Bot jobs (grading a pull request, slash commands) run through the
same handlers as in ``serve``; trial jobs through ``TrialGrader``.

``Housekeeper`` runs beside the Celery consumer, on its own thread:

- the one process holding the ``dispatcher`` lease announces again the ready jobs whose
  announcement may be lost (a dead worker's jobs once their lease ran out, everything a
  restarted broker forgot);
- every process reaps what its sandbox adapters left behind: sandbox containers of
  workers that died on this engine (adapters that have none to reap are skipped).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from migration_evals.bot.executor.trials import TRIAL, TrialGrader
from migration_evals.bot.jobs.dispatch import Dispatcher, announcer
from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.bot.jobs.pool import JobHandler, execute
from migration_evals.bot.jobs.queue import JobQueue, QueueOptions, build_queue
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.bot.wiring import BuiltCascade
from migration_evals.core.errors import MigrationEvalsError
from migration_evals.core.settings import Settings
from migration_evals.core.store import Store
from migration_evals.oracles.ecosystems.registry import load_specs

__all__ = [
    "DISPATCHER_LEASE",
    "Housekeeper",
    "OtherJobs",
    "Reaper",
    "WorkerRuntime",
    "build_worker",
    "reapers_of",
    "worker_identity",
]

log = logging.getLogger(__name__)

DISPATCHER_LEASE = "dispatcher"


@runtime_checkable
class Reaper(Protocol):
    """A sandbox adapter that can remove what dead workers left behind on its engine."""

    def reap(self) -> int: ...


def reapers_of(cascades: Sequence[BuiltCascade]) -> list[Reaper]:
    """The sandbox adapters of these cascades that can reap (each once)."""
    found: dict[int, Reaper] = {}
    for built in cascades:
        if isinstance(built.sandbox, Reaper):
            found.setdefault(id(built.sandbox), built.sandbox)
    return list(found.values())


def worker_identity() -> str:
    """``host:pid``, the owner a sandbox adapter writes on the containers it starts."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class WorkerRuntime:
    """What one worker process runs jobs with."""

    store: Store
    queue: JobQueue
    handlers: Mapping[JobKind, JobHandler]
    worker_id: str = field(default_factory=worker_identity)
    trials: TrialGrader | None = None

    @property
    def kinds(self) -> list[JobKind]:
        return list(self.handlers)

    def run_job(self, job_id: int) -> str:
        """Lease job ``job_id``, run it, record the outcome; returns a line for the log."""
        holder = f"{self.worker_id}:{threading.current_thread().name}"
        job = self.queue.leasing.lease_by_id(job_id, holder, kinds=self.kinds)
        if job is None:
            return f"job {job_id}: nothing to do (done, held by a live lease, or not due)"
        handler = self.handlers[job.kind]
        result = execute(
            self.queue.leasing,
            job,
            holder,
            lambda leased: handler(leased, holder),
            completes=getattr(handler, "completes_jobs", False),
        )
        return f"job {job_id}: {result or 'failed; retried later or given up'}"

    def reapers(self) -> list[Reaper]:
        return reapers_of(self.trials.cascades()) if self.trials is not None else []

    def close(self) -> None:
        self.store.close()


class Housekeeper:
    """Repeats lost announcements (one process at a time) and reaps dead workers' leftovers."""

    def __init__(
        self,
        queue: JobQueue,
        dispatcher: Dispatcher,
        *,
        holder: str,
        redispatch_s: float,
        reapers: Callable[[], Sequence[Reaper]] = list,
        interval_s: float | None = None,
        reap_every_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = queue
        self.dispatcher = dispatcher
        self.holder = holder
        self.redispatch_s = redispatch_s
        self.reapers = reapers
        # A few looks per redispatch interval, never busier than twice a second.
        self.interval_s = interval_s or max(0.5, min(redispatch_s / 4, 5.0))
        self.reap_every_s = reap_every_s
        self.clock = clock
        self._last_reap: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="housekeeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def tick(self) -> int:
        """One round of duties; returns how many jobs were announced again."""
        announced = 0
        if self.queue.named_leases.hold_lease(DISPATCHER_LEASE, self.holder, self.interval_s * 3):
            # Jobs waiting behind a queue keep their announcements; only an empty queue
            # with jobs still waiting means announcements were lost.
            starved = [k for k in self.queue.kinds if self.dispatcher.backlog(k) == 0]
            due = self.queue.leasing.due_for_dispatch(self.redispatch_s, starved=starved)
            if due:
                self.dispatcher.publish(due)
                announced = len(due)
                log.info("announced %d ready job(s) again", announced)
        now = self.clock()
        if self._last_reap is None or now - self._last_reap >= self.reap_every_s:
            self._last_reap = now
            for reaper in self.reapers():
                reaper.reap()
        return announced

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except MigrationEvalsError as exc:  # database or broker away: try again later
                log.warning("housekeeping skipped: %s", exc)
            except Exception:
                log.exception("housekeeping failed")
            self._stop.wait(self.interval_s)

    def release(self) -> None:
        self.queue.named_leases.release_lease(DISPATCHER_LEASE, self.holder)


def _prepare(grader: TrialGrader, settings: Settings) -> None:
    """Build the cascade of the worker's own settings now: its sandbox reaps what a
    killed predecessor left at once, and a misconfiguration shows in the log at start.
    Jobs are graded as their plans say, whatever these settings' modes are."""
    plan = plan_of(settings, grader.specs)
    log.info("worker: own plan's modes %s", _modes(plan))
    why = grader.plans.refusal(plan, None)
    if why is not None:  # plans of other modes may still be served
        log.warning("cannot grade in this worker's own modes (%s): %s", _modes(plan), why)


def _modes(plan: RunPlan) -> str:
    return f"sandbox={plan.sandbox.value} judge={plan.judge.value} github={plan.github.value}"


# (settings, store, queue) -> the handlers of other packages' job kinds (the App's)
OtherHandlers = Callable[[Settings, Store, JobQueue], Mapping[JobKind, JobHandler]]


@dataclass(frozen=True)
class OtherJobs:
    """Job kinds of other packages this worker runs too: their kinds and handlers (their
    tables are in the one schema with every other)."""

    kinds: Sequence[JobKind]
    handlers: OtherHandlers


def build_worker(
    settings: Settings,
    dispatcher: Dispatcher,
    *,
    threads: int = 1,
    others: OtherJobs | None = None,
) -> WorkerRuntime:
    """A worker's runtime from settings; ``StoreError`` at once when the database is away.

    ``threads`` jobs run at once, each with a lease renewal beside it, so the pool keeps a
    connection for each and a few for housekeeping.
    """
    store = open_store(settings, pool_size=threads + 4)
    queue = build_queue(
        store,
        KindRegistry([TRIAL, *(others.kinds if others else ())]),
        QueueOptions.of(settings, lease_s=settings.scale.lease_s),
        on_new_jobs=announcer(dispatcher),  # jobs the App's handlers enqueue
    )
    try:
        specs = load_specs(settings.specs_dir)
        grader = TrialGrader(settings, store, queue.leasing, specs)
        _prepare(grader, settings)
        handlers: dict[JobKind, JobHandler] = {TRIAL: grader}
        if others is not None:
            handlers.update(others.handlers(settings, store, queue))
    except BaseException:
        store.close()
        raise
    return WorkerRuntime(store, queue, handlers, trials=grader)
