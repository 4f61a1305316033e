"""The pacing rule for content-creating requests to one installation."""

from __future__ import annotations

import itertools

import pytest

from migration_evals.bot.app.pacing import GITHUB_PACING, PacingRule, WritePacing, schedule


def test_the_rule_is_githubs_documented_one() -> None:
    # GitHub's REST docs, "About secondary rate limits" and "Best practices": no more than
    # 80 content-generating requests a minute, 500 an hour, a second between writes.
    assert (GITHUB_PACING.min_interval_s, GITHUB_PACING.per_minute, GITHUB_PACING.per_hour) == (
        1.0,
        80,
        500,
    )


def test_a_first_write_goes_at_once_and_the_next_a_second_later() -> None:
    pacing = WritePacing()
    assert pacing.wait_s(100.0) == 0.0
    pacing.note(100.0)
    assert pacing.wait_s(100.25) == pytest.approx(0.75)
    assert pacing.wait_s(101.5) == 0.0


def test_no_minute_ever_holds_more_than_the_limit() -> None:
    rule = PacingRule(min_interval_s=0.1, per_minute=80, per_hour=500)
    sent = schedule(rule, 200)
    assert _most_in_any(sent, 60.0) == 80
    assert sent[79] == pytest.approx(7.9)  # the first 80 go a tenth of a second apart
    assert sent[80] == pytest.approx(60.0)  # the 81st waits for the first to leave the minute


def test_no_hour_ever_holds_more_than_the_limit() -> None:
    sent = schedule(GITHUB_PACING, 1000)
    assert _most_in_any(sent, 3600.0) == 500
    assert _most_in_any(sent, 60.0) <= 80
    assert min(b - a for a, b in itertools.pairwise(sent)) >= 1.0 - 1e-9
    assert sent[500] >= 3600.0  # a burst of 1,000 on one installation cannot beat the hour


def test_a_limit_of_zero_paces_nothing() -> None:
    sent = schedule(PacingRule(min_interval_s=0.0, per_minute=0, per_hour=0), 1000)
    assert sent[-1] == 0.0


def test_writes_older_than_an_hour_are_forgotten() -> None:
    pacing = WritePacing(PacingRule(min_interval_s=0.0, per_minute=0, per_hour=2))
    pacing.note(0.0)
    pacing.note(1.0)
    assert pacing.wait_s(2.0) == pytest.approx(3598.0)
    assert pacing.wait_s(3601.0) == 0.0


def _most_in_any(sent: list[float], window_s: float) -> int:
    """The most writes any window of ``window_s`` (half-open) holds."""
    most, start = 0, 0
    for end, at in enumerate(sent):
        while sent[start] + window_s <= at:
            start += 1
        most = max(most, end - start + 1)
    return most
