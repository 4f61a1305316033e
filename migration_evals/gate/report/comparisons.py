"""What a researcher compares: each model's funnel and cost, and the difference in pass rate
between every pair of models with its 95% interval and test.

The difference of two pass rates gets Newcombe's hybrid score interval (method 10, from
the two Wilson intervals) and the two-sided two-proportion z-test's p-value. Both rates
count graded trials only, as every pass rate of the report does. These are descriptive:
the pre-registered hypotheses are the report's only confirmatory tests.

Those unpaired comparisons pool whatever tasks each model was graded on. Where two models
were graded on the same tasks (``migration_evals.core.tasks``), the task × model grid shows each
outcome side by side and ``paired_differences`` compares them task by task with McNemar's exact
test, which only the tasks the two models disagree on inform. ``task_grid`` says when the
models' tasks differ, so a reader knows when the unpaired numbers compare different work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from migration_evals.core.model import Tier
from migration_evals.core.tasks import task_of
from migration_evals.gate.stats import mcnemar_exact, newcombe_interval, two_proportion_ztest
from migration_evals.gate.tallies import funnel
from migration_evals.gate.trials import TrialFacts

__all__ = ["GRID_LIMIT", "model_costs", "paired_differences", "pairwise_differences", "task_grid"]

GRID_LIMIT = 200  # tasks the grid lists (the counts and the paired tests use every one)


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


def _by_task(trials: Sequence[TrialFacts]) -> dict[str, dict[str, TrialFacts]]:
    """Task to model to its trial (the latest, if a model answered a task twice)."""
    grid: dict[str, dict[str, TrialFacts]] = {}
    for trial in sorted(trials, key=lambda t: t.last_seq):
        grid.setdefault(task_of(trial.changeset_id, trial.model), {})[trial.model] = trial
    return dict(sorted(grid.items()))


def task_grid(trials: Sequence[TrialFacts]) -> dict[str, Any]:
    """Each task's outcome per model, and whether the models were graded on the same tasks."""
    models = sorted({t.model for t in trials})
    grid = _by_task(trials)
    shared = [task for task, cells in grid.items() if len(cells) == len(models)]
    rows = [
        {"task": task, "cells": {m: cells[m].outcome.value if m in cells else None for m in models}}
        for task, cells in list(grid.items())[:GRID_LIMIT]
    ]
    same = bool(grid) and len(shared) == len(grid)
    note = "" if same or len(models) < 2 else _differ_note(len(shared), len(grid), len(models))
    return {
        "models": models,
        "tasks": len(grid),
        "shared_by_all": len(shared),
        "same_tasks": same,
        "note": note,
        "rows": rows,
        "rows_left_out": max(0, len(grid) - GRID_LIMIT),
    }


def _differ_note(shared: int, tasks: int, models: int) -> str:
    return (
        f"the models were graded on different tasks: {shared} of {tasks} task(s) were given "
        f"to all {models} models, so the unpaired differences above compare different work; "
        "the paired tests below use only the tasks each pair shares"
    )


def _paired(a: str, b: str, grid: dict[str, dict[str, TrialFacts]]) -> dict[str, Any]:
    """The tasks both models were graded on, as a 2×2 table, and McNemar's exact test."""
    both = [c for c in grid.values() if a in c and b in c]
    graded = [c for c in both if c[a].outcome.graded and c[b].outcome.graded]
    table = Counter((c[a].passed, c[b].passed) for c in graded)
    only_a, only_b = table[True, False], table[False, True]
    row: dict[str, Any] = {
        "a": a,
        "b": b,
        "shared_tasks": len(both),
        "pairs": len(graded),
        "both_passed": table[True, True],
        "only_a_passed": only_a,
        "only_b_passed": only_b,
        "neither_passed": table[False, False],
        "a_only_tasks": sum(1 for c in grid.values() if a in c and b not in c),
        "b_only_tasks": sum(1 for c in grid.values() if b in c and a not in c),
    }
    if not graded:
        return {**row, "difference": None, "p": None, "note": "no task graded for both"}
    note = "" if only_a + only_b else "no discordant pair: the two agree on every shared task"
    return {
        **row,
        "difference": (only_a - only_b) / len(graded),
        "p": mcnemar_exact(only_a, only_b),
        "note": note,
    }


def paired_differences(trials: Sequence[TrialFacts]) -> list[dict[str, Any]]:
    """For every pair of models (names sorted), the paired difference in pass rate over
    the tasks both were graded on, with McNemar's exact two-sided p."""
    grid = _by_task(trials)
    models = sorted({t.model for t in trials})
    return [_paired(a, b, grid) for a, b in combinations(models, 2)]
