"""The runs table: each run's options, status and summary, and its liveness.

A run being graded carries a heartbeat moved by the process holding it
(``migration_evals.bot.heartbeat``); ``mark_interrupted`` marks the runs whose process is
gone (``migration_evals.core.liveness``) and ``reopen_run`` lets another process resume one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.database import Database
from migration_evals.core.liveness import Holder, RunState, StaleRun, gone_reason, pid_alive
from migration_evals.core.schema import runs_table
from migration_evals.core.stamps import canonical_json

__all__ = ["Runs", "now_iso"]


def now_iso() -> str:
    return _iso(datetime.now(UTC))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _holder_columns(holder: Holder, beat: str) -> dict[str, Any]:
    return {"heartbeat_at": beat, "lease_s": holder.lease_s, "pid": holder.pid, "host": holder.host}


class Runs:
    """Starting, finishing, listing and watching runs."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def start_run(
        self,
        run_id: str,
        options: Mapping[str, Any],
        *,
        conn: Connection | None = None,
        holder: Holder | None = None,
    ) -> None:
        """Record a run as running; inside ``conn``'s transaction when one is given.

        ``holder``: the process that will beat the run's heartbeat
        (``migration_evals.bot.heartbeat``);
        None for a run nothing watches (its lease is the default one, from its start)."""
        started = now_iso()
        insert = runs_table.insert().values(
            run_id=run_id,
            started_at=started,
            status=RunState.RUNNING.value,
            options=canonical_json(options),
            **(_holder_columns(holder, started) if holder is not None else {}),
        )
        if conn is not None:
            conn.execute(insert)
            return
        with self._db.engine.begin() as own:
            own.execute(insert)

    def finish_run(self, run_id: str, status: str, summary: Mapping[str, Any]) -> None:
        with self._db.engine.begin() as conn:
            conn.execute(
                runs_table.update()
                .where(runs_table.c.run_id == run_id)
                .values(finished_at=now_iso(), status=status, summary=canonical_json(summary))
            )

    def all(self) -> list[dict[str, Any]]:
        """Every run's row, oldest first."""
        with self._db.reading() as conn:
            rows = conn.execute(sa.select(runs_table).order_by(runs_table.c.started_at)).mappings()
            return [dict(row) for row in rows]

    def run(self, run_id: str) -> dict[str, Any] | None:
        """One run's row, or None when there is no such run."""
        with self._db.reading() as conn:
            row = conn.execute(
                sa.select(runs_table).where(runs_table.c.run_id == run_id)
            ).mappings()
            found = row.first()
        return None if found is None else dict(found)

    def beat(self, run_id: str, now: datetime | None = None) -> bool:
        """Move a running run's heartbeat to ``now``; False when it is no longer running
        (finished, or marked interrupted by another process)."""
        at = _iso(now) if now is not None else now_iso()
        with self._db.engine.begin() as conn:
            moved = conn.execute(
                runs_table.update()
                .where(runs_table.c.run_id == run_id, runs_table.c.status == RunState.RUNNING)
                .values(heartbeat_at=at)
            )
        return bool(moved.rowcount)

    def mark_interrupted(
        self, now: datetime, *, here: str, alive: Callable[[int], bool] = pid_alive
    ) -> list[StaleRun]:
        """Mark every running run whose process is gone as interrupted; returns them.

        One query when nothing is running. A run is marked only if its heartbeat did not
        move since it was read, so a process beating meanwhile keeps its run."""
        c = runs_table.c
        query = sa.select(c.run_id, c.started_at, c.heartbeat_at, c.lease_s, c.pid, c.host)
        with self._db.reading() as conn:
            running = conn.execute(query.where(c.status == RunState.RUNNING)).all()
        marked = []
        for row in running:
            last = datetime.fromisoformat(row.heartbeat_at or row.started_at)
            holder = None if row.lease_s is None else Holder(row.pid, row.host, row.lease_s)
            reason = gone_reason(last, holder, now, here=here, alive=alive)
            if reason is not None and self._interrupt(row.run_id, row.heartbeat_at, reason):
                marked.append(StaleRun(row.run_id, reason))
        return marked

    def _interrupt(self, run_id: str, seen_beat: str | None, reason: str) -> bool:
        c = runs_table.c
        unchanged = c.heartbeat_at.is_(None) if seen_beat is None else c.heartbeat_at == seen_beat
        with self._db.engine.begin() as conn:
            done = conn.execute(
                runs_table.update()
                .where(c.run_id == run_id, c.status == RunState.RUNNING, unchanged)
                .values(
                    status=RunState.INTERRUPTED.value,
                    summary=canonical_json({"interrupted": reason}),
                )
            )
        return bool(done.rowcount)

    def unfinished_runs(self) -> dict[str, str]:
        """Run id -> status of every run still running or interrupted (not completed)."""
        c = runs_table.c
        states = [state.value for state in RunState]
        with self._db.reading() as conn:
            rows = conn.execute(sa.select(c.run_id, c.status).where(c.status.in_(states)))
            return {str(run_id): str(status) for run_id, status in rows}

    def reopen_run(self, run_id: str, holder: Holder) -> bool:
        """Take over an interrupted run to resume it: running again, held by ``holder``,
        ``resumed_at`` noted. False when it is not interrupted (finished, or another
        process took it over first)."""
        c = runs_table.c
        now = now_iso()
        with self._db.engine.begin() as conn:
            done = conn.execute(
                runs_table.update()
                .where(c.run_id == run_id, c.status == RunState.INTERRUPTED)
                .values(
                    status=RunState.RUNNING.value,
                    resumed_at=now,
                    **_holder_columns(holder, now),
                )
            )
        return bool(done.rowcount)
