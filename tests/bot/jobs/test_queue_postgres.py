"""The job queue on a real PostgreSQL server, leased from several processes at once."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence

import pytest

from migration_evals.bot.app.kinds import COMMAND, GRADE
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.queue import JobQueue, JobState, NewJob, QueueOptions, build_queue
from migration_evals.core.store import Store
from tests.fakes import all_kinds

pytestmark = pytest.mark.postgres


def _queue(url: str) -> JobQueue:
    return build_queue(Store.open(url), all_kinds(), QueueOptions(lease_s=60.0))


def _drain(url: str, worker: str) -> list[int]:
    """One process: lease and complete jobs until none is left; returns the ids it ran."""
    queue = _queue(url)
    ran = []
    while (job := queue.leasing.lease(worker)) is not None:
        ran.append(job.id)
        assert queue.leasing.complete(job, worker, "ok")
    queue.store.close()
    return ran


def _lease_each(url: str, worker: str, ids: Sequence[int]) -> list[int]:
    """One process: try to lease every job by id, as repeated deliveries would."""
    queue = _queue(url)
    got = [job_id for job_id in ids if queue.leasing.lease_by_id(job_id, worker) is not None]
    queue.store.close()
    return got


def _hold(url: str, holder: str) -> bool:
    queue = _queue(url)
    held = queue.named_leases.hold_lease("scheduler", holder, 60.0)
    queue.store.close()
    return held


def _in_processes(target: Callable[..., object], arguments: list[tuple[object, ...]]) -> list:  # type: ignore[type-arg]
    with multiprocessing.get_context("spawn").Pool(len(arguments)) as pool:
        return pool.starmap(target, arguments)


def test_workers_in_four_processes_run_every_job_once(postgres_url: str) -> None:
    queue = _queue(postgres_url)
    for n in range(120):
        queue.intake.enqueue(NewJob(GRADE, f"k{n}", f"pr{n % 7}", {}))
    runs = _in_processes(_drain, [(postgres_url, f"w{i}") for i in range(4)])
    ran = [job_id for ids in runs for job_id in ids]
    assert sorted(ran) == sorted(j["id"] for j in queue.admin.jobs())  # each once, none lost
    assert queue.admin.counts() == {JobState.DONE.value: 120}
    queue.store.close()


def test_racing_deliveries_of_the_same_jobs_lease_each_once(postgres_url: str) -> None:
    queue = _queue(postgres_url)
    trials = [NewJob(TRIAL, f"trial:r:{n}", f"trial:{n}", {}) for n in range(60)]
    with queue.store.db.engine.begin() as conn:
        ids = queue.intake.insert_many(conn, trials)
    got = _in_processes(_lease_each, [(postgres_url, f"w{i}", ids) for i in range(3)])
    assert sorted(job_id for part in got for job_id in part) == ids
    queue.store.close()


def test_one_scheduler_among_processes(postgres_url: str) -> None:
    _queue(postgres_url).store.close()  # the schema exists before the race on the lease
    held = _in_processes(_hold, [(postgres_url, f"host:{i}") for i in range(4)])
    assert sorted(held) == [False, False, False, True]


def test_grade_jobs_are_leased_before_older_command_jobs(postgres_url: str) -> None:
    queue = _queue(postgres_url)
    queue.intake.enqueue(NewJob(COMMAND, "prio:c", "prio#1/comments", {}))
    queue.intake.enqueue(NewJob(GRADE, "prio:g", "prio#1", {}))
    first = queue.leasing.lease("w")
    assert first is not None and first.key == "prio:g"
    queue.store.close()
