"""Pass rates with Wilson intervals, the funnel and the cost breakdown, from trial facts.

Infrastructure errors and trials that were never graded are counted, but kept out of
every pass-rate denominator. Cost compares what the spec lists with what was spent, and
sets the measured infrastructure cost (sandbox seconds recorded in the envelopes × the
spec's rate) beside the measured inference cost (judge tokens × the judges' prices).
Cached envelopes cost nothing and add no seconds or tokens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Tier, TierFunnel, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.gate.stats import wilson_interval
from migration_evals.gate.trials import Outcome, TrialFacts, set_digest

__all__ = [
    "CostBreakdown",
    "PassRate",
    "Proportion",
    "cost_breakdown",
    "funnel",
    "outcome_counts",
    "pass_rates",
]


@dataclass(frozen=True, slots=True)
class Proportion:
    """Passed over graded trials, with the 95% Wilson interval."""

    passed: int
    graded: int
    low: float
    high: float

    @classmethod
    def of(cls, passed: int, graded: int) -> Proportion:
        return cls(passed, graded, *wilson_interval(passed, graded))

    @property
    def rate(self) -> float | None:
        """None when nothing was graded: "no data", never a 0% or a NaN."""
        return self.passed / self.graded if self.graded else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "graded": self.graded,
            "rate": self.rate,
            "wilson_95": [self.low, self.high],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class PassRate(Proportion):
    """The proportion of one group, with what was not graded and the trials' digest."""

    group: str
    inconclusive: int
    errors: int
    not_graded: int
    trials_digest: str

    def to_dict(self) -> dict[str, Any]:
        return {
            **Proportion.to_dict(self),
            "inconclusive": self.inconclusive,
            "infrastructure_errors": self.errors,
            "not_graded": self.not_graded,
            "trials_digest": self.trials_digest,
        }


def _pass_rate(group: str, trials: Sequence[TrialFacts]) -> PassRate:
    outcomes = Counter(t.outcome for t in trials)
    graded = sum(n for outcome, n in outcomes.items() if outcome.graded)
    low, high = wilson_interval(outcomes[Outcome.PASSED], graded)
    return PassRate(
        group=group,
        passed=outcomes[Outcome.PASSED],
        graded=graded,
        inconclusive=outcomes[Outcome.INCONCLUSIVE],
        errors=outcomes[Outcome.ERROR],
        not_graded=outcomes[Outcome.NOT_GRADED],
        low=low,
        high=high,
        trials_digest=set_digest(trials),
    )


def pass_rates(
    trials: Iterable[TrialFacts], key: Callable[[TrialFacts], str]
) -> tuple[PassRate, ...]:
    """One pass rate per group, groups sorted by name."""
    groups: dict[str, list[TrialFacts]] = {}
    for trial in trials:
        groups.setdefault(key(trial), []).append(trial)
    return tuple(_pass_rate(name, groups[name]) for name in sorted(groups))


def outcome_counts(trials: Iterable[TrialFacts]) -> dict[str, int]:
    counts = Counter(t.outcome for t in trials)
    return {outcome.value: counts[outcome] for outcome in Outcome}


_VERDICT_FIELD = {
    Verdict.PASS: "passed",
    Verdict.FAIL: "failed",
    Verdict.ERROR: "errors",
    Verdict.INCONCLUSIVE: "inconclusive",
}


def funnel(trials: Iterable[TrialFacts], tiers: Sequence[Tier]) -> tuple[TierFunnel, ...]:
    """Per tier: how many trials reached it, what became of them, what it cost."""
    counts = {tier: Counter[str]() for tier in tiers}
    costs = {tier: [0.0, 0.0] for tier in tiers}
    for trial in trials:
        for facts in trial.tiers:
            if facts.verdict is Verdict.SKIPPED or facts.tier not in counts:
                continue
            row = counts[facts.tier]
            row["reached"] += 1
            row[_VERDICT_FIELD[facts.verdict]] += 1
            row["cached"] += facts.cached
            row["fabricated"] += facts.fabricated
            costs[facts.tier][0] += facts.list_cost_usd
            costs[facts.tier][1] += facts.actual_cost_usd
    return tuple(
        TierFunnel(
            tier=tier,
            cost_usd=round(costs[tier][0], 6),
            actual_cost_usd=round(costs[tier][1], 6),
            **{name: counts[tier][name] for name in _FUNNEL_COUNTS},
        )
        for tier in tiers
    )


_FUNNEL_COUNTS = ("reached", "passed", "failed", "errors", "inconclusive", "cached", "fabricated")


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """List versus actual cost, and measured infrastructure versus inference cost."""

    list_usd: float
    actual_usd: float
    sandbox_s: float
    usd_per_second: float
    inference_usd: float
    judge_tokens: tuple[int, int]

    @property
    def infrastructure_usd(self) -> float:
        return round(self.sandbox_s * self.usd_per_second, 6)

    @property
    def inference_ratio(self) -> float | None:
        """Inference over infrastructure cost; None when no sandbox time was measured."""
        if self.infrastructure_usd <= 0:
            return None
        return round(self.inference_usd / self.infrastructure_usd, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "list_usd": self.list_usd,
            "actual_usd": self.actual_usd,
            "sandbox_seconds": self.sandbox_s,
            "usd_per_sandbox_second": self.usd_per_second,
            "infrastructure_usd": self.infrastructure_usd,
            "inference_usd": self.inference_usd,
            "judge_tokens": {"input": self.judge_tokens[0], "output": self.judge_tokens[1]},
            "inference_to_infrastructure": self.inference_ratio,
        }


def cost_breakdown(trials: Sequence[TrialFacts], specs: SpecSet) -> CostBreakdown:
    rate = specs.oracle.sandbox.usd_per_second
    return CostBreakdown(
        list_usd=round(sum(t.list_cost_usd for t in trials), 6),
        actual_usd=round(sum(t.actual_cost_usd for t in trials), 6),
        sandbox_s=round(sum(t.sandbox_s for t in trials), 3),
        usd_per_second=rate,
        inference_usd=round(sum(t.judge_usd for t in trials), 6),
        judge_tokens=(
            sum(t.judge_tokens[0] for t in trials),
            sum(t.judge_tokens[1] for t in trials),
        ),
    )
