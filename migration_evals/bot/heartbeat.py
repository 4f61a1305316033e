"""A running run's heartbeat, and the check every command makes for runs that died.

``Heartbeat`` beats the run's ``heartbeat_at`` from a daemon thread while this process
grades it; the thread dies with the process, which is the point: a SIGKILLed run stops
beating. ``reap_dead_runs`` runs at the start of ``run``, ``gate check``, ``ledger`` and
``db status``: one query finds nothing running in the usual case; a run whose lease has
run out (or whose process is gone from this machine) is marked ``interrupted`` and the
workspaces its trials left are removed (``migration_evals.core.liveness`` has the rule).
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
from collections.abc import Callable
from types import TracebackType

from migration_evals.core.clock import Clock, SystemClock
from migration_evals.core.liveness import StaleRun, pid_alive
from migration_evals.core.runs import Runs
from migration_evals.core.settings import Settings
from migration_evals.core.store import Store

__all__ = ["Heartbeat", "interrupted_note", "reap_and_note", "reap_dead_runs", "resume_hint"]

log = logging.getLogger(__name__)


def resume_hint(run_id: str) -> str:
    return f"migration-evals run --resume {run_id}"


class Heartbeat:
    """Beats ``run_id``'s heartbeat every ``interval_s`` until the block ends."""

    def __init__(
        self, runs: Runs, run_id: str, interval_s: float, clock: Clock | None = None
    ) -> None:
        self.runs = runs
        self.run_id = run_id
        self.interval_s = interval_s
        self.clock = clock or SystemClock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="run-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def beat(self) -> bool:
        """One beat; False once the run is no longer running here."""
        return self.runs.beat(self.run_id, self.clock.now())

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.beat()
            except Exception as exc:  # a missed beat is retried; grading goes on meanwhile
                log.warning("run %s: heartbeat not recorded: %s", self.run_id, exc)


def reap_dead_runs(
    runs: Runs,
    settings: Settings,
    *,
    clock: Clock | None = None,
    here: str | None = None,
    alive: Callable[[int], bool] = pid_alive,
) -> list[StaleRun]:
    """Mark the runs whose process is gone as interrupted and remove their workspaces."""
    now = (clock or SystemClock()).now()
    stale = runs.mark_interrupted(now, here=here or socket.gethostname(), alive=alive)
    for run in stale:
        try:
            # Loaded here: the workspace module pulls in the oracles, which a command that
            # only reads the ledger (gate check) never needs.
            from migration_evals.oracles.workspace import remove_run_workspaces  # noqa: PLC0415

            removed = remove_run_workspaces(run.run_id, settings.scratch_dir)
        except OSError as exc:  # the run stays interrupted; the next command tries again
            log.warning("run %s: could not remove its leftover workspaces: %s", run.run_id, exc)
            continue
        for folder in removed:
            log.info("run %s: removed its leftover workspace %s", run.run_id, folder)
    return stale


def reap_and_note(store: Store, settings: Settings) -> list[StaleRun]:
    """``reap_dead_runs``, each run it marks told on stderr with the command that finishes it."""
    stale = reap_dead_runs(store.runs, settings)
    for run in stale:
        print(f"migration-evals: {interrupted_note(run)}", file=sys.stderr)
    return stale


def interrupted_note(run: StaleRun) -> str:
    """One line for stderr about a run just marked interrupted, and how to finish it."""
    return (
        f"run {run.run_id} was marked interrupted: {run.reason}; "
        f"grade what it left undone with `{resume_hint(run.run_id)}`"
    )
