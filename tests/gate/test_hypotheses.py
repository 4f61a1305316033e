"""Pre-registered hypotheses are tested exactly as registered; HARKing is found."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from migration_evals.core.spec_types import HypothesisGroups
from migration_evals.core.specs import SpecSet
from migration_evals.gate.hypotheses import HypothesisStatus, evaluate_hypotheses, find_harking
from migration_evals.gate.stats import two_proportion_ztest
from tests.gate.ledgers import many


def _with(specs: SpecSet, **fields: Any) -> SpecSet:
    base = specs.hypotheses["h1-claude-vs-gpt-java"]
    if "groups" in fields:
        fields["groups"] = HypothesisGroups(fields["groups"]["a"], fields["groups"]["b"])
    hypothesis = replace(base, **fields)
    return replace(specs, hypotheses={base.id: hypothesis})


def _java(model: str, passed: int, failed: int, start: int) -> list:  # type: ignore[type-arg]
    return many(passed, start=start, model=model) + many(
        failed, start=start + passed, model=model, outcome="fail"
    )


def test_h1_is_computed_as_registered(specs: SpecSet) -> None:
    trials = _java("claude-sonnet-4-5", 24, 16, 0) + _java("gpt-5", 15, 25, 100)
    trials += many(30, start=500, model="claude-sonnet-4-5", recipe="go-import-rewrite")
    results = {r.hypothesis.id: r for r in evaluate_hypotheses(trials, specs)}
    h1 = results["h1-claude-vs-gpt-java"]
    assert h1.status is HypothesisStatus.TESTED
    assert (h1.a.passed, h1.a.graded, h1.b.passed, h1.b.graded) == (24, 40, 15, 40)
    assert (h1.z, h1.p) == two_proportion_ztest(24, 40, 15, 40, "two-sided")
    assert h1.reject_null is (h1.p is not None and h1.p < 0.05)
    document = h1.to_dict()
    assert document["alternative"] == "two-sided" and document["groups"]["a"]["recipe"] == (
        "java8-to-17"
    )
    h2 = results["h2-go-rewrites-easier"]  # go (30 passing) versus java (80, 39 passing)
    assert (h2.z, h2.p) == two_proportion_ztest(30, 30, 39, 80, "larger")
    assert h2.reject_null is True


def test_too_few_trials_is_insufficient_data(specs: SpecSet) -> None:
    trials = _java("claude-sonnet-4-5", 5, 5, 0) + _java("gpt-5", 20, 20, 100)
    result = evaluate_hypotheses(trials, specs)[0]
    assert result.status is HypothesisStatus.INSUFFICIENT_DATA
    assert result.p is None and result.reject_null is None
    assert result.detail == "group a has 10, group b 40 graded trials; each needs 30"


def test_infrastructure_errors_are_not_in_the_groups(specs: SpecSet) -> None:
    trials = _java("claude-sonnet-4-5", 20, 20, 0) + _java("gpt-5", 20, 20, 100)
    trials += many(10, start=300, model="gpt-5", outcome="error")
    assert evaluate_hypotheses(trials, specs)[0].b.graded == 40


def test_a_list_filter_means_any_of(specs: SpecSet) -> None:
    changed = _with(
        specs, groups={"a": {"model": ["gpt-5", "gemini-2.5-pro"]}, "b": {"model": "x"}}
    )
    trials = many(3, model="gpt-5") + many(2, start=10, model="gemini-2.5-pro")
    assert evaluate_hypotheses(trials, changed)[0].a.graded == 5


def test_an_unknown_filter_key_cannot_be_computed(specs: SpecSet) -> None:
    changed = _with(specs, groups={"a": {"language": "java"}, "b": {"model": "gpt-5"}})
    result = evaluate_hypotheses(many(40), changed)[0]
    assert result.status is HypothesisStatus.NOT_COMPUTABLE
    assert result.detail == "unknown filter key(s) language"


@pytest.mark.parametrize(
    ("registered", "harking"),
    [(date(2026, 11, 28), False), (date(2026, 11, 29), False), (date(2026, 11, 30), True)],
)
def test_harking_is_registration_after_the_first_covered_result(
    specs: SpecSet, registered: date, harking: bool
) -> None:
    changed = _with(specs)
    hypothesis = replace(changed.hypotheses["h1-claude-vs-gpt-java"], registered_at=registered)
    changed = replace(changed, hypotheses={hypothesis.id: hypothesis})
    trials = many(2, model="gpt-5", recorded_at="2026-11-29T23:59:00+00:00")
    trials += many(2, start=10, model="claude-sonnet-4-5", recorded_at="2026-12-05T00:00:00+00:00")
    trials += many(2, start=20, model="gpt-5", recipe="go-import-rewrite", recorded_at="2026-01-01")
    found = find_harking(changed, trials)
    assert bool(found) is harking
    if found:
        assert found[0].first_result_at == "2026-11-29T23:59:00+00:00"
