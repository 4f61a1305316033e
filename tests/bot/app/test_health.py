"""``/healthz`` says when the App cannot do its work: GitHub unreachable, jobs failing,
the database away; and says ok again once they are mended."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from migration_evals.bot.app.health import FAILING_WINDOW_S
from tests.bot.app.conftest import Harness, raw
from tests.fakes import FakeTimer


def _health(harness: Harness) -> tuple[int, dict[str, Any]]:
    answer = harness.client.get("/healthz")
    return answer.status_code, answer.get_json()


def _later(clock: FakeTimer, seconds: float = 31.0) -> None:
    """Past the probes' cache (30 s)."""
    clock.now += seconds


def _timed(make_harness: Callable[..., Harness]) -> tuple[Harness, FakeTimer]:
    clock = FakeTimer(now=time.time())
    return make_harness(clock=clock), clock


def test_healthy_says_ok_with_each_check(make_harness: Callable[..., Harness]) -> None:
    harness, _ = _timed(make_harness)
    code, health = _health(harness)
    assert code == 200 and health["ok"] is True and health["status"] == "ok"
    assert health["checks"] == {"database": "ok", "jobs": "ok", "github": "ok"}
    assert health["reasons"] == []
    assert [c.route for c in harness.github.calls] == ["/app"]  # the App as itself


def test_github_unreachable_is_degraded_until_it_answers(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _timed(make_harness)
    assert _health(harness)[0] == 200
    harness.github.refuse()
    assert _health(harness)[0] == 200  # the last probe is kept for a while
    _later(clock)
    code, health = _health(harness)
    assert code == 503 and health["status"] == "degraded" and health["ok"] is False
    [reason] = health["reasons"]
    assert reason.startswith("github: GitHub is unavailable to the App at http://127.0.0.1:")
    assert "cannot reach GitHub" in reason
    harness.github.come_back()
    _later(clock)
    assert _health(harness)[0] == 200


def test_github_refusing_the_apps_key_is_degraded(make_harness: Callable[..., Harness]) -> None:
    harness, _ = _timed(make_harness)
    harness.github.public_key = (
        "-----BEGIN PUBLIC KEY-----\nnot the App's\n-----END PUBLIC KEY-----"
    )
    code, health = _health(harness)
    assert code == 503
    assert health["reasons"][0].startswith("github: GitHub refused the App's id or private key")


def test_failing_jobs_make_the_app_degraded_with_their_cause(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _timed(make_harness)
    harness.github.fail_next("GET", r"/pulls/2$", 502, message="Bad gateway", times=10)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    assert harness.drain() >= 1
    code, health = _health(harness)
    assert code == 503 and health["checks"]["github"] == "ok"  # GitHub answers the App
    assert health["checks"]["jobs"].endswith(" failing")
    [reason] = health["reasons"]
    assert "(grade, queued after 1 of 5 attempts): unavailable: GitHub answered 502" in reason
    assert "`migration-evals jobs list` shows them" in reason

    harness.github._failures.clear()  # the API mends; the job's next attempt succeeds
    clock.now = max(j["run_after"] for j in harness.service.queue.admin.jobs()) + 1
    assert harness.drain() >= 1
    _later(clock)
    code, health = _health(harness)
    assert code == 200 and health["status"] == "ok", health["reasons"]


def test_a_job_that_gave_up_stays_a_reason_for_an_hour(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _timed(make_harness)
    harness.github.fail_next("GET", r"/pulls/2$", 404, message="Not Found", times=100)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    queue = harness.service.queue
    while any(j["kind"] == "grade" and j["state"] != "failed" for j in queue.admin.jobs()):
        assert harness.drain() >= 1
        clock.now = max(j["run_after"] for j in queue.admin.jobs()) + 1
    health = _health(harness)[1]
    assert "failed after 5 of 5 attempts" in health["reasons"][0]
    _later(clock, FAILING_WINDOW_S + 1)
    code, health = _health(harness)
    assert code == 200, health["reasons"]


def test_the_database_away_is_down(make_harness: Callable[..., Harness]) -> None:
    harness, _ = _timed(make_harness)
    harness.service.queue.admin.ping = lambda: False  # type: ignore[method-assign]
    code, health = _health(harness)
    assert code == 503 and health["status"] == "down"
    assert health["reasons"] == ["the database does not answer: deliveries cannot be stored"]
