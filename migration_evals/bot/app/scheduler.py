"""APScheduler 3 inside ``serve``, active in exactly one process.

Every server process (each gunicorn worker) starts a paused scheduler and a small thread
that tries to hold the ``scheduler`` lease in the database. The holder resumes its
scheduler; the others stay paused, and take over when the holder stops renewing (it died).
Each scheduled run also checks that its process still holds the lease before it acts.

Jobs: the nightly survival-mining pass (cron from settings, misfire grace one hour,
coalesced) and the reconciliation pass (every few minutes: open agent PRs with no check
on their head are enqueued).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from migration_evals.bot.jobs.named_leases import NamedLeases
from migration_evals.core.errors import ConfigError

__all__ = ["LEASE_NAME", "SingleScheduler"]

log = logging.getLogger(__name__)

LEASE_NAME = "scheduler"
MISFIRE_GRACE_S = 3600


class SingleScheduler:
    """A paused APScheduler resumed only while this process holds the database lease."""

    def __init__(
        self,
        leases: NamedLeases,
        *,
        survival_cron: str,
        reconcile_minutes: int,
        nightly: Callable[[], object],
        reconcile: Callable[[], object],
        lease_ttl_s: float = 60.0,
    ) -> None:
        self.leases = leases
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.lease_ttl_s = lease_ttl_s
        self.is_leader = False
        self._stop = threading.Event()
        self._scheduler = BackgroundScheduler(timezone="UTC")
        try:
            cron = CronTrigger.from_crontab(survival_cron, timezone="UTC")
        except ValueError as exc:
            raise ConfigError(f"survival cron {survival_cron!r} is not valid: {exc}") from exc
        common = {"misfire_grace_time": MISFIRE_GRACE_S, "coalesce": True, "max_instances": 1}
        self._scheduler.add_job(self._guarded(nightly), cron, id="survival-nightly", **common)
        self._scheduler.add_job(
            self._guarded(reconcile),
            IntervalTrigger(minutes=max(1, reconcile_minutes)),
            id="reconcile",
            **common,
        )
        self._thread = threading.Thread(target=self._elect, name="scheduler-lease", daemon=True)

    def _guarded(self, job: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            if not self.leases.hold_lease(LEASE_NAME, self.holder, self.lease_ttl_s):
                log.info("scheduler lease lost; skipping %s", getattr(job, "__name__", job))
                return
            job()

        return run

    def start(self) -> None:
        self._scheduler.start(paused=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        if self.is_leader:
            self.leases.release_lease(LEASE_NAME, self.holder)

    def elect_once(self) -> bool:
        """Take or renew the lease and resume or pause the scheduler to match."""
        try:
            leader = self.leases.hold_lease(LEASE_NAME, self.holder, self.lease_ttl_s)
        except Exception:
            log.exception("scheduler lease check failed")
            leader = False
        running = self._scheduler.running
        if leader and not self.is_leader:
            log.info("this process runs the scheduler (%s)", self.holder)
            if running:
                self._scheduler.resume()
        elif not leader and self.is_leader and running:
            self._scheduler.pause()
        self.is_leader = leader
        return leader

    def _elect(self) -> None:
        while True:
            self.elect_once()
            if self._stop.wait(self.lease_ttl_s / 3):
                return
