"""Slash commands from PR comments: permissions, acknowledgement, replies, what is ignored."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from migration_evals.bot.app.kinds import APP_KINDS
from migration_evals.bot.app.slash import REPLY_WINDOW_S, Command, parse_commands
from migration_evals.bot.jobs.kinds import KindRegistry
from migration_evals.bot.jobs.queue import build_queue
from migration_evals.core.store import Store
from tests.bot.app.conftest import (
    CONFIG,
    JAVA_BASE,
    PATCHES,
    Harness,
    payload,
    pull_data,
    raw,
    render_markdown,
)
from tests.fake_github import FakePull

COMMENT = "issue_comment/created.on-pr.all-contributors.json"


def _comment(harness: Harness, body: str, user: str) -> bytes:
    """The real comment-on-a-PR payload, with our command and commenter."""
    data: dict[str, Any] = payload(COMMENT)
    repo, number = data["repository"]["full_name"], data["issue"]["number"]
    pull = pull_data(number=number)
    pull["base"]["repo"]["full_name"] = repo
    harness.github.add_pull(
        FakePull(pull, (PATCHES / "good.diff").read_text(), JAVA_BASE),
        installation=data["installation"]["id"],
    )
    harness.github.files[(repo, ".github/migration-evals.yml")] = CONFIG
    harness.github.permissions[(repo, "writer")] = ("write", "maintain")
    harness.github.permissions[(repo, "reader")] = ("read", "triage")
    data["comment"]["body"] = body
    data["comment"]["user"]["login"] = user
    return json.dumps(data).encode()


def test_parse_commands_one_per_line_both_forms() -> None:
    body = (
        "thanks!\n/migration-evals rerun\n@migration-evals[bot] explain\n/migration-evals dance\n"
    )
    parsed = parse_commands(body, "migration-evals")
    assert parsed.commands == (Command.RERUN, Command.EXPLAIN) and parsed.unknown == ("dance",)
    assert not parse_commands("please /migration-evals rerun", "migration-evals")
    assert not parse_commands(
        "/migration-evalsx rerun\n@migration-evalsbot help", "migration-evals"
    )


@pytest.mark.parametrize(
    ("body", "unknown"),
    [
        ("/migration-evals re-run", ("re-run",)),
        ("/migration-evals", ("",)),
        ("@ci-grader retry", ("retry",)),
    ],
)
def test_mistyped_and_bare_commands_are_kept_as_unknown(
    body: str, unknown: tuple[str, ...]
) -> None:
    parsed = parse_commands(body, "ci-grader")
    assert parsed.commands == () and parsed.unknown == unknown and parsed


def test_an_unknown_command_is_answered_once_with_the_command_list(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness(app_slug="ci-grader")
    assert (
        harness.deliver(
            "issue_comment", _comment(harness, "@ci-grader re-run", "writer")
        ).status_code
        == 202
    )
    assert harness.drain() == 1
    [reply] = harness.github.comments
    html = render_markdown(reply["body"])
    assert "<code>re-run</code> is not a command." in html
    for command in Command:
        assert f"<code>/migration-evals {command.value}</code>" in html
    assert "<code>@ci-grader &lt;command&gt;</code>" in html and "@app-name" not in html
    assert [r["content"] for r in harness.github.reactions] == ["eyes"]
    assert harness.github.check_runs == []


def _comments(harness: Harness, body: str, user: str, count: int) -> None:
    first = json.loads(_comment(harness, body, user))
    for index in range(count):
        first["comment"]["id"] += 1
        sent = harness.deliver("issue_comment", json.dumps(first).encode(), delivery=f"c{index}")
        assert sent.status_code == 202


def _pull_opened_on_the_comments_pr(harness: Harness) -> bytes:
    comment = payload(COMMENT)
    data = payload("pull_request/opened.payload.json")
    data["repository"] = comment["repository"]
    data["installation"] = comment["installation"]
    data["pull_request"]["number"] = comment["issue"]["number"]
    return json.dumps(data).encode()


def test_a_flood_from_a_reader_gets_one_reply_and_the_check_run_goes_first(
    harness: Harness,
) -> None:
    _comments(harness, "/migration-evals help\n/migration-evals dance", "reader", 40)
    harness.deliver("pull_request", _pull_opened_on_the_comments_pr(harness))
    assert harness.drain(limit=1) == 1  # the grade job, delivered last, is leased first
    [run] = harness.github.check_runs
    assert run["status"] == "completed" and harness.github.comments == []
    assert harness.drain(limit=100) == 40
    gh = harness.github
    assert len(gh.comments) == 1 and "this list" in gh.comments[0]["body"]
    assert [r["content"] for r in gh.reactions] == ["eyes"] * 40
    assert len(gh.writes("POST", "/comments")) == 1
    assert len(gh.writes("POST", "/reactions")) == 40


def test_the_reply_window_holds_across_processes_and_ends_after_an_hour(
    harness: Harness,
) -> None:
    _comments(harness, "/migration-evals status", "reader", 1)
    harness.drain()
    # Another process on the same database: the window is in the database, not in memory.
    other = build_queue(Store.open(harness.service.settings.db_url), KindRegistry(APP_KINDS))
    harness.service.ctx.queue = other
    data = json.loads(_comment(harness, "/migration-evals status", "reader"))
    data["comment"]["id"] += 100
    harness.deliver("issue_comment", json.dumps(data).encode())
    harness.drain()
    assert len(harness.github.comments) == 1 and len(harness.github.reactions) == 2
    other.table.clock = lambda: time.time() + REPLY_WINDOW_S + 1
    data["comment"]["id"] += 1
    harness.deliver("issue_comment", json.dumps(data).encode())
    harness.drain()
    assert len(harness.github.comments) == 2
    other.store.close()


def test_writers_are_not_throttled(harness: Harness) -> None:
    _comments(harness, "/migration-evals status", "writer", 3)
    harness.drain()
    assert len(harness.github.comments) == 3


def test_writer_can_ask_for_strict_judging(harness: Harness) -> None:
    response = harness.deliver(
        "issue_comment", _comment(harness, "/migration-evals strict", "writer")
    )
    assert response.status_code == 202
    assert harness.drain() == 2  # the command job, then the grade job it enqueued
    gh = harness.github
    assert [r["content"] for r in gh.reactions] == ["eyes"]
    [reply] = gh.comments
    assert "Re-grading" in reply["body"]
    [run] = gh.check_runs
    assert run["name"] == "migration-evals (strict)" and run["status"] == "completed"
    assert gh.schema_errors == []


def test_read_only_user_gets_a_polite_refusal(harness: Harness) -> None:
    harness.deliver("issue_comment", _comment(harness, "/migration-evals rerun", "reader"))
    assert harness.drain() == 1
    [reply] = harness.github.comments
    assert "Sorry @reader" in reply["body"] and "write, maintain or admin" in reply["body"]
    assert harness.github.check_runs == []
    assert [r["content"] for r in harness.github.reactions] == ["eyes"]


def test_explain_status_and_help_answer_anyone_in_one_reply(harness: Harness) -> None:
    harness.deliver("issue_comment", _comment(harness, "/migration-evals rerun", "writer"))
    harness.drain()
    body = "/migration-evals explain\n/migration-evals status\n@migration-evals help"
    data = json.loads(_comment(harness, body, "stranger"))
    data["comment"]["id"] += 1
    harness.deliver("issue_comment", json.dumps(data).encode())
    harness.drain()
    reply = harness.github.comments[-1]["body"]
    assert "### apply: pass" in reply and "### judge: pass" in reply
    assert "| standard | completed | success |" in reply
    assert "/migration-evals strict" in reply and "@migration-evals <command>" in reply


@pytest.mark.parametrize(
    ("user", "why"), [("migration-evals[bot]", "own comment"), ("writer", "no command")]
)
def test_own_comments_and_comments_without_commands_are_ignored(
    harness: Harness, user: str, why: str
) -> None:
    body = "/migration-evals rerun" if why == "own comment" else "looks good"
    assert harness.deliver("issue_comment", _comment(harness, body, user)).status_code == 204


def test_comments_on_plain_issues_are_ignored(harness: Harness) -> None:
    data = payload("issue_comment/created.with-installation.payload.json")
    assert "pull_request" not in data["issue"]
    data["comment"]["body"] = "/migration-evals rerun"
    assert harness.deliver("issue_comment", json.dumps(data).encode()).status_code == 204
    assert (
        harness.deliver(
            "issue_comment", raw("issue_comment/created.with-installation.payload.json")
        ).status_code
        == 204
    )


def test_a_command_made_by_another_server_regrades_under_that_servers_plan(
    harness: Harness,
) -> None:
    # The job was made by a server whose plan differs from this process's (a worker's).
    theirs = dataclasses.replace(harness.service.ctx.plan, budget_usd=1.5)
    harness.service.queue.intake.carry = {"plan": theirs.to_dict()}
    harness.deliver("issue_comment", _comment(harness, "/migration-evals rerun", "writer"))
    harness.service.queue.intake.carry = {}  # the grade job is made here, by the command job
    harness.drain()
    grade_jobs = [j for j in harness.service.queue.admin.jobs() if j["kind"] == "grade"]
    [planned] = [json.loads(j["payload"])["plan"] for j in grade_jobs]
    assert planned == theirs.to_dict() and planned != harness.service.ctx.plan.to_dict()
