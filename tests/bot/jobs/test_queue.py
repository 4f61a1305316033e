"""The durable job queue: idempotent intake, leases, dead workers, one job per subject."""

from __future__ import annotations

from pathlib import Path

import pytest

from migration_evals.bot.app.kinds import COMMAND, GRADE
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.queue import JobQueue, JobState, NewJob
from migration_evals.core.store import Store
from tests.fakes import all_kinds


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
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    return JobQueue(store, all_kinds(), lease_s=10.0, max_attempts=3, clock=clock)


def job(key: str, subject: str = "o/r#1") -> NewJob:
    return NewJob(GRADE, key, subject, {"key": key})


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
    assert row["state"] == JobState.FAILED
    assert row["last_error"] == "gave up after 3 attempt(s); the last failed: boom 3"


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


def test_a_delivery_names_the_job_it_leases(queue: JobQueue, clock: Clock) -> None:
    job_id = queue.enqueue(job("a"))
    assert job_id is not None
    leased = queue.lease_by_id(job_id, "w1")
    assert leased is not None and leased.attempts == 1
    assert queue.lease_by_id(job_id, "w2") is None  # a repeated delivery: held by a live lease
    assert queue.complete(leased, "w1", "ok")
    assert queue.lease_by_id(job_id, "w2") is None  # and after it is done
    assert queue.lease_by_id(9999, "w2") is None


def test_a_delivery_respects_kinds_subjects_and_the_clock(queue: JobQueue, clock: Clock) -> None:
    first = queue.enqueue(job("a", subject="pr"))
    second = queue.enqueue(job("b", subject="pr"))
    later = queue.enqueue(job("c", subject="other"), delay_s=30)
    assert first is not None and second is not None and later is not None
    assert queue.lease_by_id(first, "w1", kinds=[TRIAL]) is None
    assert queue.lease_by_id(first, "w1") is not None
    assert queue.lease_by_id(second, "w2") is None  # its pull request is being graded
    assert queue.lease_by_id(later, "w2") is None  # not due yet
    clock.now += 31
    assert queue.lease_by_id(later, "w2") is not None


def test_trial_jobs_are_inserted_together_and_never_wait_for_each_other(queue: JobQueue) -> None:
    trials = [NewJob(TRIAL, f"trial:r:{n}", f"trial:{n}", {"n": n}) for n in range(3)]
    with queue.store.engine.begin() as conn:
        ids = queue.insert_many(conn, trials, max_attempts=2)
    assert len(ids) == 3 and ids == sorted(ids)
    leased = [queue.lease_by_id(job_id, f"w{job_id}") for job_id in ids]
    assert all(j is not None and j.max_attempts == 2 for j in leased)
    assert queue.lease("w9", kinds=[GRADE]) is None


def test_new_jobs_are_announced_after_they_are_stored(queue: JobQueue) -> None:
    announced: list[tuple[int, JobKind]] = []
    queue.on_new_jobs = announced.extend
    accepted = queue.accept("d1", "pull_request", [job("a"), job("b")])
    assert announced == [(i, GRADE) for i in accepted.job_ids]
    queue.accept("d1", "pull_request", [job("a")])  # a repeated delivery announces nothing
    queue.enqueue(job("a"))  # nor does a key that exists
    queue.enqueue(job("c"), delay_s=60)  # a delayed job is announced when it is due
    assert len(announced) == 2


def test_lost_announcements_are_found_again(queue: JobQueue, clock: Clock) -> None:
    fresh = queue.enqueue(job("fresh", subject="s1"))
    dead = queue.enqueue(job("dead", subject="s2"))
    delayed = queue.enqueue(job("delayed", subject="s3"), delay_s=5)
    assert fresh is not None and dead is not None and delayed is not None
    assert queue.due_for_dispatch(redispatch_s=60) == []  # all just announced or not due
    leased = queue.lease_by_id(dead, "w1")
    assert leased is not None
    clock.now += 6
    assert queue.due_for_dispatch(redispatch_s=60) == [(delayed, GRADE)]
    clock.now += 10  # the dead worker's lease (10 s) has run out
    assert queue.due_for_dispatch(redispatch_s=60) == [(dead, GRADE)]
    assert queue.due_for_dispatch(redispatch_s=60) == []  # announced: not again at once
    clock.now += 61  # nothing took them for a whole redispatch interval
    due = [job_id for job_id, _ in queue.due_for_dispatch(redispatch_s=60)]
    assert due == [fresh, dead, delayed]


def test_failed_jobs_are_found_by_key_prefix(queue: JobQueue, clock: Clock) -> None:
    with queue.store.engine.begin() as conn:
        [job_id] = queue.insert_many(
            conn, [NewJob(TRIAL, "trial:r_1:c", "trial:x", {})], max_attempts=1
        )
    assert queue.lease_by_id(job_id, "w1") is not None
    clock.now += 11
    assert queue.lease_by_id(job_id, "w2") is None  # out of attempts: given up
    assert list(queue.failed(TRIAL, "trial:r_1:")) == ["trial:r_1:c"]
    assert queue.failed(TRIAL, "trial:r%1:") == {}  # LIKE wildcards are escaped


def test_waiting_jobs_are_announced_again_only_when_their_queue_ran_dry(
    queue: JobQueue, clock: Clock
) -> None:
    waiting = queue.enqueue(job("waiting"))
    assert waiting is not None
    clock.now += 61
    assert queue.due_for_dispatch(redispatch_s=60, starved=[TRIAL]) == []
    assert queue.due_for_dispatch(redispatch_s=60, starved=[GRADE]) == [(waiting, GRADE)]
    leased = queue.lease_by_id(waiting, "w1")
    assert leased is not None
    clock.now += 11  # its worker died: due whatever the queue holds
    assert queue.due_for_dispatch(redispatch_s=60, starved=[]) == [(waiting, GRADE)]


def test_a_kinds_priority_comes_before_age(queue: JobQueue) -> None:
    """Replies to comments (priority 1) wait for grade jobs however many came first."""
    for n in range(3):
        queue.enqueue(NewJob(COMMAND, f"c{n}", f"o/r#{n}/comments", {}))
    queue.enqueue(job("grade", subject="o/r#9"))
    leased = [queue.lease("w") for _ in range(4)]
    assert [j.key for j in leased if j is not None] == ["grade", "c0", "c1", "c2"]
