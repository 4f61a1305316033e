"""The GitHub client adapter against the fake API: tokens, outages and rate limits, pacing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from migration_evals.bot.app.github import GitHubError, GitHubUnavailable, _WriteTurns
from migration_evals.bot.app.pacing import PacingRule
from migration_evals.core.github.live import _parsed_private_key
from migration_evals.core.ports import PullRequestInfo
from tests.bot.app.conftest import INSTALLATION, REPO, Harness, raw, with_head
from tests.fakes import FakeTimer

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
    assert [j["state"] for j in harness.service.queue.admin.jobs()] == ["done", "done"]


def test_a_token_is_refreshed_before_it_expires(make_harness: Callable[..., Harness]) -> None:
    harness = make_harness(token_ttl_s=120.0)  # inside the five-minute margin from the start
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    assert not any(c.status == 401 for c in harness.github.calls)
    assert _token_calls(harness) > 1
    assert harness.github.check_runs[0]["conclusion"] == "success"


def test_the_apps_key_is_parsed_once_for_every_jwt(make_harness: Callable[..., Harness]) -> None:
    _parsed_private_key.cache_clear()
    harness = make_harness(token_ttl_s=120.0)  # a new token, so a new JWT, at every call
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    # The fake GitHub checked each JWT against the App's public key before granting.
    assert _token_calls(harness) > 1
    assert harness.github.check_runs[0]["conclusion"] == "success"
    cached = _parsed_private_key.cache_info()
    assert (cached.misses, cached.hits) == (1, _token_calls(harness) - 1)


@pytest.mark.parametrize(
    ("status", "headers", "asked"),
    [
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "RESET"}, 901.0),
        (429, {"retry-after": "700"}, 700.0),
        (403, {"retry-after": "800"}, 800.0),
        (503, {"retry-after": "650"}, 650.0),
    ],
)
def test_a_rate_limit_puts_the_job_back_until_it_ends(
    make_harness: Callable[..., Harness], status: int, headers: dict[str, str], asked: float
) -> None:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    reset = {k: str(int(clock.now) + 900) if v == "RESET" else v for k, v in headers.items()}
    harness.github.fail_next("POST", r"/check-runs$", status, headers=reset)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    failed_at = clock.now
    assert harness.drain() == 1
    [job] = harness.service.queue.admin.jobs()
    assert job["state"] == "queued" and "unavailable" in job["last_error"]
    # Longer than any backoff (at most 600 s): only the response can have asked for it. A
    # reset is a moment (+1 s: it is a whole second); a Retry-After is a duration.
    assert job["run_after"] >= failed_at + asked - 1.0
    assert harness.sleeps == [] and harness.github.check_runs == []
    clock.now = job["run_after"]
    assert harness.drain() == 1
    assert [r["conclusion"] for r in harness.github.check_runs] == ["success"]
    assert [j["state"] for j in harness.service.queue.admin.jobs()] == ["done"]


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
    [job] = harness.service.queue.admin.jobs()
    assert job["state"] == "queued" and "rate limited" in job["last_error"]
    assert job["run_after"] >= reset
    assert harness.sleeps == []


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error_surfaces_at_once_without_waiting(harness: Harness, status: int) -> None:
    harness.github.fail_next("GET", r"/pulls/2$", status, message="Bad gateway", times=10)
    client = harness.service.github.installation(INSTALLATION)
    with pytest.raises(GitHubUnavailable, match=f"GitHub answered {status}: Bad gateway"):
        client.pull(REPO, 2)
    assert len([c for c in harness.github.calls if c.path.endswith("/pulls/2")]) == 1
    assert harness.sleeps == []


def test_an_unreachable_api_surfaces_at_once(harness: Harness) -> None:
    client = harness.service.github.installation(INSTALLATION)
    client.pull(REPO, 2)  # a token first, so that only the API call meets the refusal
    harness.github.refuse()
    with pytest.raises(GitHubUnavailable, match="cannot reach GitHub") as caught:
        client.pull(REPO, 2)
    assert caught.value.retry_after_s is None and harness.sleeps == []
    harness.github.come_back()
    assert client.pull(REPO, 2)["number"] == 2


def test_a_plain_403_is_not_retried(harness: Harness) -> None:
    harness.github.fail_next("GET", r"/pulls/2$", 403, message="Resource not accessible")
    client = harness.service.github.installation(INSTALLATION)
    with pytest.raises(GitHubError, match="403") as caught:
        client.pull(REPO, 2)
    assert not isinstance(caught.value, GitHubUnavailable)
    assert harness.sleeps == []


def test_the_client_reads_one_pull_request_type(harness: Harness) -> None:
    client = harness.service.github.installation(INSTALLATION)
    pull = client.pull_request(REPO, 2)
    assert isinstance(pull, PullRequestInfo)
    assert (pull.repo, pull.number, pull.state) == (REPO, 2, "open")
    assert pull.head_sha == harness.github.pulls[(REPO, 2)].head_sha
    assert client.diff(REPO, 2) == harness.github.pulls[(REPO, 2)].diff


def test_writes_to_one_installation_are_paced(harness: Harness) -> None:
    app = harness.service.github
    app.policy = type(app.policy)(pacing=PacingRule(min_interval_s=10.0))
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


def test_a_secondary_limit_named_only_in_its_message_puts_the_job_back_a_minute(
    make_harness: Callable[..., Harness],
) -> None:
    # GitHub may answer a secondary limit with a 403 whose only sign is its message; the
    # documented advice then is to wait at least a minute.
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    message = "You have exceeded a secondary rate limit. Please wait a few minutes."
    harness.github.fail_next("POST", r"/check-runs$", 403, message=message)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    failed_at = clock.now
    assert harness.drain() == 1
    [job] = harness.jobs()
    assert job["state"] == "queued" and "rate limited" in job["last_error"]
    assert job["run_after"] >= failed_at + 60.0 - 1.0
