"""Gold labels for pull requests: merged and survived the window, or not.

* **rejected**: closed without merge; or reverted before the window ended; or less than the
  threshold of its added lines still attributed to it at the window's end.
* **accepted**: merged, not reverted, and at least the threshold of its lines survived.
* **pending**: merged less than the window ago.
* no label: still open.

The state of the default branch at the window's end is its first commit at or after
``merged_at + window``. Every label keeps its evidence (merge commit, commit used, revert,
line counts), so a disputed label can be checked by hand. A git failure raises
``RepositoryError``; it is never turned into a label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.errors import RepositoryError
from core.gold import GoldLabel, GoldRow
from core.ports import PullRequestInfo
from miners.funnel import FunnelResult
from miners.history import (
    attributed_lines,
    commit_time,
    find_revert,
    is_ancestor,
    landed_pr,
    locate_merge,
    survival_commit,
)
from miners.policy import SurvivalPolicy

__all__ = ["Labelled", "gold_row", "label_pull_request"]

BLAME = "git blame -w -M -C (whitespace ignored, moves, copies and renames followed)"


@dataclass(frozen=True, slots=True)
class Labelled:
    label: GoldLabel
    survival: float | None
    evidence: Mapping[str, Any]


def label_pull_request(
    pr: PullRequestInfo,
    *,
    now: datetime,
    policy: SurvivalPolicy,
    mirror: Callable[[str], Path],
) -> Labelled | None:
    """Label ``pr`` as of ``now``; ``mirror(clone_url)`` is only called once git is needed."""
    if pr.closed_unmerged:
        assert pr.closed_at is not None
        evidence = {"reason": "closed without merge", "closed_at": pr.closed_at.isoformat()}
        return Labelled(GoldLabel.REJECTED, None, evidence)
    if pr.merged_at is None:
        return None
    window_ends = pr.merged_at + policy.window
    if now < window_ends:
        age = (now - pr.merged_at).days
        evidence = {
            "reason": f"merged {age} day(s) ago; the {policy.window_days}-day window is open",
            "merged_at": pr.merged_at.isoformat(),
            "window_ends": window_ends.isoformat(),
        }
        return Labelled(GoldLabel.PENDING, None, evidence)
    return _survival_label(mirror(pr.clone_url), pr, window_ends, policy)


def _survival_label(
    git_dir: Path, pr: PullRequestInfo, window_ends: datetime, policy: SurvivalPolicy
) -> Labelled:
    merge = locate_merge(git_dir, pr.default_branch, pr.merge_commit_sha, pr.head_sha)
    landed = landed_pr(git_dir, merge, pr.head_sha)
    at = survival_commit(git_dir, pr.default_branch, window_ends)
    if not is_ancestor(git_dir, merge, at):
        raise RepositoryError(
            f"{pr.default_branch} at {at} does not contain merge commit {merge} "
            "(history rewritten?); not labelling"
        )
    revert = find_revert(git_dir, landed, at)
    added = attributed_lines(git_dir, landed, merge)
    alive = attributed_lines(git_dir, landed, at)
    # A PR that only deletes lines has nothing that can die; only a revert rejects it.
    survival = min(1.0, alive / added) if added else 1.0
    if revert is not None:
        label, reason = GoldLabel.REJECTED, f"reverted by {revert.sha} ({revert.kind.value})"
    elif survival >= policy.threshold:
        label, reason = GoldLabel.ACCEPTED, f"survived: {survival:.0%} of added lines remain"
    else:
        label, reason = (
            GoldLabel.REJECTED,
            (f"only {survival:.0%} of added lines remain (threshold {policy.threshold:.0%})"),
        )
    used_at = commit_time(git_dir, at)
    evidence = {
        "reason": reason,
        "merged_at": (window_ends - policy.window).isoformat(),
        "window_ends": window_ends.isoformat(),
        "merge_commit": merge,
        "pr_commits": sorted(landed.commits),
        "commit_used": at,
        "commit_used_at": used_at.isoformat(),
        # Nothing landed after the window ended: the tip is what the branch looked like then.
        "commit_used_is_tip_before_window_end": used_at < window_ends,
        "revert": None
        if revert is None
        else {"sha": revert.sha, "how": revert.kind.value, "at": revert.at.isoformat()},
        "lines_added": added,
        "lines_surviving": alive,
        "survival": survival,
        "threshold": policy.threshold,
        "method": BLAME,
    }
    return Labelled(label, survival, evidence)


def gold_row(
    pr: PullRequestInfo,
    labelled: Labelled,
    *,
    computed_at: datetime,
    changeset_id: str | None,
    funnel: FunnelResult | None,
    model: str | None = None,
) -> GoldRow:
    """The gold-table row: the label, its evidence and the funnel's verdict on the changeset."""
    evidence = {
        **labelled.evidence,
        "pull_request": pr.url,
        "head_sha": pr.head_sha,
        "author": pr.author,
        "is_agent": pr.is_agent,
        "funnel": funnel.to_dict() if funnel else None,
    }
    return GoldRow(
        repo=pr.repo,
        pr_number=pr.number,
        label=labelled.label,
        computed_at=computed_at,
        survival=labelled.survival,
        evidence=evidence,
        changeset_id=changeset_id,
        model=funnel.model if funnel else model,
        funnel_verdict=funnel.verdict if funnel else None,
        trial_id=funnel.trial_id if funnel else None,
    )
