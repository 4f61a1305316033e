"""From a pull request to a ``Changeset``: its base sha, head sha, diff and the repo config.

The bot owns no grading logic: it only turns what GitHub says about a PR into the same
``Changeset`` the command line reads from JSONL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from migration_evals.bot.app.repo_config import AgentRule, RecipeRule
from migration_evals.core.model import Changeset
from migration_evals.core.ports import PullRequestInfo
from migration_evals.oracles.diffscreen import diff_sections

__all__ = ["changeset_for", "filter_diff", "pull_info"]


def pull_info(data: Mapping[str, Any]) -> PullRequestInfo:
    """The pull request in a REST answer or a webhook payload (``core``'s one PR type)."""
    return PullRequestInfo.from_rest(data)


def filter_diff(diff: str, skip: Callable[[str], bool]) -> str:
    """``diff`` without the file sections that ``skip`` accepts on every path they name.

    A rename or copy across the boundary (a test moved into ``vendor/``, code moved out of
    it) names one path outside it, so it stays and is graded. The sections come from the
    diff parser tier 1 uses; a diff it cannot read is left whole, for tier 1 to refuse.
    """
    raw = diff.encode("utf-8", "surrogateescape")
    split = diff_sections(raw)
    if split is None:
        return diff
    preamble, sections = split
    kept = [s.text for s in sections if not all(skip(p) for p in s.change.paths())]
    return b"".join([preamble, *kept]).decode("utf-8", "surrogateescape")


def changeset_for(
    pull: PullRequestInfo, diff: str, agent: AgentRule, rule: RecipeRule, *, base_commit: str
) -> Changeset:
    return pull.to_changeset(
        patch=diff,
        recipe=rule.recipe,
        model=agent.model,
        base_commit=base_commit,
        recipe_params=rule.params,
    )
