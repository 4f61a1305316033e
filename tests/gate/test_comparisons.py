"""Pairwise pass-rate differences against a reference computation written out here, and
each model's funnel and cost."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from core.model import Tier
from gate.report.comparisons import model_costs, pairwise_differences
from gate.stats import newcombe_interval
from tests.gate.ledgers import many


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _reference(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float, float]:
    """Newcombe (1998), method 10: the hybrid score interval from two Wilson intervals;
    and the pooled two-proportion z-test's two-sided p."""
    z = norm.ppf(0.975)
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = _wilson(x1, n1, z)
    l2, u2 = _wilson(x2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    pooled = (x1 + x2) / (n1 + n2)
    statistic = d / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return low, high, 2 * norm.sf(abs(statistic))


@pytest.mark.parametrize(
    ("x1", "n1", "x2", "n2"), [(56, 70, 48, 80), (9, 10, 3, 10), (1, 30, 0, 25), (12, 24, 12, 24)]
)
def test_the_interval_is_newcombes(x1: int, n1: int, x2: int, n2: int) -> None:
    low, high, _ = _reference(x1, n1, x2, n2)
    assert newcombe_interval(x1, n1, x2, n2) == pytest.approx((low, high), abs=1e-12)


def test_newcombes_own_example() -> None:
    # Newcombe (1998), Table II, example (a): 56/70 - 48/80, method 10 gives 0.0524 to 0.3339.
    low, high = newcombe_interval(56, 70, 48, 80)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_pairwise_differences_match_the_reference() -> None:
    trials = [
        *many(18, model="a-model", outcome="pass"),
        *many(7, start=100, model="a-model", outcome="fail"),
        *many(2, start=150, model="a-model", outcome="error"),  # outside the denominators
        *many(9, start=200, model="b-model", outcome="pass"),
        *many(14, start=300, model="b-model", outcome="inconclusive"),  # counts as not passed
        *many(3, start=400, model="c-model", outcome="error"),  # nothing graded
    ]
    first, second, third = pairwise_differences(trials)
    low, high, p = _reference(18, 25, 9, 23)
    assert (first["a"], first["b"], first["a_graded"], first["b_graded"]) == (
        "a-model",
        "b-model",
        25,
        23,
    )
    assert first["difference"] == pytest.approx(18 / 25 - 9 / 23)
    assert first["newcombe_95"] == pytest.approx([low, high], abs=1e-12)
    assert first["p"] == pytest.approx(p, rel=1e-9)
    assert (second["b"], second["difference"], second["note"]) == (
        "c-model",
        None,
        "c-model has no graded trial",
    )
    assert third["newcombe_95"] is None and third["p"] is None


def test_each_model_has_its_funnel_and_cost() -> None:
    trials = [*many(3, model="a-model"), *many(2, start=10, model="a-model", outcome="fail")]
    found = model_costs(trials, list(Tier))["a-model"]
    assert (found["trials"], found["passed"]) == (5, 3)
    assert [(r["tier"], r["reached"], r["passed"]) for r in found["funnel"]] == [
        ("apply", 5, 5),
        ("compile", 5, 3),
        ("tests", 3, 3),
        ("judge", 3, 3),
    ]
    assert found["list_usd"] == pytest.approx(sum(t.list_cost_usd for t in trials))
    assert found["list_usd_per_pass"] == pytest.approx(found["list_usd"] / 3, abs=1e-6)
