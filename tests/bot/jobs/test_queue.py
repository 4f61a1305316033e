"""The durable job queue: idempotent intake, leases, dead workers, one job per subject."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migration_evals.bot.app.kinds import COMMAND, GRADE
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.queue import JobQueue, JobState, NewJob, QueueOptions, build_queue
from migration_evals.core.retry import Backoff
from migration_evals.core.settings import GitHubAppSettings, Settings
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
    return build_queue(store, all_kinds(), QueueOptions(lease_s=10.0, max_attempts=3), clock=clock)


def job(key: str, subject: str = "o/r#1") -> NewJob:
    return NewJob(GRADE, key, subject, {"key": key})


def test_a_delivery_is_recorded_once_and_job_keys_are_unique(queue: JobQueue) -> None:
    first = queue.intake.accept("d1", "pull_request", [job("a")])
    assert not first.duplicate and len(first.job_ids) == 1
    assert queue.intake.accept("d1", "pull_request", [job("a")]).duplicate
    again = queue.intake.accept("d2", "pull_request", [job("a"), job("b")])
    assert not again.duplicate and len(again.job_ids) == 1
    assert queue.admin.deliveries() == 2 and len(queue.admin.jobs()) == 2


def test_a_dead_workers_job_is_leased_again_after_its_lease(queue: JobQueue, clock: Clock) -> None:
    queue.intake.enqueue(job("a"))
    leased = queue.leasing.lease("w1")
    assert leased is not None and leased.attempts == 1
    assert queue.leasing.lease("w2") is None  # still leased
    clock.now += 11
    again = queue.leasing.lease("w2")
    assert again is not None and again.id == leased.id and again.attempts == 2
    assert not queue.leasing.complete(leased, "w1")  # the dead worker lost it
    assert queue.leasing.complete(again, "w2", "ok")
    assert queue.admin.jobs()[0]["state"] == JobState.DONE


def test_a_heartbeat_keeps_the_lease(queue: JobQueue, clock: Clock) -> None:
    queue.intake.enqueue(job("a"))
    leased = queue.leasing.lease("w1")
    assert leased is not None
    clock.now += 8
    assert queue.leasing.heartbeat(leased, "w1")
    clock.now += 8
    assert queue.leasing.lease("w2") is None


def test_jobs_of_one_subject_never_run_at_once(queue: JobQueue) -> None:
    queue.intake.enqueue(job("a", "o/r#1"))
    queue.intake.enqueue(job("b", "o/r#1"))
    queue.intake.enqueue(job("c", "o/r#2"))
    first, second = queue.leasing.lease("w1"), queue.leasing.lease("w2")
    assert first is not None and second is not None
    assert (first.key, second.key) == ("a", "c")
    assert queue.leasing.lease("w3") is None
    queue.leasing.complete(first, "w1")
    third = queue.leasing.lease("w3")
    assert third is not None and third.key == "b"


def test_failures_back_off_then_give_up(queue: JobQueue, clock: Clock) -> None:
    queue.intake.enqueue(job("a"))
    for attempt in range(1, 4):
        leased = queue.leasing.lease("w")
        assert leased is not None and leased.attempts == attempt
        queue.leasing.fail(leased, "w", f"boom {attempt}")
        clock.now += 1000
    [row] = queue.admin.jobs()
    assert row["state"] == JobState.FAILED
    assert row["last_error"] == "gave up after 3 attempt(s); the last failed: boom 3"


def test_a_job_whose_workers_keep_dying_ends_failed(queue: JobQueue, clock: Clock) -> None:
    queue.intake.enqueue(job("a"))
    for _ in range(3):
        assert queue.leasing.lease("w") is not None
        clock.now += 11
    assert queue.leasing.lease("w") is None
    [row] = queue.admin.jobs()
    assert row["state"] == JobState.FAILED and "gave up after 3" in row["last_error"]


def test_named_lease_has_one_holder_until_it_expires(queue: JobQueue, clock: Clock) -> None:
    assert queue.named_leases.hold_lease("scheduler", "p1", 30)
    assert not queue.named_leases.hold_lease("scheduler", "p2", 30)
    assert queue.named_leases.hold_lease("scheduler", "p1", 30)
    clock.now += 31
    assert queue.named_leases.hold_lease("scheduler", "p2", 30)
    assert not queue.named_leases.hold_lease("scheduler", "p1", 30)


def test_a_delivery_names_the_job_it_leases(queue: JobQueue, clock: Clock) -> None:
    job_id = queue.intake.enqueue(job("a"))
    assert job_id is not None
    leased = queue.leasing.lease_by_id(job_id, "w1")
    assert leased is not None and leased.attempts == 1
    assert (
        queue.leasing.lease_by_id(job_id, "w2") is None
    )  # a repeated delivery: held by a live lease
    assert queue.leasing.complete(leased, "w1", "ok")
    assert queue.leasing.lease_by_id(job_id, "w2") is None  # and after it is done
    assert queue.leasing.lease_by_id(9999, "w2") is None


def test_a_delivery_respects_kinds_subjects_and_the_clock(queue: JobQueue, clock: Clock) -> None:
    first = queue.intake.enqueue(job("a", subject="pr"))
    second = queue.intake.enqueue(job("b", subject="pr"))
    later = queue.intake.enqueue(job("c", subject="other"), delay_s=30)
    assert first is not None and second is not None and later is not None
    assert queue.leasing.lease_by_id(first, "w1", kinds=[TRIAL]) is None
    assert queue.leasing.lease_by_id(first, "w1") is not None
    assert queue.leasing.lease_by_id(second, "w2") is None  # its pull request is being graded
    assert queue.leasing.lease_by_id(later, "w2") is None  # not due yet
    clock.now += 31
    assert queue.leasing.lease_by_id(later, "w2") is not None


def test_trial_jobs_are_inserted_together_and_never_wait_for_each_other(queue: JobQueue) -> None:
    trials = [NewJob(TRIAL, f"trial:r:{n}", f"trial:{n}", {"n": n}) for n in range(3)]
    with queue.store.db.engine.begin() as conn:
        ids = queue.intake.insert_many(conn, trials, max_attempts=2)
    assert len(ids) == 3 and ids == sorted(ids)
    leased = [queue.leasing.lease_by_id(job_id, f"w{job_id}") for job_id in ids]
    assert all(j is not None and j.max_attempts == 2 for j in leased)
    assert queue.leasing.lease("w9", kinds=[GRADE]) is None


def test_new_jobs_are_announced_after_they_are_stored(queue: JobQueue) -> None:
    announced: list[tuple[int, JobKind]] = []
    queue.table.on_new_jobs = announced.extend
    accepted = queue.intake.accept("d1", "pull_request", [job("a"), job("b")])
    assert announced == [(i, GRADE) for i in accepted.job_ids]
    queue.intake.accept("d1", "pull_request", [job("a")])  # a repeated delivery announces nothing
    queue.intake.enqueue(job("a"))  # nor does a key that exists
    queue.intake.enqueue(job("c"), delay_s=60)  # a delayed job is announced when it is due
    assert len(announced) == 2


def test_lost_announcements_are_found_again(queue: JobQueue, clock: Clock) -> None:
    fresh = queue.intake.enqueue(job("fresh", subject="s1"))
    dead = queue.intake.enqueue(job("dead", subject="s2"))
    delayed = queue.intake.enqueue(job("delayed", subject="s3"), delay_s=5)
    assert fresh is not None and dead is not None and delayed is not None
    assert queue.leasing.due_for_dispatch(redispatch_s=60) == []  # all just announced or not due
    leased = queue.leasing.lease_by_id(dead, "w1")
    assert leased is not None
    clock.now += 6
    assert queue.leasing.due_for_dispatch(redispatch_s=60) == [(delayed, GRADE)]
    clock.now += 10  # the dead worker's lease (10 s) has run out
    assert queue.leasing.due_for_dispatch(redispatch_s=60) == [(dead, GRADE)]
    assert queue.leasing.due_for_dispatch(redispatch_s=60) == []  # announced: not again at once
    clock.now += 61  # nothing took them for a whole redispatch interval
    due = [job_id for job_id, _ in queue.leasing.due_for_dispatch(redispatch_s=60)]
    assert due == [fresh, dead, delayed]


def test_failed_jobs_are_found_by_key_prefix(queue: JobQueue, clock: Clock) -> None:
    with queue.store.db.engine.begin() as conn:
        [job_id] = queue.intake.insert_many(
            conn, [NewJob(TRIAL, "trial:r_1:c", "trial:x", {})], max_attempts=1
        )
    assert queue.leasing.lease_by_id(job_id, "w1") is not None
    clock.now += 11
    assert queue.leasing.lease_by_id(job_id, "w2") is None  # out of attempts: given up
    assert list(queue.admin.failed(TRIAL, "trial:r_1:")) == ["trial:r_1:c"]
    assert queue.admin.failed(TRIAL, "trial:r%1:") == {}  # LIKE wildcards are escaped


def test_waiting_jobs_are_announced_again_only_when_their_queue_ran_dry(
    queue: JobQueue, clock: Clock
) -> None:
    waiting = queue.intake.enqueue(job("waiting"))
    assert waiting is not None
    clock.now += 61
    assert queue.leasing.due_for_dispatch(redispatch_s=60, starved=[TRIAL]) == []
    assert queue.leasing.due_for_dispatch(redispatch_s=60, starved=[GRADE]) == [(waiting, GRADE)]
    leased = queue.leasing.lease_by_id(waiting, "w1")
    assert leased is not None
    clock.now += 11  # its worker died: due whatever the queue holds
    assert queue.leasing.due_for_dispatch(redispatch_s=60, starved=[]) == [(waiting, GRADE)]


def test_a_kinds_priority_comes_before_age(queue: JobQueue) -> None:
    """Replies to comments (priority 1) wait for grade jobs however many came first."""
    for n in range(3):
        queue.intake.enqueue(NewJob(COMMAND, f"c{n}", f"o/r#{n}/comments", {}))
    queue.intake.enqueue(job("grade", subject="o/r#9"))
    leased = [queue.leasing.lease("w") for _ in range(4)]
    assert [j.key for j in leased if j is not None] == ["grade", "c0", "c1", "c2"]


def test_options_come_from_the_apps_job_settings_and_a_worker_keeps_the_trial_lease(
    tmp_path: Path,
) -> None:
    app = GitHubAppSettings(
        job_lease_s=42.0, job_max_attempts=7, job_retry_s=3.0, job_retry_max_s=90.0
    )
    settings = Settings(
        specs_dir=tmp_path, cassette_dir=tmp_path, cache_dir=tmp_path, github_app=app
    )
    options = QueueOptions.of(settings)
    assert (options.lease_s, options.max_attempts) == (42.0, 7)
    assert options.backoff == Backoff(base_s=3.0, max_s=90.0)
    assert QueueOptions.of(settings, lease_s=12.0).lease_s == 12.0


def test_the_parts_share_one_table_and_the_options_they_were_built_with(
    queue: JobQueue, clock: Clock
) -> None:
    parts = (queue.intake, queue.leasing, queue.admin, queue.named_leases)
    assert all(part.table is queue.table for part in parts)
    assert (queue.leasing.lease_s, queue.intake.max_attempts) == (10.0, 3)
    queue.table.clock = lambda: 5_000.0  # one clock: every part moves with it
    job_id = queue.intake.enqueue(job("a"))
    leased = queue.leasing.lease("w1")
    assert leased is not None and leased.id == job_id
    [row] = queue.admin.jobs()
    assert (row["created_at"], row["lease_until"]) == (5_000.0, 5_010.0)


def test_only_the_job_package_builds_the_queues_parts() -> None:
    """``build_queue`` is the one construction: nothing else makes a part or a table."""
    root = Path(__file__).resolve().parents[3] / "migration_evals"
    allowed = {root / "bot" / "jobs" / "queue.py"}
    made = re.compile(r"\b(JobTable|Intake|Leasing|Administration|NamedLeases|JobQueue)\(")
    builders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path not in allowed and made.search(path.read_text(encoding="utf-8"))
    ]
    assert builders == []


def test_the_queue_defaults_are_the_settings_defaults() -> None:
    """One copy of each default: a queue built without options behaves as the App would
    with nothing set."""
    app = GitHubAppSettings()
    options = QueueOptions()
    assert (options.lease_s, options.max_attempts) == (app.job_lease_s, app.job_max_attempts)
    assert (options.backoff.base_s, options.backoff.max_s) == (app.job_retry_s, app.job_retry_max_s)
