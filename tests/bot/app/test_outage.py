"""GitHub unavailable for a while, then back: jobs are put back, never waited for in a
worker thread, and once GitHub answers again every check run is posted exactly once.

The queue and the App's client share a fake clock, so "a while" is moved past instead of
waited for; the fake GitHub fails the way the real one does (5xx, refused connections, a
rate limit with its reset, a write carried out whose answer was lost).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from bot.jobs.kinds import JobKind
from bot.jobs.pool import WorkerPool
from bot.jobs.queue import Job, NewJob
from tests.bot.app.conftest import Harness, payload
from tests.fakes import FakeTimer

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
    jobs = harness.service.queue.jobs()
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
    assert [j["state"] for j in harness.service.queue.jobs()] == ["done"] * len(HEADS)
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
    for _ in range(harness.service.queue.max_attempts):
        assert harness.drain() == 1
        clock.now = max(j["run_after"] for j in harness.service.queue.jobs()) + 1
    [job] = harness.service.queue.jobs()
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
    service.queue.enqueue(NewJob(probe, "probe-1", "probe"))
    served = threading.Event()

    def run_probe(job: Job) -> str:
        served.set()
        return "served"

    pool = WorkerPool(service.queue, {**service.workers.handlers, probe: run_probe}, count=1)
    pool.poll_s = 0.01
    pool.start()
    try:
        # One thread: the probe runs only once the grade job has let go of it.
        assert served.wait(30), "the only worker thread stayed with the grade job"
    finally:
        pool.stop()
    states = {j["kind"]: (j["state"], j["attempts"]) for j in service.queue.jobs()}
    assert states == {"grade": ("queued", 1), "probe": ("done", 1)}
    assert harness.sleeps == []
