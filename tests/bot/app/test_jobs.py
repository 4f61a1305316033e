"""The durable job queue: idempotent intake, leases, dead workers, one job per subject."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.jobs import JobKind, JobQueue, JobState, NewJob, metadata
from core.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(tmp_path: Path, clock: Clock) -> JobQueue:
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}", extra_metadata=[metadata])
    return JobQueue(store, lease_s=10.0, max_attempts=3, clock=clock)


def job(key: str, subject: str = "o/r#1") -> NewJob:
    return NewJob(JobKind.GRADE, key, subject, {"key": key})


def test_a_delivery_is_recorded_once_and_job_keys_are_unique(queue: JobQueue) -> None:
    first = queue.accept("d1", "pull_request", [job("a")])
    assert not first.duplicate and len(first.job_ids) == 1
    assert queue.accept("d1", "pull_request", [job("a")]).duplicate
    again = queue.accept("d2", "pull_request", [job("a"), job("b")])
    assert not again.duplicate and len(again.job_ids) == 1
    assert queue.deliveries() == 2 and len(queue.jobs()) == 2


def test_a_dead_workers_job_is_leased_again_after_its_lease(queue: JobQueue, clock: Clock) -> None:
    queue.enqueue(job("a"))
    leased = queue.lease("w1")
    assert leased is not None and leased.attempts == 1
    assert queue.lease("w2") is None  # still leased
    clock.now += 11
    again = queue.lease("w2")
    assert again is not None and again.id == leased.id and again.attempts == 2
    assert not queue.complete(leased, "w1")  # the dead worker lost it
    assert queue.complete(again, "w2", "ok")
    assert queue.jobs()[0]["state"] == JobState.DONE


def test_a_heartbeat_keeps_the_lease(queue: JobQueue, clock: Clock) -> None:
    queue.enqueue(job("a"))
    leased = queue.lease("w1")
    assert leased is not None
    clock.now += 8
    assert queue.heartbeat(leased, "w1")
    clock.now += 8
    assert queue.lease("w2") is None


def test_jobs_of_one_subject_never_run_at_once(queue: JobQueue) -> None:
    queue.enqueue(job("a", "o/r#1"))
    queue.enqueue(job("b", "o/r#1"))
    queue.enqueue(job("c", "o/r#2"))
    first, second = queue.lease("w1"), queue.lease("w2")
    assert first is not None and second is not None
    assert (first.key, second.key) == ("a", "c")
    assert queue.lease("w3") is None
    queue.complete(first, "w1")
    third = queue.lease("w3")
    assert third is not None and third.key == "b"


def test_failures_back_off_then_give_up(queue: JobQueue, clock: Clock) -> None:
    queue.enqueue(job("a"))
    for attempt in range(1, 4):
        leased = queue.lease("w")
        assert leased is not None and leased.attempts == attempt
        queue.fail(leased, "w", f"boom {attempt}")
        clock.now += 1000
    [row] = queue.jobs()
    assert row["state"] == JobState.FAILED and row["last_error"] == "boom 3"


def test_a_job_whose_workers_keep_dying_ends_failed(queue: JobQueue, clock: Clock) -> None:
    queue.enqueue(job("a"))
    for _ in range(3):
        assert queue.lease("w") is not None
        clock.now += 11
    assert queue.lease("w") is None
    [row] = queue.jobs()
    assert row["state"] == JobState.FAILED and "gave up after 3" in row["last_error"]


def test_named_lease_has_one_holder_until_it_expires(queue: JobQueue, clock: Clock) -> None:
    assert queue.hold_lease("scheduler", "p1", 30)
    assert not queue.hold_lease("scheduler", "p2", 30)
    assert queue.hold_lease("scheduler", "p1", 30)
    clock.now += 31
    assert queue.hold_lease("scheduler", "p2", 30)
    assert not queue.hold_lease("scheduler", "p1", 30)
