"""Announce jobs: a pull request's check run is opened in progress before its grade job runs."""

from __future__ import annotations

from collections.abc import Callable

from migration_evals.bot.app.events import Routing, route
from migration_evals.bot.app.kinds import ANNOUNCE, GRADE
from tests.bot.app.conftest import Harness, payload, raw


def test_an_opened_pull_request_gets_an_announce_job_before_its_grade_job() -> None:
    routed = route(
        "pull_request", payload("pull_request/opened.payload.json"), delivery="d", app_slug="me"
    )
    assert routed.routing is Routing.JOBS
    assert [job.kind for job in routed.jobs] == [ANNOUNCE, GRADE]
    quiet = route(
        "pull_request",
        payload("pull_request/opened.payload.json"),
        delivery="d",
        app_slug="me",
        announce=False,
    )
    assert [job.kind for job in quiet.jobs] == [GRADE]


def test_the_check_run_is_in_progress_before_grading_and_completed_in_place(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(announce_workers=2)
    response = harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    assert response.status_code == 202 and len(response.json["jobs"]) == 2
    assert harness.announced() == 1
    [run] = harness.github.check_runs
    assert run["status"] == "in_progress" and run.get("conclusion") is None
    assert harness.jobs() and harness.jobs()[0]["state"] == "queued"  # not graded yet

    assert harness.drain() == 1
    [run] = harness.github.check_runs  # the same one, completed
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert len(harness.github.writes("POST", "/check-runs")) == 1
    reopened = [
        c for c in harness.github.writes("PATCH") if (c.body or {}).get("status") == "in_progress"
    ]
    assert reopened == []  # the grade job found it in progress: no write to say so again


def test_a_pull_request_the_app_does_not_grade_gets_no_check_run(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(announce_workers=2, config="agents: []\n")
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    assert harness.announced() == 1
    [job] = harness.jobs(kind="announce")
    assert job["result"].startswith("skipped: ") and "not an agent" in job["result"]
    assert harness.github.check_runs == []


def test_an_announce_job_late_for_a_graded_head_leaves_its_check_run_completed(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(announce_workers=2)
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    # The grade job runs first (its own worker was free); the announce job comes later.
    assert harness.service.workers.run_one("grader")
    assert harness.announced() == 1
    [job] = harness.jobs(kind="announce")
    assert "already" in job["result"] and "completed" in job["result"]
    [run] = harness.github.check_runs
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert harness.github.writes("PATCH") and all(
        (c.body or {}).get("status") != "in_progress" for c in harness.github.writes("PATCH")[1:]
    )


def test_a_redelivered_pull_request_makes_no_second_announce_job(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(announce_workers=2)
    body = raw("pull_request/opened.payload.json")
    harness.deliver("pull_request", body, delivery="one")
    harness.deliver("pull_request", body, delivery="two")  # GitHub sent it again, anew
    assert len(harness.jobs(kind="announce")) == 1
    assert harness.announced() == 1
    assert len(harness.github.check_runs) == 1
