"""The one reading of "come back later" (Retry-After, rate-limit resets) and the backoff."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from migration_evals.core.retry import (
    SECONDARY_LIMIT_WAIT_S,
    Backoff,
    rate_limit_wait_s,
    retry_after_s,
)

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"Retry-After": "Sun, 29 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Sun, 29 Nov 2026 11:00:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds_or_as_a_date(
    headers: dict[str, str], expected: float | None
) -> None:
    assert retry_after_s(headers, NOW) == expected


def test_github_rate_limit_rules() -> None:
    assert rate_limit_wait_s(429, {"Retry-After": "7"}, 0.0) == 7.0
    exhausted = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "100"}
    assert rate_limit_wait_s(403, exhausted, 40.0) == 61.0  # +1: the reset is a whole second
    assert rate_limit_wait_s(403, exhausted, 400.0) == 1.0  # already reset: retry now
    assert rate_limit_wait_s(403, {"x-ratelimit-remaining": "0"}, 0.0) == SECONDARY_LIMIT_WAIT_S
    assert rate_limit_wait_s(429, {}, 0.0) == SECONDARY_LIMIT_WAIT_S
    assert rate_limit_wait_s(403, {}, 0.0) is None  # a refusal, not a limit
    assert rate_limit_wait_s(500, {"retry-after": "1"}, 0.0) is None


def test_backoff_doubles_up_to_its_cap_half_fixed_half_random() -> None:
    backoff = Backoff(base_s=2.0, max_s=10.0)
    assert [backoff.delay_s(retry, 1.0) for retry in range(5)] == [2.0, 4.0, 8.0, 10.0, 10.0]
    assert [backoff.delay_s(retry, 0.0) for retry in range(3)] == [1.0, 2.0, 4.0]


def test_a_wait_the_server_asked_for_outlasts_the_backoff() -> None:
    backoff = Backoff(base_s=2.0, max_s=10.0)
    assert backoff.wait_s(0, 1.0, asked_s=3600.0) == 3600.0
    assert backoff.wait_s(3, 1.0, asked_s=1.0) == 10.0  # the backoff, capped
    assert backoff.wait_s(1, 0.5) == 3.0
