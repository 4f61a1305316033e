"""A GitHub failure after grading does not grade again: the graded trial is kept and only
the GitHub step is retried; a new job for the same head (a Re-run) still grades afresh."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.bot.app.conftest import Harness, raw
from tests.fakes import FakeTimer


def _trials(harness: Harness) -> set[str]:
    return {entry.trial_id for entry in harness.service.store.ledger.entries()}


def _retry_due(harness: Harness, clock: FakeTimer) -> None:
    clock.now = max(j["run_after"] for j in harness.service.queue.admin.jobs()) + 1


def _graded_then_publishing_fails(
    make_harness: Callable[..., Harness], *, after: bool
) -> tuple[Harness, FakeTimer]:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    # The check run's completion: refused (502), or carried out with its answer lost.
    harness.github.fail_next("PATCH", r"/check-runs/\d+$", 502, message="Bad gateway", after=after)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [grade] = [j for j in harness.service.queue.admin.jobs() if j["kind"] == "grade"]
    assert (grade["state"], grade["attempts"]) == ("queued", 1)
    assert "GitHub answered 502" in grade["last_error"]
    return harness, clock


def test_a_check_run_refused_after_grading_is_published_without_grading_again(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _graded_then_publishing_fails(make_harness, after=False)
    [graded] = _trials(harness)
    rows = len(list(harness.service.store.ledger.entries()))
    _retry_due(harness, clock)
    harness.drain()
    assert _trials(harness) == {graded}  # nothing graded twice
    assert len(list(harness.service.store.ledger.entries())) == rows
    [run] = harness.github.check_runs
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert graded in run["output"]["summary"]
    [record] = harness.service.ctx.records.for_pull("Codertocat/Hello-World", 2)
    assert (record.status, record.trial_id) == ("completed", graded)


def test_an_answer_lost_after_publishing_is_published_again_from_the_same_trial(
    make_harness: Callable[..., Harness],
) -> None:
    harness, clock = _graded_then_publishing_fails(make_harness, after=True)
    [graded] = _trials(harness)
    _retry_due(harness, clock)
    harness.drain()
    assert _trials(harness) == {graded}
    [run] = harness.github.check_runs
    assert run["conclusion"] == "success" and graded in run["output"]["summary"]


def test_a_rerun_of_the_head_grades_afresh(make_harness: Callable[..., Harness]) -> None:
    harness, clock = _graded_then_publishing_fails(make_harness, after=False)
    _retry_due(harness, clock)
    harness.drain()
    [first] = _trials(harness)
    harness.deliver("check_suite", raw("check_suite/rerequested.payload.json"))
    harness.drain()
    assert len(_trials(harness) - {first}) == 1
