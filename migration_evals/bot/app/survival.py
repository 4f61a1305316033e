"""The bot's calls into survival mining: register merged agent PRs, run the nightly pass.

A merged agent PR is tracked (``migration_evals.miners.tracking``); the nightly job refreshes merge
state and labels the tracked PRs that have aged past the survival window
(``migration_evals.miners.survival.refresh``), through the same GitHub provider ``mine survival``
uses.
"""

from __future__ import annotations

from migration_evals.bot.mining import github_provider, mirror_cache
from migration_evals.core.clock import Clock
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.miners import survival, tracking
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.tracking import TrackedPR

__all__ = ["nightly_refresh", "track_pr"]


def track_pr(store: Store, pr: TrackedPR) -> str:
    """Register ``pr`` for survival mining; returns what happened, for the job log."""
    tracking.track_pr(store.ledger, pr)
    return f"tracked {pr.repo}#{pr.number} for survival mining"


def nightly_refresh(settings: Settings, store: Store, specs: SpecSet, clock: Clock) -> str:
    """One survival-mining pass over every tracked PR; returns a one-line summary."""
    policy = SurvivalPolicy.from_specs(specs)
    with github_provider(settings, clock) as provider:
        report = survival.refresh(
            store.db,
            store.ledger,
            provider,
            clock,
            policy=policy,
            mirror=mirror_cache(settings).mirror,
        )
    errors = f", {len(report.errors)} error(s)" if report.errors else ""
    return (
        f"checked {report.checked} tracked PR(s): {len(report.labels)} labelled, "
        f"{len(report.still_open)} still open{errors}"
    )
