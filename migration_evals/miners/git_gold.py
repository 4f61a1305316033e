"""Growing the gold anchor from git alone (``migration-evals mine gold --git``).

The changes come from ``migration_evals.miners.git_changes`` (a commit list, or discovery from
history); each is labelled by the same core as a provider's pull requests (``label_merged``), its
row goes to the same gold table under the same key when it was a pull request (a commit
key otherwise), and its changeset (the change's diff on the commit it forked from) gets
the funnel's verdict the same way: from the ledger, or graded now. A final row is looked
at again only when the branch has moved since it was labelled (a revert pushed late can
still fall inside a window that had closed), and rewritten only when its label changes,
which its evidence and the record chain then show (``migration_evals.core.gold.upsert_gold``); a
change git cannot label (a missing commit or blob, a rewritten branch) is an error of its own and
never a label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from migration_evals.core.clock import Clock
from migration_evals.core.database import Database
from migration_evals.core.errors import InfrastructureError
from migration_evals.core.gold import (
    RELABELLED,
    GoldLabel,
    GoldRow,
    commit_key,
    gold_rows,
    upsert_gold,
)
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Changeset
from migration_evals.miners.funnel import FunnelResult, Grader, funnel_results
from migration_evals.miners.git_changes import GitChange, change_diff, first_commit_date
from migration_evals.miners.gold import ChangesetRecipe
from migration_evals.miners.history import git_text
from migration_evals.miners.labels import Labelled, MergedChange, label_merged
from migration_evals.miners.policy import SurvivalPolicy

__all__ = ["GitGrowReport", "GitSource", "grow_gold_from_git", "label_document"]

_FINAL = (GoldLabel.ACCEPTED, GoldLabel.REJECTED)


@dataclass(frozen=True, slots=True)
class GitSource:
    """A repository read with git alone."""

    git_dir: Path
    name: str  # "owner/name": how the gold table and the changesets name it
    location: str  # the clone URL or path the user gave: where graders fetch it from
    tip: str  # the branch's ref, e.g. refs/heads/main
    agents_stamp: str = ""


@dataclass
class GitGrowReport:
    now: datetime
    rows: list[GoldRow] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """``{"labels": [...], "errors": [{"commit", "detail"}]}``, as the command prints it."""
        return {"labels": [label_document(row) for row in self.rows], "errors": self.errors}

    def error(self, commit: str, detail: str) -> None:
        self.errors.append({"commit": commit, "detail": detail})


def label_document(row: GoldRow) -> dict[str, Any]:
    """One label as ``mine gold --git --json`` prints it, read back from its gold row."""
    evidence = row.evidence
    revert = evidence.get("revert")
    # A row the provider path wrote first names its PR by key and its commit as the merge.
    pr = evidence.get("pr", row.pr_number if row.pr_number > 0 else None)
    return {
        "commit": evidence.get("commit") or evidence.get("merge_commit"),
        "pr": pr,
        "label": row.label.value,
        "merged_at": evidence.get("merged_at"),
        "state_commit": evidence.get("state_commit"),
        "window_end": evidence.get("window_end"),
        "added": evidence.get("lines_added"),
        "alive": evidence.get("lines_alive"),
        "revert": revert.get("sha") if isinstance(revert, dict) else None,
        "reason": _reason(evidence),
    }


def _reason(evidence: Mapping[str, Any]) -> Any:
    reason = evidence.get("reason")
    changes = evidence.get(RELABELLED) or []
    if not changes:
        return reason
    last = changes[-1]
    return f"{reason} (relabelled from {last['from']} on {str(last['at'])[:10]})"


def _keys(changes: Sequence[GitChange]) -> list[int]:
    """Each change's ``pr_number``: its pull request's, else (or if taken) its commit's."""
    keys: list[int] = []
    for change in changes:
        key = change.pr if change.pr is not None else commit_key(change.commit)
        keys.append(commit_key(change.commit) if key in keys else key)
    return keys


def _row(
    source: GitSource,
    change: GitChange,
    key: int,
    found: Labelled,
    now: datetime,
    *,
    changeset: Changeset | None,
    model: str,
    funnel: FunnelResult | None,
) -> GoldRow:
    evidence = {
        **found.evidence,
        "source": "git",
        "commit": change.commit,
        "listed_commits": list(change.listed),
        "pr": change.pr,
        "subject": change.subject,
        "author": change.author,
        "is_agent": change.agent is not None,
        "agent": change.agent.to_dict() if change.agent else None,
        "agents_stamp": source.agents_stamp,
        "funnel": funnel.to_dict() if funnel else None,
    }
    return GoldRow(
        repo=source.name,
        pr_number=key,
        label=found.label,
        computed_at=now,
        survival=found.survival,
        evidence=evidence,
        changeset_id=changeset.id if changeset else None,
        model=funnel.model if funnel else model,
        funnel_verdict=funnel.verdict if funnel else None,
        trial_id=funnel.trial_id if funnel else None,
    )


def _model(change: GitChange, recipe: ChangesetRecipe) -> str:
    agent_model = change.agent.model if change.agent else ""
    return change.model or agent_model or recipe.default_model


