"""Routing a webhook to the jobs it asks for, from the payload alone (no API calls here).

Handled: ``pull_request`` (opened, synchronize, reopened, ready_for_review → grade; closed
and merged → survival tracking), ``check_run`` (rerequested, requested_action with our
action identifiers), ``check_suite`` (rerequested), ``issue_comment`` (created, on a PR,
addressed to the App by its prefix or slug, not by the App itself). Everything else is not
handled (204).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from migration_evals.bot.app.checks import Action, Mode
from migration_evals.bot.app.grading import AUTO, GradeTask, grade_key
from migration_evals.bot.app.kinds import ANNOUNCE, COMMAND, GRADE, TRACK_MERGE
from migration_evals.bot.app.slash import command_subject, parse_commands
from migration_evals.bot.jobs.queue import NewJob

__all__ = ["Routed", "Routing", "route"]

_GRADE_ACTIONS = {"opened", "synchronize", "reopened", "ready_for_review"}


class Routing(StrEnum):
    PING = "ping"
    JOBS = "jobs"
    NOT_HANDLED = "not handled"


@dataclass(frozen=True, slots=True)
class Routed:
    routing: Routing
    jobs: tuple[NewJob, ...] = field(default_factory=tuple)
    reason: str = ""


def _skip(reason: str) -> Routed:
    return Routed(Routing.NOT_HANDLED, reason=reason)


def _subject(repo: str, number: int) -> str:
    return f"{repo}#{number}"


def _grade_job(
    installation: int, repo: str, number: int, sha: str, mode: str, *, trigger: str = ""
) -> NewJob:
    task = GradeTask(installation, repo, number, sha, mode)
    key = grade_key(repo, number, sha, mode, trigger)
    return NewJob(GRADE, key, _subject(repo, number), task.payload())


def _announce_job(installation: int, repo: str, number: int, sha: str) -> NewJob:
    task = GradeTask(installation, repo, number, sha, AUTO)
    key = f"announce:{repo}#{number}@{sha}"
    return NewJob(ANNOUNCE, key, _subject(repo, number), task.payload())


def _pull_request(payload: Mapping[str, Any], installation: int, *, announce: bool) -> Routed:
    action = payload.get("action")
    pr = payload["pull_request"]
    repo = payload["repository"]["full_name"]
    number = int(pr["number"])
    if action in _GRADE_ACTIONS:
        if pr.get("draft"):
            return _skip("draft pull request")
        sha = pr["head"]["sha"]
        grade = _grade_job(installation, repo, number, sha, AUTO)
        opening = (_announce_job(installation, repo, number, sha),) if announce else ()
        return Routed(Routing.JOBS, (*opening, grade))
    if action == "closed" and pr.get("merged"):
        job = NewJob(
            TRACK_MERGE,
            f"track:{repo}#{number}",
            _subject(repo, number),
            {"installation_id": installation, "repo": repo, "number": number},
        )
        return Routed(Routing.JOBS, (job,))
    return _skip(f"pull_request.{action}")


def _mode_of(check: Mapping[str, Any]) -> str:
    ext = str(check.get("external_id") or "")
    return Mode.STRICT.value if ext.endswith(":strict") else Mode.STANDARD.value


def _rerun_jobs(
    payload: Mapping[str, Any], installation: int, sha: str, mode: str, trigger: str
) -> Routed:
    repo = payload["repository"]["full_name"]
    prs = payload.get("check_run", payload.get("check_suite", {})).get("pull_requests") or []
    if not prs:  # GitHub may leave this empty: the job finds the PR by its head sha
        job = NewJob(
            GRADE,
            grade_key(repo, 0, sha, mode, trigger),
            f"{repo}@{sha}",
            {
                "installation_id": installation,
                "repo": repo,
                "number": 0,
                "head_sha": sha,
                "mode": mode,
            },
        )
        return Routed(Routing.JOBS, (job,))
    jobs = tuple(
        _grade_job(installation, repo, int(pr["number"]), sha, mode, trigger=trigger) for pr in prs
    )
    return Routed(Routing.JOBS, jobs)


def _check_run(payload: Mapping[str, Any], installation: int, delivery: str) -> Routed:
    check = payload["check_run"]
    action = payload.get("action")
    sha = str(check["head_sha"])
    if action == "rerequested":
        return _rerun_jobs(payload, installation, sha, _mode_of(check), f"delivery-{delivery}")
    if action == "requested_action":
        identifier = (payload.get("requested_action") or {}).get("identifier")
        if identifier == Action.RERUN:
            return _rerun_jobs(payload, installation, sha, _mode_of(check), f"delivery-{delivery}")
        if identifier == Action.STRICT:
            return _rerun_jobs(
                payload, installation, sha, Mode.STRICT.value, f"delivery-{delivery}"
            )
        return _skip(f"unknown requested action {identifier!r}")
    return _skip(f"check_run.{action}")


def _check_suite(payload: Mapping[str, Any], installation: int, delivery: str) -> Routed:
    if payload.get("action") != "rerequested":
        return _skip(f"check_suite.{payload.get('action')}")
    sha = str(payload["check_suite"]["head_sha"])
    return _rerun_jobs(payload, installation, sha, AUTO, f"delivery-{delivery}")


def _issue_comment(
    payload: Mapping[str, Any], installation: int, app_slug: str, app_id: int | None
) -> Routed:
    comment = payload["comment"]
    if payload.get("action") != "created":
        return _skip(f"issue_comment.{payload.get('action')}")
    if "pull_request" not in payload["issue"]:
        return _skip("comment on an issue, not a pull request")
    author = str(comment["user"]["login"])
    via = (comment.get("performed_via_github_app") or {}).get("id")
    if author.lower() == f"{app_slug}[bot]".lower() or (app_id is not None and via == app_id):
        return _skip("the App's own comment")
    parsed = parse_commands(str(comment.get("body") or ""), app_slug)
    if not parsed:
        return _skip("no command in the comment")
    repo = payload["repository"]["full_name"]
    number = int(payload["issue"]["number"])
    job = NewJob(
        COMMAND,
        f"command:{repo}:{comment['id']}",
        command_subject(repo, number),  # never holds up the PR's grade jobs
        {
            "installation_id": installation,
            "repo": repo,
            "number": number,
            "comment_id": int(comment["id"]),
            "author": author,
            "commands": [c.value for c in parsed.commands],
            "unknown": list(parsed.unknown),
        },
    )
    return Routed(Routing.JOBS, (job,))


def route(
    event: str,
    payload: Mapping[str, Any],
    *,
    delivery: str,
    app_slug: str,
    app_id: int | None = None,
    announce: bool = True,
) -> Routed:
    """What to do with one delivery. Raises KeyError/TypeError/ValueError on a malformed body.

    With ``announce``, a pull request to grade also gets a job that opens its check run
    before the grade job's turn (``migration_evals.bot.app.grading.announce``)."""
    if event == "ping":
        return Routed(Routing.PING)
    installation = (payload.get("installation") or {}).get("id")
    if event not in ("pull_request", "check_run", "check_suite", "issue_comment"):
        return _skip(f"event {event!r}")
    if installation is None:
        return _skip("no installation in the payload (not delivered to a GitHub App)")
    installation = int(installation)
    if event == "pull_request":
        return _pull_request(payload, installation, announce=announce)
    if event == "check_run":
        return _check_run(payload, installation, delivery)
    if event == "check_suite":
        return _check_suite(payload, installation, delivery)
    return _issue_comment(payload, installation, app_slug, app_id)
