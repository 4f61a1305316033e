"""Pull-request facts from GitHub's payloads: what the API did not say stays unknown."""

from __future__ import annotations

import copy
import json
from datetime import date

from migration_evals.bot.app.pulls import pull_info
from migration_evals.core.ports import PullRequestInfo
from tests.bot.app.conftest import WEBHOOKS

OPENED = json.loads((WEBHOOKS / "pull_request" / "opened.payload.json").read_text())


def test_the_repository_creation_date_comes_from_the_payload() -> None:
    found = pull_info(OPENED["pull_request"])
    created = OPENED["pull_request"]["base"]["repo"]["created_at"]
    assert found.repo_created_at == date.fromisoformat(str(created)[:10])


def test_a_missing_repository_creation_date_is_unknown_not_invented() -> None:
    data = copy.deepcopy(OPENED["pull_request"])
    del data["base"]["repo"]["created_at"]
    assert pull_info(data).repo_created_at is None


def test_the_payload_becomes_the_one_pull_request_type_the_miners_use_too() -> None:
    found = pull_info(OPENED["pull_request"])
    data = OPENED["pull_request"]
    assert isinstance(found, PullRequestInfo)
    assert (found.branch, found.state, found.url) == (
        data["head"]["ref"],
        data["state"],
        data["html_url"],
    )
    assert found.created_at.tzinfo is not None and not found.merged
    # An open PR's merge_commit_sha is GitHub's test merge: it means nothing yet.
    test_merge = {**copy.deepcopy(data), "merge_commit_sha": "e" * 40}
    assert pull_info(test_merge).merge_commit_sha is None
    assert found.changeset_id == f"{found.repo}/pull/{found.number}@{found.head_sha[:12]}"
    agent = PullRequestInfo.from_rest(data, agent_authors={found.author})
    assert agent.is_agent and not found.is_agent
