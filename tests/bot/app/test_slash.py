"""Slash commands from PR comments: permissions, acknowledgement, replies, what is ignored."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from bot.app.slash import Command, parse_commands
from tests.bot.app.conftest import CONFIG, JAVA_BASE, PATCHES, Harness, payload, pull_data, raw
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
    assert parse_commands(body, "migration-evals") == [Command.RERUN, Command.EXPLAIN]
    assert parse_commands("please /migration-evals rerun", "migration-evals") == []


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
    assert "/migration-evals strict" in reply


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
    harness.service.queue.carry = {"plan": theirs.to_dict()}
    harness.deliver("issue_comment", _comment(harness, "/migration-evals rerun", "writer"))
    harness.service.queue.carry = {}  # the grade job is made here, by the command job
    harness.drain()
    grade_jobs = [j for j in harness.service.queue.jobs() if j["kind"] == "grade"]
    [planned] = [json.loads(j["payload"])["plan"] for j in grade_jobs]
    assert planned == theirs.to_dict() and planned != harness.service.ctx.plan.to_dict()
