"""Pairwise pass-rate differences against a reference computation written out here, and
each model's funnel and cost."""

from __future__ import annotations

import math

import pytest

from migration_evals.core.model import Tier
from migration_evals.core.tasks import task_of
from migration_evals.gate.report.comparisons import (
    model_costs,
    paired_differences,
    pairwise_differences,
    task_grid,
)
from migration_evals.gate.stats import newcombe_interval
from migration_evals.gate.trials import TrialFacts
from tests.conftest import SCIPY_STATS_GROUP
from tests.gate.ledgers import facts, many

pytestmark = pytest.mark.xdist_group(SCIPY_STATS_GROUP)


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _reference(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float, float]:
    """Newcombe (1998), method 10: the hybrid score interval from two Wilson intervals;
    and the pooled two-proportion z-test's two-sided p."""
    from scipy.stats import norm  # imported here: see SCIPY_STATS_GROUP

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


def _answer(task: str, model: str, outcome: str, n: int) -> TrialFacts:
    """One model's trial of ``task`` (its copy ``TASK@MODEL``, as the demo names them)."""
    return facts(n, model, outcome=outcome)._replace(changeset_id=f"{task}@{model}")


def _paired_trials(table: dict[tuple[str, str], int]) -> list[TrialFacts]:
    """Two models' trials on the same tasks, as many of each (a outcome, b outcome) pair
    as ``table`` says."""
    trials: list[TrialFacts] = []
    for (a, b), count in table.items():
        for _ in range(count):
            task = f"task-{len(trials)}"
            trials.append(_answer(task, "model-a", a, len(trials)))
            trials.append(_answer(task, "model-b", b, len(trials)))
    return trials


def test_the_paired_test_is_mcnemars_exact_against_a_reference_value() -> None:
    # 10 tasks only a passed, 3 only b: the exact two-sided binomial p of 3 in 13 at 1/2 is
    # 2 * (C(13,0) + C(13,1) + C(13,2) + C(13,3)) / 2**13 = 2 * 378 / 8192 = 0.0922851...
    trials = _paired_trials(
        {("pass", "pass"): 20, ("pass", "fail"): 10, ("fail", "pass"): 3, ("fail", "fail"): 7}
    )
    [row] = paired_differences(trials)
    assert (row["a"], row["b"], row["pairs"], row["shared_tasks"]) == ("model-a", "model-b", 40, 40)
    counts = ("both_passed", "only_a_passed", "only_b_passed", "neither_passed")
    assert [row[k] for k in counts] == [20, 10, 3, 7]
    assert row["p"] == pytest.approx(756 / 8192, abs=1e-12)
    assert row["p"] == pytest.approx(0.0922851562, abs=1e-9)
    assert row["difference"] == pytest.approx((10 - 3) / 40)
    # The unpaired comparison of the same trials, beside it, sees two rates only.
    [unpaired] = pairwise_differences(trials)
    assert (unpaired["a_passed"], unpaired["b_passed"]) == (30, 23)


def test_errors_and_tasks_of_one_model_only_stay_out_of_the_pairs() -> None:
    trials = _paired_trials({("pass", "fail"): 2, ("error", "pass"): 1})
    trials.append(_answer("only-a", "model-a", "pass", 99))
    [row] = paired_differences(trials)
    assert (row["shared_tasks"], row["pairs"], row["a_only_tasks"]) == (3, 2, 1)
    assert row["p"] == pytest.approx(0.5)  # 2 of 2 discordant pairs: 2 * 1/4


def test_models_that_agree_everywhere_have_no_evidence_of_a_difference() -> None:
    [row] = paired_differences(_paired_trials({("pass", "pass"): 3, ("fail", "fail"): 2}))
    assert (row["p"], row["difference"]) == (1.0, 0.0)
    assert "no discordant pair" in row["note"]


def test_the_grid_says_when_the_models_tasks_differ() -> None:
    same = task_grid(_paired_trials({("pass", "fail"): 2}))
    assert (same["same_tasks"], same["note"], same["tasks"]) == (True, "", 2)
    assert same["rows"][0] == {
        "task": "task-0",
        "cells": {"model-a": "passed", "model-b": "failed"},
    }
    # Mined changesets: every pull request is its own task.
    differ = task_grid([*many(3, model="gpt-5"), *many(2, start=10, model="claude")])
    assert (differ["same_tasks"], differ["shared_by_all"], differ["tasks"]) == (False, 0, 5)
    assert "graded on different tasks: 0 of 5" in differ["note"]
    assert differ["rows"][0]["cells"] == {"claude": None, "gpt-5": "passed"}
    [row] = paired_differences([*many(3, model="gpt-5"), *many(2, start=10, model="claude")])
    assert (row["pairs"], row["p"], row["note"]) == (0, None, "no task graded for both")


def test_a_task_is_read_back_from_its_copies_ids() -> None:
    assert task_of("java-calc/good@gpt-5", "gpt-5") == "java-calc/good"
    assert task_of("java-calc/good", "gpt-5") == "java-calc/good"
    # A pull request's id ends in its head commit, never in a model's name.
    assert task_of("o/r/pull/7@0123456789ab", "gpt-5") == "o/r/pull/7@0123456789ab"
