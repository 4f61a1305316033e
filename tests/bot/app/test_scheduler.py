"""Exactly one scheduler runs among several server processes sharing a database."""

from __future__ import annotations

from pathlib import Path

import pytest

from migration_evals.bot.app.scheduler import MISFIRE_GRACE_S, SingleScheduler
from migration_evals.bot.jobs.queue import JobQueue, build_queue
from migration_evals.core.errors import ConfigError
from migration_evals.core.store import Store
from tests.fakes import all_kinds


def _scheduler(queue: JobQueue, ran: list[str]) -> SingleScheduler:
    return SingleScheduler(
        queue.named_leases,
        survival_cron="17 3 * * *",
        reconcile_minutes=30,
        nightly=lambda: ran.append("nightly"),
        reconcile=lambda: ran.append("reconcile"),
        lease_ttl_s=30.0,
    )


def test_one_leader_among_processes_and_takeover_when_it_dies(tmp_path: Path) -> None:
    now = [0.0]
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    queue = build_queue(store, all_kinds(), clock=lambda: now[0])
    ran: list[str] = []
    first, second = _scheduler(queue, ran), _scheduler(queue, ran)
    assert first.elect_once() and not second.elect_once()
    now[0] += 10
    assert first.elect_once() and not second.elect_once()  # renewed in time
    now[0] += 31  # the first process died and stopped renewing
    assert second.elect_once()
    assert not first.elect_once()


def test_jobs_are_coalesced_with_an_hour_of_misfire_grace(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    scheduler = _scheduler(build_queue(store, all_kinds()), [])
    jobs = {job.id: job for job in scheduler._scheduler.get_jobs()}
    assert set(jobs) == {"survival-nightly", "reconcile"}
    assert all(
        j.coalesce and j.misfire_grace_time == MISFIRE_GRACE_S >= 3600 for j in jobs.values()
    )


def test_a_scheduled_run_checks_the_lease_first(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    queue = build_queue(store, all_kinds())
    ran: list[str] = []
    leader, other = _scheduler(queue, ran), _scheduler(queue, ran)
    assert leader.elect_once()
    other._guarded(lambda: ran.append("other"))()
    leader._guarded(lambda: ran.append("leader"))()
    assert ran == ["leader"]


def test_a_bad_cron_is_a_config_error(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    with pytest.raises(ConfigError, match="survival cron"):
        SingleScheduler(
            build_queue(store, all_kinds()).named_leases,
            survival_cron="61 * * *",
            reconcile_minutes=5,
            nightly=lambda: None,
            reconcile=lambda: None,
        )
