"""Running one job: an unavailable API puts it back with backoff, not a wait in the thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.app.kinds import ANNOUNCE, GRADE
from migration_evals.bot.jobs.pool import CARRIED, Handler, WorkerPool, execute
from migration_evals.bot.jobs.queue import (
    Job,
    JobQueue,
    JobState,
    NewJob,
    QueueOptions,
    build_queue,
)
from migration_evals.core.errors import ConfigError, ServiceUnavailableError
from migration_evals.core.model import Envelope, Stamps, Tier, Verdict
from migration_evals.core.retry import Backoff
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Carried, TrialDeferredError
from tests.fakes import FakeTimer, all_kinds


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer(now=1_000.0)


@pytest.fixture
def queue(tmp_path: Path, timer: FakeTimer) -> JobQueue:
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    backoff = Backoff(base_s=10.0, max_s=40.0)
    options = QueueOptions(max_attempts=3, backoff=backoff, jitter=lambda: 1.0)
    return build_queue(store, all_kinds(), options, clock=timer)


def _leased(queue: JobQueue) -> Job:
    leased = queue.leasing.lease("w")
    assert leased is not None
    return leased


def _raising(error: Exception) -> Handler:
    def handler(job: Job) -> str:
        raise error

    return handler


@pytest.mark.parametrize(
    ("asked", "wait"),
    [(None, 10.0), (3.0, 10.0), (300.0, 300.0)],  # the backoff, unless the server asks more
)
def test_an_unavailable_api_puts_the_job_back(
    queue: JobQueue, timer: FakeTimer, asked: float | None, wait: float
) -> None:
    queue.intake.enqueue(NewJob(GRADE, "a", "o/r#1"))
    error = ServiceUnavailableError("GitHub answered 502", retry_after_s=asked)
    assert execute(queue.leasing, _leased(queue), "w", _raising(error)) is None
    [row] = queue.admin.jobs()
    assert row["state"] == JobState.QUEUED and row["run_after"] == timer.now + wait
    assert row["last_error"] == "unavailable: GitHub answered 502"
    assert timer.sleeps == []


def test_the_backoff_doubles_and_the_last_attempt_says_why(
    queue: JobQueue, timer: FakeTimer
) -> None:
    queue.intake.enqueue(NewJob(GRADE, "a", "o/r#1"))
    waits = []
    for attempt in range(1, 4):
        before = timer.now
        handler = _raising(ServiceUnavailableError(f"down {attempt}"))
        execute(queue.leasing, _leased(queue), "w", handler)
        [row] = queue.admin.jobs()
        if row["state"] == JobState.QUEUED:
            waits.append(row["run_after"] - before)
            timer.now = row["run_after"]
    assert waits == [10.0, 20.0]
    assert row["state"] == JobState.FAILED
    assert row["last_error"] == "gave up after 3 attempt(s); the last failed: unavailable: down 3"


def test_other_errors_back_off_too_and_keep_their_type(queue: JobQueue, timer: FakeTimer) -> None:
    queue.intake.enqueue(NewJob(GRADE, "a", "o/r#1"))
    execute(queue.leasing, _leased(queue), "w", _raising(ConfigError("bad config")))
    [row] = queue.admin.jobs()
    assert row["last_error"] == "ConfigError: bad config" and row["run_after"] == timer.now + 10


def test_a_trial_put_back_keeps_what_it_made_in_the_jobs_payload(
    queue: JobQueue, timer: FakeTimer
) -> None:
    queue.intake.enqueue(NewJob(GRADE, "a", "o/r#1", {"repo": "o/r"}))
    stamps = Stamps("o", "r", "h")
    made = Envelope("t-1", "c1", Tier.APPLY, Verdict.PASS, 0.001, 0.0, 0.0, stamps)
    carried = Carried("r-1", {Tier.APPLY: ("key-1", made)})
    error = TrialDeferredError("judge answered 429", carried, retry_after_s=120.0)
    assert execute(queue.leasing, _leased(queue), "w", _raising(error)) is None
    [row] = queue.admin.jobs()
    assert row["state"] == JobState.QUEUED and row["run_after"] == timer.now + 120.0
    assert timer.sleeps == []
    timer.now = row["run_after"]
    again = _leased(queue)
    assert again.payload["repo"] == "o/r"
    assert Carried.of(again.payload[CARRIED]) == carried


def test_an_idle_pool_woken_for_a_new_job_runs_it_before_its_next_poll(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked, ran = threading.Event(), threading.Event()
    lease = queue.leasing.lease

    def watched(worker: str, **options: Any) -> Job | None:
        found = lease(worker, **options)
        looked.set()
        return found

    monkeypatch.setattr(queue.leasing, "lease", watched)
    pool = WorkerPool(queue.leasing, {GRADE: lambda job: str(ran.set())}, count=1, poll_s=600.0)
    pool.start()
    try:
        assert looked.wait(10)  # found nothing: asleep until its next poll, ten minutes away
        queue.intake.enqueue(NewJob(GRADE, "a", "o/r#1"))
        pool.wake()
        assert ran.wait(10)
    finally:
        pool.stop()
    assert [row["state"] for row in queue.admin.jobs()] == [JobState.DONE]


def test_a_job_that_ends_wakes_the_pool_whose_job_waited_for_its_subject(
    queue: JobQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    announcing, release, graded, grader_idle = (threading.Event() for _ in range(4))
    lease = queue.leasing.lease

    def watched(worker: str, **options: Any) -> Job | None:
        found = lease(worker, **options)
        if found is None and worker.endswith(":w0"):
            grader_idle.set()  # the grade job's subject was busy
        return found

    def announce(job: Job) -> str:
        announcing.set()
        assert release.wait(10)
        return "announced"

    monkeypatch.setattr(queue.leasing, "lease", watched)
    queue.intake.enqueue(NewJob(ANNOUNCE, "announce", "o/r#1"))
    queue.intake.enqueue(NewJob(GRADE, "grade", "o/r#1"))
    work = threading.Event()  # shared, as the App's two pools share it
    opening = WorkerPool(
        queue.leasing, {ANNOUNCE: announce}, count=1, poll_s=600.0, name="a", work=work
    )
    grading = WorkerPool(
        queue.leasing, {GRADE: lambda job: str(graded.set())}, count=1, poll_s=600.0, work=work
    )
    opening.start()
    try:
        assert announcing.wait(10)
        grading.start()
        assert grader_idle.wait(10)  # asleep until its next poll, ten minutes away
        release.set()
        assert graded.wait(10)
    finally:
        release.set()
        opening.stop()
        grading.stop()
