"""In-process worker threads: lease a job, run its handler, record the outcome.

An idle thread leases again when woken (jobs were added, or a job ended and freed its
subject for another) or at its next poll, which finds the jobs whose backoff or whose
dead worker's lease has run out.

A running job's lease is renewed every third of its length, so a long grading keeps its
job while a dead process's job is picked up by another worker once the lease runs out.
A handler never waits for an outside API inside its thread: an unavailable one
(``ServiceUnavailableError``: GitHub or a judge API down, unreachable or rate limiting)
puts the job back with backoff and jitter, no sooner than the server asked; the thread
takes the next job. A trial stopped so (``TrialDeferredError``) leaves the envelopes it
made in the job's payload (``CARRIED``), and its next attempt starts from them.
Other errors back off and retry the same way; a job that keeps failing ends ``failed``,
its last error saying how many attempts were made and why the last one failed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping

from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.leasing import Leasing
from migration_evals.bot.jobs.model import Job
from migration_evals.core.errors import MigrationEvalsError, ServiceUnavailableError
from migration_evals.oracles.cascade import TrialDeferredError

__all__ = ["CARRIED", "Handler", "JobHandler", "WorkerPool", "execute", "ignoring_holder"]

CARRIED = "carried"
"""The payload field of a job put back with the work its trial made (``Carried``)."""

log = logging.getLogger(__name__)

Handler = Callable[[Job], str]
JobHandler = Callable[[Job, str], str]  # (leased job, lease holder) -> result line


class WorkerPool:
    """``count`` daemon threads running jobs leased from ``leasing`` through ``handlers``."""

    def __init__(
        self,
        leasing: Leasing,
        handlers: Mapping[JobKind, Handler],
        *,
        count: int,
        poll_s: float = 0.5,
        name: str = "w",  # two pools of one process must not share their threads' names
        work: threading.Event | None = None,
    ) -> None:
        self.leasing = leasing
        self.handlers = handlers
        self.count = count
        self.poll_s = poll_s
        self._stop = threading.Event()
        # Set when a job may have become runnable: one was added, or one ended and freed
        # its subject for the next. Idle threads then lease at once instead of at their
        # next poll; pools of one queue share it, as a job of one may wait for the other's.
        self._work = work if work is not None else threading.Event()
        self._threads: list[threading.Thread] = []
        self._prefix = f"{socket.gethostname()}:{os.getpid()}:{name}"

    def start(self) -> None:
        for index in range(self.count):
            name = f"{self._prefix}{index}"
            thread = threading.Thread(target=self._loop, args=(name,), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        """Jobs were added: idle threads lease now rather than at their next poll."""
        self._work.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._work.set()
        for thread in self._threads:
            thread.join(timeout)

    def _loop(self, name: str) -> None:
        while not self._stop.is_set():
            self._work.clear()  # before leasing: a wake from here on is not missed
            try:
                ran = self.run_one(name)
            except Exception:  # the queue itself failed (database away): wait and retry
                log.exception("worker %s could not lease a job", name)
                ran = False
            if ran:
                self._work.set()  # its subject is free: another job may wait for it
            else:
                self._work.wait(self.poll_s)

    def run_one(self, name: str) -> bool:
        """Lease and run one job; False when there was none."""
        job = self.leasing.lease(name, kinds=list(self.handlers))
        if job is None:
            return False
        execute(self.leasing, job, name, self.handlers[job.kind])
        return True


def execute(
    leasing: Leasing, job: Job, name: str, handler: Handler, *, completes: bool = False
) -> str | None:
    """Run a leased job under a renewed lease and record how it ended; returns its
    result line, or None when it failed (and was put back or given up). A handler that
    ``completes`` its job itself (with the work it records) is not completed again."""
    beat = _Heartbeat(leasing, job, name)
    beat.start()
    try:
        result = handler(job)
    except ServiceUnavailableError as exc:  # not the job's fault: try again later
        beat.stop()
        # A trial put back takes what it made so far with it (``Carried``).
        carry = {CARRIED: exc.carried.to_dict()} if isinstance(exc, TrialDeferredError) else None
        _failed(
            leasing, job, name, f"unavailable: {exc}", retry_after_s=exc.retry_after_s, carry=carry
        )
    except MigrationEvalsError as exc:
        beat.stop()
        _failed(leasing, job, name, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug: recorded on the job, not lost, not silent
        beat.stop()
        log.exception("job %s (%s) crashed", job.id, job.key)
        _failed(leasing, job, name, f"internal error: {type(exc).__name__}: {exc}")
    else:
        beat.stop()
        if not completes:
            leasing.complete(job, name, result)
        log.info("job %s (%s): %s", job.id, job.key, result)
        return result
    return None


def _failed(
    leasing: Leasing,
    job: Job,
    name: str,
    error: str,
    *,
    retry_after_s: float | None = None,
    carry: Mapping[str, object] | None = None,
) -> None:
    """Record a failed attempt and say so in the log with its cause: a warning while
    attempts are left (an operator sees an outage as it happens, not five attempts
    later), an error when the job gives up."""
    leasing.fail(job, name, error, retry_after_s=retry_after_s, carry=carry)
    if job.attempts >= job.max_attempts:
        log.error(
            "job %s (%s) gave up after %d attempt(s); the last failed: %s",
            job.id,
            job.key,
            job.attempts,
            error,
        )
    else:
        log.warning(
            "job %s (%s) attempt %d of %d failed, will retry: %s",
            job.id,
            job.key,
            job.attempts,
            job.max_attempts,
            error,
        )


class _Heartbeat:
    """Renews a job's lease while its handler runs."""

    def __init__(self, leasing: Leasing, job: Job, worker: str) -> None:
        self.leasing, self.job, self.worker = leasing, job, worker
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"{worker}:beat")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _beat(self) -> None:
        interval = max(0.05, self.leasing.lease_s / 3)
        while not self._done.wait(interval):
            try:
                if not self.leasing.heartbeat(self.job, self.worker):
                    log.warning("job %s: lease lost", self.job.id)
                    return
            except Exception:
                log.exception("job %s: heartbeat failed", self.job.id)


def ignoring_holder(run: Handler) -> JobHandler:
    """A handler that takes only the job (ownership is checked when it completes)."""

    def handle(job: Job, _holder: str) -> str:
        return run(job)

    return handle
