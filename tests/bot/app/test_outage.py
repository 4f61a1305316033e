"""GitHub or a judge API unavailable for a while, then back: jobs are put back, never
waited for in a worker thread, and once the API answers again every check run is posted
exactly once (and every trial written once).

The queue and the App's client share a fake clock, so "a while" is moved past instead of
waited for; the fake GitHub fails the way the real one does (5xx, refused connections, a
rate limit with its reset, a write carried out whose answer was lost).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.pool import CARRIED, WorkerPool
from migration_evals.bot.jobs.queue import Job, NewJob
from migration_evals.core.model import Tier, Verdict
from migration_evals.core.settings import Executor
from migration_evals.oracles.judges.retry import BRIEF_WAIT_S
from migration_evals.oracles.runner import RunStatus
from migration_evals.oracles.tiers.judge import JudgeOracle
from tests.bot.app.conftest import Harness, payload
from tests.fakes import FakeTimer, OutageJudge

HEADS = {2: "a" * 40, 3: "b" * 40, 4: "c" * 40}


def _opened(number: int, head_sha: str) -> bytes:
    data = payload("pull_request/opened.payload.json")
    data["number"] = data["pull_request"]["number"] = number
    data["pull_request"]["head"]["sha"] = head_sha
    return json.dumps(data).encode()


def _harness_with_three_prs(make_harness: Callable[..., Harness]) -> tuple[Harness, FakeTimer]:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    for number, sha in HEADS.items():
        harness.set_pull("good", head_sha=sha, number=number)
        assert harness.deliver("pull_request", _opened(number, sha)).status_code == 202
    return harness, clock


def _all_put_back(harness: Harness, clock: FakeTimer, attempts: int) -> None:
    """Every job ran once more, failed as unavailable and waits; then its time comes."""
    assert harness.drain() == len(HEADS)
    jobs = harness.service.queue.admin.jobs()
    assert [(j["state"], j["attempts"]) for j in jobs] == [("queued", attempts)] * len(HEADS)
    assert all(j["last_error"].startswith("unavailable: ") for j in jobs)
    assert all(j["run_after"] > clock.now for j in jobs)
    assert harness.drain() == 0  # nothing is due before its backoff ends
    clock.now = max(j["run_after"] for j in jobs)


def test_github_down_then_back_posts_every_check_run_exactly_once(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _harness_with_three_prs(make_harness)
    gh = harness.github
    # 1. Each check run is created, but the answer is lost on the way back.
    gh.fail_next("POST", r"/check-runs$", 502, message="Bad gateway", times=3, after=True)
    _all_put_back(harness, clock, attempts=1)
    assert len(gh.check_runs) == 3
    # 2. The API answers 502 to everything, token requests included.
    gh.down(502)
    _all_put_back(harness, clock, attempts=2)
    gh.up()
    # 3. Nothing listens.
    gh.refuse()
    _all_put_back(harness, clock, attempts=3)
    gh.come_back()
    # 4. The rate limit is spent until its reset, a quarter of an hour away.
    reset = int(clock.now) + 900
    limit = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    gh.down(403, headers=limit, message="API rate limit exceeded")
    _all_put_back(harness, clock, attempts=4)
    assert clock.now >= reset
    gh.up()

    assert harness.drain() == len(HEADS)
    assert [j["state"] for j in harness.service.queue.admin.jobs()] == ["done"] * len(HEADS)
    for sha in HEADS.values():
        [run] = gh.runs_for(sha)  # found again by its external_id, never created twice
        assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert harness.sleeps == [] and gh.schema_errors == []


def test_a_job_that_never_reaches_github_gives_up_saying_why(
    make_harness: Callable[..., Harness],
) -> None:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    harness.set_pull("good", head_sha=HEADS[2])
    harness.github.down(503, message="Service Unavailable")
    harness.deliver("pull_request", _opened(2, HEADS[2]))
    for _ in range(harness.service.queue.intake.max_attempts):
        assert harness.drain() == 1
        clock.now = max(j["run_after"] for j in harness.service.queue.admin.jobs()) + 1
    [job] = harness.service.queue.admin.jobs()
    assert job["state"] == "failed"
    assert job["last_error"].startswith("gave up after 5 attempt(s); the last failed: unavailable")
    assert "GitHub answered 503: Service Unavailable" in job["last_error"]
    assert harness.github.check_runs == []


def test_a_worker_serves_other_jobs_while_github_is_down(
    make_harness: Callable[..., Harness],
) -> None:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    service = harness.service
    harness.set_pull("good", head_sha=HEADS[2])
    harness.github.down(502)
    harness.deliver("pull_request", _opened(2, HEADS[2]))
    probe = service.queue.kinds.register(JobKind("probe", exclusive=False))
    service.queue.intake.enqueue(NewJob(probe, "probe-1", "probe"))
    served = threading.Event()

    def run_probe(job: Job) -> str:
        served.set()
        return "served"

    pool = WorkerPool(
        service.queue.leasing, {**service.workers.handlers, probe: run_probe}, count=1
    )
    pool.poll_s = 0.01
    pool.start()
    try:
        # One thread: the probe runs only once the grade job has let go of it.
        assert served.wait(30), "the only worker thread stayed with the grade job"
    finally:
        pool.stop()
    states = {j["kind"]: (j["state"], j["attempts"]) for j in service.queue.admin.jobs()}
    assert states == {"grade": ("queued", 1), "probe": ("done", 1)}
    assert harness.sleeps == []


# -- a judge API down, then back -------------------------------------------------------------


def _judge_down(harness: Harness, *, retry_after_s: float | None) -> OutageJudge:
    """The primary judge of the cascade grade jobs use, behind an API that is down."""
    ctx = harness.service.ctx
    plan = replace(ctx.plan, strict=False, executor=Executor.EMBEDDED, jobs=1)
    oracle = ctx.grading.cascades.for_plan(plan).oracles[Tier.JUDGE]
    assert isinstance(oracle, JudgeOracle)
    judge = OutageJudge(oracle.primary, FakeTimer(), down=10**6, retry_after_s=retry_after_s)
    oracle.primary = judge
    return judge


def test_a_judge_down_puts_grade_jobs_back_and_each_pr_gets_its_verdict_once(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _harness_with_three_prs(make_harness)
    judge = _judge_down(harness, retry_after_s=300.0)
    gh = harness.github

    assert harness.drain() == len(HEADS)
    jobs = harness.service.queue.admin.jobs()
    assert [(j["state"], j["attempts"]) for j in jobs] == [("queued", 1)] * len(HEADS)
    assert all(j["last_error"].startswith("unavailable: ") for j in jobs)
    assert all(j["run_after"] >= clock.now + 300.0 for j in jobs)  # the API's Retry-After
    assert all(json.loads(j["payload"])[CARRIED]["tiers"] for j in jobs)
    assert [r["status"] for r in gh.check_runs] == ["in_progress"] * len(HEADS)
    assert judge.timer.sleeps == [] and judge.calls == len(HEADS)  # asked once, not waited
    assert list(harness.service.store.ledger.entries()) == []  # nothing graded is written yet
    assert harness.drain() == 0  # nothing is due before the API asked

    judge.down = judge.calls  # the API answers again
    clock.now = max(j["run_after"] for j in jobs)
    assert harness.drain() == len(HEADS)
    assert [j["state"] for j in harness.service.queue.admin.jobs()] == ["done"] * len(HEADS)
    for sha in HEADS.values():
        [run] = gh.runs_for(sha)  # found again by its external_id, never created twice
        assert (run["status"], run["conclusion"]) == ("completed", "success")
    store = harness.service.store
    entries = list(store.ledger.entries())
    trials = {entry.trial_id for entry in entries}
    assert len(trials) == len(HEADS) and len(entries) == len(HEADS) * len(Tier)
    assert all(
        "carried_from" in e.envelope.details for e in entries if e.envelope.tier != Tier.JUDGE
    )
    # The three heads carry one diff: once one answer is in the ledger it serves the others.
    assert judge.answered == 1
    assert sum(e.envelope.cached for e in entries if e.envelope.tier is Tier.JUDGE) == 2
    statuses = sorted(str(run["status"]) for run in store.runs.all())
    assert statuses == sorted([RunStatus.COMPLETED] * 3 + [RunStatus.DEFERRED] * 3)
    assert judge.timer.sleeps == [] and harness.sleeps == [] and gh.schema_errors == []


def test_on_the_last_attempt_a_judge_still_down_grades_error_saying_why(
    make_harness: Callable[..., Harness],
) -> None:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    harness.set_pull("good", head_sha=HEADS[2])
    judge = _judge_down(harness, retry_after_s=None)
    harness.deliver("pull_request", _opened(2, HEADS[2]))
    queue = harness.service.queue
    for attempt in range(1, queue.intake.max_attempts):
        assert harness.drain() == 1
        [job] = queue.admin.jobs()
        assert (job["state"], job["attempts"]) == ("queued", attempt)
        clock.now = job["run_after"] + 1
    assert max(judge.timer.sleeps) <= BRIEF_WAIT_S  # one quick retry per attempt at most
    assert harness.drain() == 1  # the last attempt
    [job] = queue.admin.jobs()
    assert job["state"] == "done"
    [run] = harness.github.runs_for(HEADS[2])
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")
    entries = list(harness.service.store.ledger.entries())
    assert [e.envelope.verdict for e in entries] == [Verdict.PASS] * 3 + [Verdict.ERROR]
    reason = entries[-1].envelope.reason
    assert "the judge API answered 429" in reason and "gave up after 5 attempt(s)" in reason