def _changeset(
    source: GitSource, change: GitChange, recipe: ChangesetRecipe, created: date
) -> Changeset:
    base, head, patch = change_diff(source.git_dir, change)
    if change.pr is not None:
        changeset_id = f"{source.name}/pull/{change.pr}@{head[:12]}"
    else:
        changeset_id = f"{source.name}/commit/{change.commit[:12]}"
    return Changeset(
        id=changeset_id,
        repo=source.location,
        base_commit=base,
        patch=patch,
        recipe=change.recipe or recipe.recipe,
        model=_model(change, recipe),
        repo_created_at=created,
        recipe_params=dict(recipe.recipe_params) if change.recipe in (None, recipe.recipe) else {},
        source=f"{source.location}@{change.commit}",
    )


@dataclass(frozen=True, slots=True)
class _Labelled:
    change: GitChange
    key: int
    found: Labelled
    changeset: Changeset | None


def _settled(kept: GoldRow, tip: str) -> bool:
    """A final label read from this very history: nothing new has arrived to change it."""
    return kept.label in _FINAL and kept.evidence.get("history_tip") == tip


def _stands(kept: GoldRow, found: Labelled) -> bool:
    """A final label stays when a new look confirms it, or when the new look cannot see
    its window's end while the label names what closed it: a staler copy of the history
    knows less, not more. A label that names nothing (written while the clock alone
    closed windows) gives way to pending."""
    if kept.label not in _FINAL:
        return False
    if found.label is kept.label:
        return True
    return found.label is GoldLabel.PENDING and bool(kept.evidence.get("window_closed_by"))


def _label_one(
    ledger: Ledger,
    source: GitSource,
    change: GitChange,
    key: int,
    report: GitGrowReport,
    *,
    kept: GoldRow | None,
    policy: SurvivalPolicy,
    recipe: ChangesetRecipe,
    created: date,
) -> _Labelled | GoldRow | None:
    """Label one change and write its row at once (so a later failure keeps the label);
    a final row that stands (``_stands``) is returned as it is, unwritten."""
    merged = MergedChange(source.tip, change.commit, change.merged_at, change.merged_at_source)
    try:
        found = label_merged(source.git_dir, merged, now=report.now, policy=policy)
    except InfrastructureError as exc:
        report.error(change.commit, str(exc))
        return None
    if kept is not None and _stands(kept, found):
        return kept
    model = _model(change, recipe)
    row = _row(source, change, key, found, report.now, changeset=None, model=model, funnel=None)
    upsert_gold(ledger, row)
    try:
        changeset: Changeset | None = _changeset(source, change, recipe, created)
    except InfrastructureError as exc:
        changeset = None
        report.error(change.commit, f"labelled, but not graded: {exc}")
    return _Labelled(change, key, found, changeset)


def _label_all(
    db: Database,
    ledger: Ledger,
    source: GitSource,
    changes: Sequence[GitChange],
    report: GitGrowReport,
    *,
    policy: SurvivalPolicy,
    recipe: ChangesetRecipe,
) -> tuple[dict[int, GoldRow], dict[int, _Labelled]]:
    """Rows that stand as they are, and the changes labelled anew, by their place."""
    stored = {row.pr_number: row for row in gold_rows(db) if row.repo == source.name}
    created = first_commit_date(source.git_dir, source.tip)
    tip = git_text(source.git_dir, "rev-parse", "--verify", f"{source.tip}^{{commit}}").strip()
    rows: dict[int, GoldRow] = {}
    todo: dict[int, _Labelled] = {}
    for index, (change, key) in enumerate(zip(changes, _keys(changes), strict=True)):
        kept = stored.get(key)
        if kept is not None and _settled(kept, tip):
            rows[index] = kept  # final, and the branch has not moved: reported as it stands
            continue
        item = _label_one(
            ledger,
            source,
            change,
            key,
            report,
            kept=kept,
            policy=policy,
            recipe=recipe,
            created=created,
        )
        if isinstance(item, GoldRow):
            rows[index] = item
        elif item is not None:
            todo[index] = item
    return rows, todo


def grow_gold_from_git(
    db: Database,
    ledger: Ledger,
    source: GitSource,
    changes: Sequence[GitChange],
    clock: Clock,
    *,
    policy: SurvivalPolicy,
    recipe: ChangesetRecipe,
    grade: Grader | None,
) -> GitGrowReport:
    """Label ``changes``, get each changeset's funnel verdict, upsert the rows."""
    report = GitGrowReport(now=clock.now())
    rows, todo = _label_all(db, ledger, source, changes, report, policy=policy, recipe=recipe)
    graded = [item.changeset for item in todo.values() if item.changeset is not None]
    results = funnel_results(db, graded, grade)
    for index, item in todo.items():
        funnel = results.get(item.changeset.id) if item.changeset else None
        model = _model(item.change, recipe)
        row = _row(
            source,
            item.change,
            item.key,
            item.found,
            report.now,
            changeset=item.changeset,
            model=model,
            funnel=funnel,
        )
        rows[index] = upsert_gold(ledger, row)
    report.rows = [rows[index] for index in sorted(rows)]
    return report
