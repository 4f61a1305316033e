"""Jobs that are not grading: merged-PR tracking, reconciliation, the nightly survival pass."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from migration_evals.bot.app import survival
from migration_evals.bot.app.checks import Mode, check_name
from migration_evals.bot.app.context import BotContext
from migration_evals.bot.app.grading import AUTO, GradeTask, grade_key, load_config
from migration_evals.bot.app.kinds import GRADE
from migration_evals.bot.app.pulls import pull_info
from migration_evals.bot.app.repo_config import RepoConfigError
from migration_evals.bot.jobs.queue import NewJob
from migration_evals.core.ports import GitHubClient
from migration_evals.miners.tracking import TrackedPR

__all__ = ["reconcile_installation", "track_merge"]

log = logging.getLogger(__name__)


def track_merge(payload: Mapping[str, Any], client: GitHubClient, ctx: BotContext) -> str:
    """Hand a merged PR to survival mining if its author is an agent."""
    pull = pull_info(client.pull(str(payload["repo"]), int(payload["number"])))
    if not pull.merged:
        return "skipped: not merged"
    try:
        config = load_config(client, ctx, pull)
    except RepoConfigError as exc:
        return f"skipped: {exc}"
    is_agent = config.agent(pull.author) is not None
    if not is_agent:
        return f"skipped: {pull.author} is not an agent"
    merged = TrackedPR.from_info(replace(pull, is_agent=is_agent), pull.changeset_id)
    return survival.track_pr(ctx.store, merged)


def _needs_check(client: GitHubClient, ctx: BotContext, pr: Mapping[str, Any]) -> Mode | None:
    pull = pull_info(pr)
    try:
        config = load_config(client, ctx, pull)
    except RepoConfigError:
        return None  # shown on the next PR event; nothing to reconcile
    if config.agent(pull.author) is None or pr.get("draft"):
        return None
    mode = Mode.STRICT if config.strict else Mode.STANDARD
    if client.check_runs(pull.repo, pull.head_sha, check_name(mode)):
        return None
    return mode


def reconcile_installation(installation_id: int, client: GitHubClient, ctx: BotContext) -> int:
    """Enqueue open agent PRs that have no check on their head (missed webhooks)."""
    enqueued = 0
    for repo in client.repositories():
        for pr in client.open_pulls(repo):
            if _needs_check(client, ctx, pr) is None:
                continue
            number, sha = int(pr["number"]), str(pr["head"]["sha"])
            task = GradeTask(installation_id, repo, number, sha, AUTO, plan=ctx.plan.to_dict())
            job = NewJob(
                GRADE,
                grade_key(repo, number, sha, AUTO),
                f"{repo}#{number}",
                task.payload(),
            )
            enqueued += ctx.queue.intake.enqueue(job) is not None
    return enqueued
