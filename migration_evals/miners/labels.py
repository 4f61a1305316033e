"""Gold labels for merged changes: merged and survived the window, or not.

* **rejected**: closed without merge; or reverted before the window ended; or less than the
  threshold of its added lines still attributed to it at the window's end.
* **accepted**: merged, not reverted, and at least the threshold of its lines survived.
* **pending**: merged less than the window ago; or the history at hand does not reach
  past the window's end (a stale clone), so what happened inside it is not known yet.
* no label: still open.

One core, two sources: ``label_merged`` labels a change that landed on a branch, whether
a pull request from a provider (``label_pull_request``) or a commit found in git alone
(``migration_evals.miners.git_changes``) described it. The state of the branch at the window's end
is the last first-parent commit at or before ``merged_at + window``: the merge itself when
nothing landed since. The window counts as closed only when the history shows it has
passed: a commit on the branch that landed after its end, or a fetch of the repository
recorded after it (``migration_evals.miners.clones.fetch_time``); the clock alone cannot tell, since
a clone stops where it was fetched. Reverts are looked for up to that commit, and lines
are counted there (``migration_evals.miners.lines``). Every label keeps its evidence (merge commit,
the state commit and its date, the window's end, revert, line counts), so a disputed label can be
checked by hand. A git failure raises ``RepositoryError``; it is never turned into a label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from migration_evals.core.gold import GoldLabel, GoldRow
from migration_evals.core.ports import PullRequestInfo
from migration_evals.miners.clones import fetch_time
from migration_evals.miners.funnel import FunnelResult
from migration_evals.miners.history import (
    BranchState,
    LandedPR,
    Revert,
    commit_time,
    find_revert,
    git_text,
    landed_pr,
    locate_merge,
    state_at,
)
from migration_evals.miners.lines import Survival, added_lines, surviving_lines
from migration_evals.miners.policy import SurvivalPolicy

__all__ = [
    "Labelled",
    "MergedAtSource",
    "MergedChange",
    "gold_row",
    "label_merged",
    "label_pull_request",
    "pending_label",
]

BLAME = (
    "git blame -w -M -C over before..state (whitespace ignored, moves, copies and renames "
    "followed); each added line counted once, by its origin"
)


class MergedAtSource(StrEnum):
    """Who said when the change merged."""

    PROVIDER = "the pull request's merge time, from the provider"
    COMMIT_LIST = "the commit list"
    COMMITTER_DATE = "the merge commit's committer date (no provider consulted)"


@dataclass(frozen=True, slots=True)
class MergedChange:
    """A change as it landed: the branch (a ref), its landing commit and when it merged."""

    tip: str
    merge_commit: str
    merged_at: datetime
    merged_at_source: MergedAtSource
    head_sha: str | None = None  # its own last commit, when known (finds rebase merges)


@dataclass(frozen=True, slots=True)
class Labelled:
    label: GoldLabel
    survival: float | None
    evidence: Mapping[str, Any]


def pending_label(merged_at: datetime, now: datetime, policy: SurvivalPolicy) -> Labelled | None:
    """``pending`` while the window is open (no git needed); None once it has passed."""
    window_end = merged_at + policy.window
    if now >= window_end:
        return None
    age = (now - merged_at).days
    evidence = {
        "reason": f"merged {age} day(s) ago; the {policy.window_days}-day window is open",
        "merged_at": merged_at.isoformat(),
        "window_end": window_end.isoformat(),
    }
    return Labelled(GoldLabel.PENDING, None, evidence)


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
    waiting = pending_label(pr.merged_at, now, policy)
    if waiting is not None:
        return waiting
    git_dir = mirror(pr.clone_url)
    tip = f"refs/heads/{pr.default_branch}"
    merge = locate_merge(git_dir, tip, pr.merge_commit_sha, pr.head_sha)
    change = MergedChange(tip, merge, pr.merged_at, MergedAtSource.PROVIDER, pr.head_sha)
    return label_merged(git_dir, change, now=now, policy=policy)


def label_merged(
    git_dir: Path, change: MergedChange, *, now: datetime, policy: SurvivalPolicy
) -> Labelled:
    """Label a change that landed on a branch, as of ``now`` and of the history at hand."""
    waiting = pending_label(change.merged_at, now, policy)
    if waiting is not None:
        return waiting
    window_end = change.merged_at + policy.window
    landed = landed_pr(git_dir, change.merge_commit, change.head_sha or change.merge_commit)
    state = state_at(git_dir, change.tip, landed.merge_commit, window_end)
    tip = git_text(git_dir, "rev-parse", "--verify", f"{change.tip}^{{commit}}").strip()
    fetched = fetch_time(git_dir)
    closed = _closed_by(state, fetched, window_end)
    if closed is None:
        return _uncovered(git_dir, change, landed, tip=tip, fetched=fetched, window_end=window_end)
    revert = find_revert(git_dir, landed, state.commit)
    added = added_lines(git_dir, landed)
    survival = surviving_lines(git_dir, landed, added, state.commit)
    label, reason = _verdict(revert, survival, policy)
    evidence = {
        "reason": reason,
        "merged_at": change.merged_at.isoformat(),
        "merged_at_source": change.merged_at_source.value,
        "window_end": window_end.isoformat(),
        "merge_commit": landed.merge_commit,
        "change_commits": sorted(landed.commits),
        **_state_evidence(state, landed.merge_commit),
        "window_closed_by": closed,
        "history_tip": tip,
        "revert": None
        if revert is None
        else {"sha": revert.sha, "how": revert.kind.value, "at": revert.at.isoformat()},
        "lines_added": survival.added,
        "lines_alive": survival.alive,
        "lines_credited_not_added": survival.credited_not_added,
        "lines": {**added.to_dict(), "alive_by_file": dict(sorted(survival.alive_by_file.items()))},
        "survival": survival.ratio,
        "threshold": policy.threshold,
        "method": BLAME,
    }
    return Labelled(label, survival.ratio, evidence)


def _closed_by(
    state: BranchState, fetched: datetime | None, window_end: datetime
) -> dict[str, str] | None:
    """What shows the window has passed in the history at hand; None when nothing does."""
    if state.landed_after is not None:
        sha, at = state.landed_after
        return {"commit": sha, "at": at.isoformat()}
    if fetched is not None and fetched >= window_end:
        return {"fetched_at": fetched.isoformat()}
    return None


def _uncovered(
    git_dir: Path,
    change: MergedChange,
    landed: LandedPR,
    *,
    tip: str,
    fetched: datetime | None,
    window_end: datetime,
) -> Labelled:
    """``pending``: the history at hand stops before the window's end, so a revert or a
    rewrite inside the window could still be missing from it."""
    newest = commit_time(git_dir, tip)
    fetch = f"last fetched {fetched.isoformat()}" if fetched else "no fetch time recorded"
    reason = (
        f"the history at hand ends before the window does ({window_end.isoformat()}): "
        f"nothing landed on {change.tip} after it (newest {tip[:12]}, "
        f"{newest.isoformat()}; {fetch}); fetch the repository and label again"
    )
    evidence = {
        "reason": reason,
        "merged_at": change.merged_at.isoformat(),
        "merged_at_source": change.merged_at_source.value,
        "window_end": window_end.isoformat(),
        "merge_commit": landed.merge_commit,
        "history_tip": tip,
        "history_tip_at": newest.isoformat(),
        "fetched_at": fetched.isoformat() if fetched else None,
    }
    return Labelled(GoldLabel.PENDING, None, evidence)


def _state_evidence(state: BranchState, merge: str) -> dict[str, Any]:
    return {
        "state_commit": state.commit,
        "state_commit_at": state.at.isoformat(),
        # Nothing landed between the merge and the window's end: it survived unchanged.
        "state_is_merge": state.commit == merge,
    }


def _verdict(
    revert: Revert | None, survival: Survival, policy: SurvivalPolicy
) -> tuple[GoldLabel, str]:
    if revert is not None:
        return GoldLabel.REJECTED, f"reverted by {revert.sha} ({revert.kind.value})"
    if not survival.added:
        return GoldLabel.ACCEPTED, "survived: not reverted, and it added no line that could die"
    share = f"{survival.alive} of {survival.added} added lines remain"
    if survival.ratio >= policy.threshold:
        return GoldLabel.ACCEPTED, f"survived: {share} ({survival.ratio:.0%})"
    return GoldLabel.REJECTED, (
        f"only {share} ({survival.ratio:.0%}; threshold {policy.threshold:.0%})"
    )


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
