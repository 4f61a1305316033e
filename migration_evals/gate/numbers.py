"""Every published number, computed from the counted trials and the specs alone.

The same function serves the gate (trials read from the ledger) and ``verify`` (trials
read back from a bundle), so a bundle is checked by recomputing it, not by trusting it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Tier, TierFunnel
from migration_evals.core.specs import SpecSet
from migration_evals.gate.contamination import ContaminationCheck, contamination
from migration_evals.gate.hypotheses import HypothesisResult, evaluate_hypotheses
from migration_evals.gate.tallies import (
    CostBreakdown,
    PassRate,
    cost_breakdown,
    funnel,
    outcome_counts,
    pass_rates,
)
from migration_evals.gate.trials import TrialFacts, set_digest

__all__ = ["Numbers", "compute_numbers"]


@dataclass(frozen=True, slots=True)
class Numbers:
    trials: int
    trials_digest: str
    outcomes: dict[str, int]
    pass_rates: tuple[PassRate, ...]
    by_recipe: tuple[PassRate, ...]
    funnel: tuple[TierFunnel, ...]
    cost: CostBreakdown
    contamination: tuple[ContaminationCheck, ...]
    hypotheses: tuple[HypothesisResult, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "trials_digest": self.trials_digest,
            "outcomes": self.outcomes,
            "pass_rates": {r.group: r.to_dict() for r in self.pass_rates},
            "pass_rates_by_recipe": {r.group: r.to_dict() for r in self.by_recipe},
            "funnel": [row.to_dict() for row in self.funnel],
            "cost": self.cost.to_dict(),
            "contamination": {c.model: c.to_dict() for c in self.contamination},
            "hypotheses": {h.hypothesis.id: h.to_dict() for h in self.hypotheses},
        }


def compute_numbers(trials: Sequence[TrialFacts], specs: SpecSet) -> Numbers:
    tiers: list[Tier] = [t.tier for t in specs.oracle.tiers]
    return Numbers(
        trials=len(trials),
        trials_digest=set_digest(trials),
        outcomes=outcome_counts(trials),
        pass_rates=pass_rates(trials, lambda t: t.model),
        by_recipe=pass_rates(trials, lambda t: f"{t.model} / {t.recipe}"),
        funnel=funnel(trials, tiers),
        cost=cost_breakdown(trials, specs),
        contamination=contamination(trials, specs),
        hypotheses=evaluate_hypotheses(trials, specs),
    )
