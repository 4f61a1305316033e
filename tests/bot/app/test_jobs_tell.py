"""An App that tells: a job failing because GitHub is unreachable is logged at each
attempt with its cause and once more, as an error, when it gives up; ``jobs list`` shows
it with its last error and ``jobs retry`` puts it back once GitHub answers again."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from tests.bot.app.conftest import Harness, raw
from tests.fakes import FakeTimer


def _jobs(capsys: pytest.CaptureFixture[str], harness: Harness, *argv: str) -> Any:
    db = harness.service.settings.db_url
    code = main(["jobs", *argv, "--db", db, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def _grade_job(harness: Harness) -> dict[str, Any]:
    [job] = [j for j in harness.service.queue.admin.jobs() if j["kind"] == "grade"]
    return job


def _fail_every_attempt(harness: Harness, clock: FakeTimer) -> None:
    queue = harness.service.queue
    for _ in range(queue.intake.max_attempts):
        assert harness.drain() >= 1
        clock.now = max(j["run_after"] for j in queue.admin.jobs()) + 1
    assert _grade_job(harness)["state"] == "failed"


@pytest.fixture
def failing(make_harness: Callable[..., Harness]) -> tuple[Harness, FakeTimer]:
    clock = FakeTimer(now=time.time())
    harness = make_harness(clock=clock)
    harness.github.down(503, message="Service Unavailable")
    assert (
        harness.deliver("pull_request", raw("pull_request/opened.payload.json")).status_code == 202
    )
    return harness, clock


def test_each_failed_attempt_and_the_give_up_are_logged_with_their_cause(
    failing: tuple[Harness, FakeTimer], caplog: pytest.LogCaptureFixture
) -> None:
    harness, clock = failing
    with caplog.at_level(logging.INFO, logger="migration_evals.bot.jobs"):
        _fail_every_attempt(harness, clock)
    records = [
        r
        for r in caplog.records
        if r.name == "migration_evals.bot.jobs.pool" and "(grade:" in r.getMessage()
    ]
    warnings = [r for r in records if r.levelno == logging.WARNING]
    errors = [r for r in records if r.levelno == logging.ERROR]
    assert len(warnings) == 4 and len(errors) == 1
    for number, record in enumerate(warnings, start=1):
        text = record.getMessage()
        assert f"attempt {number} of 5 failed, will retry" in text
        assert "GitHub answered 503: Service Unavailable" in text
    gave_up = errors[0].getMessage()
    assert "gave up after 5 attempt(s)" in gave_up and "GitHub answered 503" in gave_up


def test_jobs_list_shows_the_failed_job_and_retry_puts_it_back(
    failing: tuple[Harness, FakeTimer], capsys: pytest.CaptureFixture[str]
) -> None:
    harness, clock = failing
    _fail_every_attempt(harness, clock)
    code, listed, err = _jobs(capsys, harness, "list", "--state", "failed", "--kind", "grade")
    assert code == ExitStatus.OK, err
    [job] = listed["jobs"]
    assert (job["kind"], job["state"], job["attempts"]) == ("grade", "failed", 5)
    assert "GitHub answered 503" in job["last_error"] and "payload" not in job

    # The operator fixes the cause (here GitHub comes back), then puts the job back.
    harness.github.up()
    code, retried, _ = _jobs(capsys, harness, "retry", str(job["id"]))
    assert code == ExitStatus.OK and retried["retried"]["state"] == "failed"
    row = _grade_job(harness)
    assert (row["state"], row["attempts"]) == ("queued", 0)
    assert harness.drain() >= 1
    assert _grade_job(harness)["state"] == "done"
    [run] = harness.github.check_runs
    assert run["status"] == "completed"

    # A job that is done is not put back: its result is recorded.
    code, _, err = _jobs(capsys, harness, "retry", str(job["id"]))
    assert code == ExitStatus.ERROR and "is done" in err


def test_jobs_list_in_words_and_unknown_ids(
    failing: tuple[Harness, FakeTimer], capsys: pytest.CaptureFixture[str]
) -> None:
    harness, _ = failing
    assert harness.drain() >= 1
    db = harness.service.settings.db_url
    assert main(["jobs", "list", "--db", db]) == ExitStatus.OK
    out = capsys.readouterr().out
    assert "grade" in out and "queued" in out and "1/5" in out and "next attempt" in out
    assert "last error: unavailable: GitHub answered 503" in out
    assert main(["jobs", "retry", "999", "--db", db]) == ExitStatus.ERROR
    assert "there is no job 999" in capsys.readouterr().err
