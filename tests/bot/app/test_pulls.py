"""Pull-request facts from GitHub's payloads: what the API did not say stays unknown."""

from __future__ import annotations

import copy
import json
from datetime import date

from bot.app.pulls import pull_info
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
