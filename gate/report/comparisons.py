"""What a researcher compares: each model's funnel and cost, and the difference in pass rate
between every pair of models with its 95% interval and test.

The difference of two pass rates gets Newcombe's hybrid score interval (method 10, from
the two Wilson intervals) and the two-sided two-proportion z-test's p-value. Both rates
count graded trials only, as every pass rate of the report does. These are descriptive:
the pre-registered hypotheses are the report's only confirmatory tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from core.model import Tier
from gate.stats import newcombe_interval, two_proportion_ztest
from gate.tallies import funnel
from gate.trials import TrialFacts

__all__ = ["model_costs", "pairwise_differences"]


def _by_model(trials: Sequence[TrialFacts]) -> dict[str, list[TrialFacts]]:
    groups: dict[str, list[TrialFacts]] = {}
    for trial in trials:
        groups.setdefault(trial.model, []).append(trial)
    return dict(sorted(groups.items()))


def model_costs(trials: Sequence[TrialFacts], tiers: Sequence[Tier]) -> dict[str, Any]:
    """Per model: its funnel, what it cost, and the cost per trial and per pass."""
    found = {}
    for model, group in _by_model(trials).items():
        passed = sum(t.passed for t in group)
        actual = round(sum(t.actual_cost_usd for t in group), 6)
        listed = round(sum(t.list_cost_usd for t in group), 6)
        found[model] = {
            "trials": len(group),
            "passed": passed,
            "funnel": [row.to_dict() for row in funnel(group, tiers)],
            "list_usd": listed,
            "actual_usd": actual,
            "list_usd_per_trial": round(listed / len(group), 6),
            "list_usd_per_pass": round(listed / passed, 6) if passed else None,
        }
    return found


def _difference(
    a: str, b: str, first: Sequence[TrialFacts], second: Sequence[TrialFacts]
) -> dict[str, Any]:
    x1, n1 = sum(t.passed for t in first), sum(t.outcome.graded for t in first)
    x2, n2 = sum(t.passed for t in second), sum(t.outcome.graded for t in second)
    row: dict[str, Any] = {
        "a": a,
        "b": b,
        "a_passed": x1,
        "a_graded": n1,
        "b_passed": x2,
        "b_graded": n2,
    }
    if not n1 or not n2:
        empty = a if not n1 else b
        return {
            **row,
            "difference": None,
            "newcombe_95": None,
            "z": None,
            "p": None,
            "note": f"{empty} has no graded trial",
        }
    low, high = newcombe_interval(x1, n1, x2, n2)
    z, p = two_proportion_ztest(x1, n1, x2, n2, "two-sided")
    return {
        **row,
        "difference": x1 / n1 - x2 / n2,
        "newcombe_95": [low, high],
        "z": z,
        "p": p,
        "note": "",
    }


def pairwise_differences(trials: Sequence[TrialFacts]) -> list[dict[str, Any]]:
    """Pass rate of ``a`` minus that of ``b`` for every pair of models (names sorted)."""
    groups = _by_model(trials)
    return [_difference(a, b, groups[a], groups[b]) for a, b in combinations(groups, 2)]
