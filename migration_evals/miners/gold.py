"""Growing the gold anchor (``migration-evals mine gold``) from a provider's pull requests.

Every closed or merged pull request the query selects is labelled (pending ones too, so
they can be relabelled later) and turned into a changeset (the PR's diff on its merge
base), and its gold row gets the funnel's verdict on that changeset: from the ledger if it
was graded before, otherwise graded now through the injected ``Grader``. Rows whose label
is final (accepted or rejected) are left as they are, so a rerun only does new work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from migration_evals.core.clock import Clock
from migration_evals.core.database import Database
from migration_evals.core.errors import InfrastructureError, RepositoryError
from migration_evals.core.gold import GoldLabel, GoldRow, gold_rows, upsert_gold
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Changeset
from migration_evals.core.ports import ChangesetProvider, PullRequestInfo, PullRequestQuery
from migration_evals.miners.funnel import FunnelResult, Grader, funnel_results
from migration_evals.miners.history import merge_base
from migration_evals.miners.labels import Labelled, gold_row, label_pull_request
from migration_evals.miners.policy import SurvivalPolicy

__all__ = ["ChangesetRecipe", "GrowReport", "grow_gold"]

log = logging.getLogger(__name__)

Mirror = Callable[[str], Path]


@dataclass(frozen=True, slots=True)
class ChangesetRecipe:
    """How a mined PR becomes a changeset: the recipe it is graded against, and its model."""

    recipe: str
    model_for: Callable[[PullRequestInfo], str]
    recipe_params: Mapping[str, Any] = field(default_factory=dict)
    default_model: str = "unknown"  # for changes no author, agent or list names a model of


@dataclass
class GrowReport:
    now: datetime
    rows: list[GoldRow] = field(default_factory=list)
    skipped_final: list[str] = field(default_factory=list)
    still_open: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "rows": [row.to_row() | {"evidence": dict(row.evidence)} for row in self.rows],
            "skipped_final": self.skipped_final,
            "still_open": self.still_open,
            "errors": self.errors,
        }


def _key(pr: PullRequestInfo) -> str:
    return f"{pr.repo}#{pr.number}"


def _label_all(
    db: Database,
    ledger: Ledger,
    provider: ChangesetProvider,
    query: PullRequestQuery,
    report: GrowReport,
    *,
    policy: SurvivalPolicy,
    mirror: Mirror,
    recipe: ChangesetRecipe,
) -> list[tuple[PullRequestInfo, Labelled]]:
    """Label every selected PR, writing each label at once: should listing fail half-way
    (an outage, a rate limit that will not lift), the labels so far are kept."""
    final = {
        (row.repo, row.pr_number)
        for row in gold_rows(db)
        if row.label in (GoldLabel.ACCEPTED, GoldLabel.REJECTED)
    }
    labelled = []
    for pr in provider.pull_requests(query):
        if (pr.repo, pr.number) in final:
            report.skipped_final.append(_key(pr))
            continue
        try:
            found = label_pull_request(pr, now=report.now, policy=policy, mirror=mirror)
        except InfrastructureError as exc:
            report.errors[_key(pr)] = str(exc)
            continue
        if found is None:
            report.still_open.append(_key(pr))
            continue
        upsert_gold(ledger, _row(pr, found, report.now, changeset=None, recipe=recipe, funnel=None))
        labelled.append((pr, found))
    return labelled


def _row(
    pr: PullRequestInfo,
    found: Labelled,
    now: datetime,
    *,
    changeset: Changeset | None,
    recipe: ChangesetRecipe,
    funnel: FunnelResult | None,
) -> GoldRow:
    changeset_id = changeset.id if changeset else pr.changeset_id
    model = recipe.model_for(pr)
    return gold_row(
        pr, found, computed_at=now, changeset_id=changeset_id, funnel=funnel, model=model
    )


def _base_commit(pr: PullRequestInfo, mirror: Mirror) -> str:
    """The merge base of the PR's base and head: what GitHub's diff applies to.

    GitHub's base sha is the base branch's tip when the PR was last updated, which may be
    ahead of where the branch forked; the diff only applies strictly at the fork point.
    """
    try:
        found = merge_base(mirror(pr.clone_url), pr.base_sha, pr.head_sha)
    except RepositoryError as exc:
        log.warning("%s: merge base unknown (%s); using the PR's base sha", _key(pr), exc)
        return pr.base_sha
    # A base that already contains the head (updated after the merge) says nothing useful.
    return found if found and found != pr.head_sha else pr.base_sha


def _changeset(
    provider: ChangesetProvider, pr: PullRequestInfo, recipe: ChangesetRecipe, mirror: Mirror
) -> Changeset:
    return pr.to_changeset(
        patch=provider.diff(pr.repo, pr.number),
        recipe=recipe.recipe,
        model=recipe.model_for(pr),
        base_commit=_base_commit(pr, mirror),
        recipe_params=recipe.recipe_params,
    )


def grow_gold(
    db: Database,
    ledger: Ledger,
    provider: ChangesetProvider,
    query: PullRequestQuery,
    clock: Clock,
    *,
    policy: SurvivalPolicy,
    mirror: Mirror,
    recipe: ChangesetRecipe,
    grade: Grader | None,
) -> GrowReport:
    """Label what ``query`` selects, get each changeset's funnel verdict, upsert the rows."""
    report = GrowReport(now=clock.now())
    labelled = _label_all(
        db, ledger, provider, query, report, policy=policy, mirror=mirror, recipe=recipe
    )
    changesets: dict[str, Changeset] = {}
    for pr, _ in labelled:
        try:
            changesets[_key(pr)] = _changeset(provider, pr, recipe, mirror)
        except InfrastructureError as exc:
            report.errors[_key(pr)] = f"labelled, but not graded: {exc}"
    results = funnel_results(db, list(changesets.values()), grade)
    for pr, found in labelled:
        changeset = changesets.get(_key(pr))
        funnel = results.get(changeset.id) if changeset else None
        row = _row(pr, found, report.now, changeset=changeset, recipe=recipe, funnel=funnel)
        upsert_gold(ledger, row)
        report.rows.append(row)
    return report
