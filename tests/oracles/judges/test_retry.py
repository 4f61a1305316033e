"""The retry policy on its own: what is retried, how long it waits, when it gives up."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from migration_evals.core.errors import JudgeRequestError, JudgeUnavailableError
from migration_evals.oracles.judges.retry import (
    BRIEF_RETRIES,
    BRIEF_WAIT_S,
    Retrying,
    RetryPolicy,
    briefly,
    retry_after_s,
)
from tests.fakes import FakeTimer


class Flaky:
    """Fails with the given errors in turn, then answers; records the timeouts it got."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.timeouts: list[float] = []

    def __call__(self, timeout: float) -> str:
        self.timeouts.append(timeout)
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


def _retrying(clock: FakeTimer, policy: RetryPolicy, jitter: float = 1.0) -> Retrying:
    return Retrying(policy, sleep=clock.sleep, clock=clock, jitter=lambda: jitter)


def test_backoff_doubles_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    assert [policy.backoff_s(n, 1.0) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    # The jitter keeps at least half of the wait.
    assert [policy.backoff_s(n, 0.0) for n in range(3)] == [0.5, 1.0, 2.0]


def test_transient_errors_are_retried_then_answered() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeUnavailableError("429"), JudgeUnavailableError("503"))
    assert _retrying(clock, RetryPolicy(max_retries=4)).call(attempt) == "answer"
    assert clock.sleeps == [1.0, 2.0]


def test_retry_after_replaces_the_backoff() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeUnavailableError("429", retry_after_s=7.5))
    _retrying(clock, RetryPolicy()).call(attempt)
    assert clock.sleeps == [7.5]


def test_other_judge_errors_are_not_retried() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeRequestError("400"))
    with pytest.raises(JudgeRequestError):
        _retrying(clock, RetryPolicy()).call(attempt)
    assert clock.sleeps == [] and len(attempt.timeouts) == 1


def test_zero_retries_means_one_attempt() -> None:
    clock = FakeTimer()
    with pytest.raises(JudgeUnavailableError, match=r"after 1 attempt\(s\): 0 retries spent"):
        _retrying(clock, RetryPolicy(max_retries=0)).call(Flaky(JudgeUnavailableError("503")))


def test_each_attempt_gets_what_is_left_of_the_deadline() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeUnavailableError("503"), JudgeUnavailableError("503"))
    _retrying(clock, RetryPolicy(deadline_s=10, attempt_timeout_s=8)).call(attempt)
    # 8 s cap, then 10 - 1 s waited = 9 s left (capped at 8), then 10 - 3 s = 7 s left.
    assert attempt.timeouts == [8.0, 8.0, 7.0]


def test_a_wait_that_would_pass_the_deadline_is_not_taken() -> None:
    clock = FakeTimer()
    attempt = Flaky(*[JudgeUnavailableError("503")] * 10)
    with pytest.raises(JudgeUnavailableError, match="would pass the 6s limit") as caught:
        _retrying(clock, RetryPolicy(max_retries=10, deadline_s=6)).call(attempt)
    assert clock.sleeps == [1.0, 2.0]  # a further 4 s would end at 7 s, past the 6 s limit
    assert isinstance(caught.value.__cause__, JudgeUnavailableError)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Sun, 29 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Sun, 29 Nov 2026 11:00:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x"}, None),
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    assert retry_after_s(headers, now) == expected


def test_briefly_a_question_is_retried_once_after_a_short_wait() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeUnavailableError("503"), JudgeUnavailableError("503"))
    with briefly(), pytest.raises(JudgeUnavailableError) as raised:
        _retrying(clock, RetryPolicy(max_retries=4, base_delay_s=5.0)).call(attempt)
    assert len(attempt.timeouts) == 1 + BRIEF_RETRIES
    assert clock.sleeps == [BRIEF_WAIT_S]  # the backoff, cut to the brief wait
    assert "1 retries spent" in str(raised.value)


def test_briefly_a_longer_retry_after_is_not_waited_for_but_kept() -> None:
    clock = FakeTimer()
    attempt = Flaky(JudgeUnavailableError("429", retry_after_s=45.0))
    with briefly(), pytest.raises(JudgeUnavailableError) as raised:
        _retrying(clock, RetryPolicy()).call(attempt)
    assert clock.sleeps == [] and len(attempt.timeouts) == 1
    assert raised.value.retry_after_s == 45.0  # the job is put back no sooner than asked
    assert "longer than a worker waits" in str(raised.value)


def test_the_brief_mode_ends_with_its_block() -> None:
    clock = FakeTimer()
    with briefly():
        pass
    attempt = Flaky(*(JudgeUnavailableError("503") for _ in range(3)))
    assert _retrying(clock, RetryPolicy(max_retries=4)).call(attempt) == "answer"
    assert clock.sleeps == [1.0, 2.0, 4.0]


def test_giving_up_keeps_the_wait_the_server_asked_for() -> None:
    clock = FakeTimer()
    attempt = Flaky(*(JudgeUnavailableError("429", retry_after_s=7.0) for _ in range(3)))
    with pytest.raises(JudgeUnavailableError) as raised:
        _retrying(clock, RetryPolicy(max_retries=2)).call(attempt)
    assert raised.value.retry_after_s == 7.0
