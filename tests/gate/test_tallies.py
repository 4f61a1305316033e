"""Pass rates, funnel and cost from trial facts; errors outside the denominators."""

from __future__ import annotations

from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from migration_evals.gate.selection import select_trials
from migration_evals.gate.stats import wilson_interval
from migration_evals.gate.tallies import cost_breakdown, funnel, outcome_counts, pass_rates
from migration_evals.gate.trials import TrialFacts
from tests.gate.ledgers import facts, many


def test_pass_rates_keep_errors_and_ungraded_apart() -> None:
    trials = many(6) + many(3, start=10, outcome="fail") + many(1, start=20, outcome="inconclusive")
    trials += many(4, start=30, outcome="error")
    (rate,) = pass_rates(trials, lambda t: t.model)
    assert (rate.passed, rate.graded, rate.inconclusive, rate.errors) == (6, 10, 1, 4)
    assert rate.rate == 0.6
    assert (rate.low, rate.high) == wilson_interval(6, 10)


def test_a_group_without_graded_trials_has_no_rate() -> None:
    (rate,) = pass_rates(many(2, outcome="error"), lambda t: t.model)
    assert rate.rate is None and rate.to_dict()["rate"] is None
    assert (rate.low, rate.high) == (0.0, 1.0)


def test_outcomes_and_funnel() -> None:
    trials = many(2) + many(1, start=5, outcome="fail") + many(1, start=9, outcome="error")
    assert outcome_counts(trials) == {
        "passed": 2,
        "failed": 1,
        "inconclusive": 0,
        "error": 1,
        "not graded": 0,
    }
    rows = {row.tier: row for row in funnel(trials, list(Tier))}
    assert (rows[Tier.APPLY].reached, rows[Tier.APPLY].errors) == (4, 1)
    assert (rows[Tier.COMPILE].reached, rows[Tier.COMPILE].failed) == (3, 1)
    assert rows[Tier.JUDGE].reached == rows[Tier.JUDGE].passed == 2
    assert rows[Tier.APPLY].cost_usd == 0.04


def test_cost_sets_infrastructure_beside_inference(specs: SpecSet) -> None:
    trials = [t._replace(sandbox_s=100.0, judge_usd=0.5, judge_tokens=(10, 2)) for t in many(2)]
    cost = cost_breakdown(trials, specs)
    rate = specs.oracle.sandbox.usd_per_second
    assert cost.infrastructure_usd == round(200 * rate, 6)
    assert cost.inference_usd == 1.0
    assert cost.inference_ratio == round(1.0 / (200 * rate), 2)
    assert cost.to_dict()["judge_tokens"] == {"input": 20, "output": 4}
    assert cost_breakdown(many(1), specs).inference_ratio is None


def test_the_latest_trial_per_changeset_counts() -> None:
    first = facts(1, outcome="error")
    again = facts(2)._replace(changeset_id=first.changeset_id, first_seq=9, last_seq=9)
    other_run = facts(3)._replace(run_id="run-2", first_seq=12, last_seq=12)
    selection = select_trials([first, again, other_run])
    assert [t.trial_id for t in selection.trials] == ["t2", "t3"]
    assert selection.superseded == 1
    only = select_trials([first, again, other_run], run_id="run-2")
    assert [t.trial_id for t in only.trials] == ["t3"] and only.rule.endswith("within run run-2")


def test_bundle_round_trip_of_trial_facts() -> None:
    trial = facts(7, outcome="inconclusive")
    back = TrialFacts.from_bundle(trial.to_bundle())
    assert back == trial._replace(first_seq=0, last_seq=0)
    assert back.outcome is trial.outcome and back.passed is False
