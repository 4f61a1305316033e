"""The GitHub client adapter against the fake API: tokens, rate limits, bounded retries."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from bot.app.github import GitHubError, GitHubRateLimited, _WriteTurns, rate_limit_wait
from tests.bot.app.conftest import INSTALLATION, REPO, Harness, raw, with_head

TOKENS = "/app/installations/{installation_id}/access_tokens"


def _token_calls(harness: Harness) -> int:
    return len(harness.github.writes("POST", TOKENS))


def test_an_expired_token_is_replaced_after_a_401(harness: Harness) -> None:
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert _token_calls(harness) == 1
    harness.github.expire_tokens()
    harness.set_pull("good", head_sha="2" * 40)
    harness.deliver("pull_request", with_head("pull_request/synchronize.payload.json", "2" * 40))
    harness.drain()
    assert any(c.status == 401 for c in harness.github.calls)
    assert _token_calls(harness) == 2
    assert [r["conclusion"] for r in harness.github.check_runs] == ["success", "success"]
    assert [j["state"] for j in harness.service.queue.jobs()] == ["done", "done"]


def test_a_token_is_refreshed_before_it_expires(make_harness: Callable[..., Harness]) -> None:
    harness = make_harness(token_ttl_s=120.0)  # inside the five-minute margin from the start
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert not any(c.status == 401 for c in harness.github.calls)
    assert _token_calls(harness) > 1
    assert harness.github.check_runs[0]["conclusion"] == "success"


@pytest.mark.parametrize(
    ("status", "headers", "waited"),
    [
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "RESET"}, 6.0),
        (429, {"retry-after": "3"}, 3.0),
        (403, {"retry-after": "2"}, 2.0),
    ],
)
def test_rate_limits_are_waited_out_then_retried(
    harness: Harness, status: int, headers: dict[str, str], waited: float
) -> None:
    started = time.time()
    reset = {k: str(int(started) + 5) if v == "RESET" else v for k, v in headers.items()}
    harness.github.fail_next("POST", r"/check-runs$", status, headers=reset)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert harness.sleeps
    # A reset is a moment, so the wait shrinks by however long grading took before the
    # check run was posted; a Retry-After is a duration and is waited in full.
    took = time.time() - started if "x-ratelimit-reset" in headers else 0.0
    assert waited - took - 1.1 <= harness.sleeps[0] <= waited + 1.1
    assert len(harness.github.check_runs) == 1
    assert harness.github.check_runs[0]["conclusion"] == "success"


def test_a_long_rate_limit_puts_the_job_back_until_the_reset(harness: Harness) -> None:
    reset = int(time.time()) + 3600
    harness.github.fail_next(
        "GET",
        r"/pulls/2$",
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
    )
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [job] = harness.service.queue.jobs()
    assert job["state"] == "queued" and "rate limited" in job["last_error"]
    assert job["run_after"] >= reset
    assert harness.sleeps == []


def test_retries_are_bounded(harness: Harness) -> None:
    harness.github.fail_next("GET", r"/pulls/2$", 502, message="Bad gateway", times=10)
    client = harness.service.github.installation(INSTALLATION)
    with pytest.raises(GitHubError, match="kept failing after 3 retries"):
        client.pull(REPO, 2)
    assert harness.sleeps == [1.0, 2.0, 4.0]


def test_a_plain_403_is_not_retried(harness: Harness) -> None:
    harness.github.fail_next("GET", r"/pulls/2$", 403, message="Resource not accessible")
    client = harness.service.github.installation(INSTALLATION)
    with pytest.raises(GitHubError, match="403") as caught:
        client.pull(REPO, 2)
    assert not isinstance(caught.value, GitHubRateLimited)
    assert harness.sleeps == []


def test_rate_limit_wait_rules() -> None:
    assert rate_limit_wait(429, {"Retry-After": "7"}, 0.0) == 7.0
    assert (
        rate_limit_wait(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "100"}, 40.0)
        == 61.0
    )
    assert rate_limit_wait(403, {}, 0.0) is None
    assert rate_limit_wait(429, {}, 0.0) == 60.0
    assert rate_limit_wait(500, {"retry-after": "1"}, 0.0) is None


def test_writes_to_one_installation_are_paced(harness: Harness) -> None:
    app = harness.service.github
    app.policy = type(app.policy)(write_interval_s=10.0)
    client = app.installation(INSTALLATION)
    client.comment(REPO, 2, "one")
    client.comment(REPO, 2, "two")
    assert len(harness.sleeps) == 1 and 9.0 < harness.sleeps[0] <= 10.0


def test_a_waiting_check_run_write_goes_before_waiting_comments() -> None:
    turns = _WriteTurns()
    order: list[str] = []

    def write(name: str, urgent: bool) -> None:
        with turns.turn(urgent=urgent):
            order.append(name)

    with turns.turn(urgent=False):  # a reply being written
        reply = threading.Thread(target=write, args=("reaction", False))
        reply.start()
        check = threading.Thread(target=write, args=("check run", True))
        check.start()
        while turns.waiting_urgent() == 0:  # the check run is queued behind the reply
            time.sleep(0.001)
    check.join()
    reply.join()
    assert order == ["check run", "reaction"]
