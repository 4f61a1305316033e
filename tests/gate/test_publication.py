"""Every refusal code, produced by a crafted ledger and absent from a clean one."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace

import pytest

from migration_evals.core.liveness import Holder
from migration_evals.core.model import FabricatedMark, Stamps, Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.judges import JudgeReliabilityView
from migration_evals.gate.publication import check
from migration_evals.gate.refusals import GateDecision, RefusalCode
from migration_evals.gate.trials import TrialFacts
from tests.gate.ledgers import MODELS, POST, PRE, Plan, add_gold, append, balanced

MARK = FabricatedMark("judge", "k" * 8, "cassettes/judge/missing.json", "cassette miss")


def _decide(store: Store, specs: SpecSet, **options: object) -> GateDecision:
    return check(evaluate(store, specs, **options))  # type: ignore[arg-type]


def _codes(decision: GateDecision) -> list[str]:
    return decision.codes()


def test_a_clean_ledger_is_publishable(clean_store: Store, gate_specs: SpecSet) -> None:
    decision = _decide(clean_store, gate_specs)
    assert decision.to_dict() == {"publishable": True, "refusals": []}


def test_editing_one_stored_row_is_ledger_tampered(clean_store: Store, gate_specs: SpecSet) -> None:
    path = clean_store.db.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE ledger SET verdict = 'fail' WHERE seq = 7 AND verdict = 'pass'")
    decision = _decide(clean_store, gate_specs)
    assert _codes(decision) == ["ledger_tampered"]
    assert "row 7: content does not match its hash (edited)" in decision.refusals[0].detail


def test_stale_stamps_name_the_spec_and_the_trials(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    current = gate_specs.stamps_for("java8-to-17")
    plans[1] = replace(plans[1], stamps=replace(current, oracle="0" * 64))
    plans[3] = replace(plans[3], stamps=replace(current, recipe="1" * 64))
    trials = append(store, gate_specs, plans)
    add_gold(store)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["stale_stamp", "stale_stamp"]
    details = " / ".join(r.detail for r in decision.refusals)
    assert (
        f"the oracle spec changed since 1 counted trial(s) were graded: {trials[1].id}" in details
    )
    assert f"recipe java8-to-17 changed since 1 counted trial(s) were graded: {trials[3].id}" in (
        details
    )


def test_a_fabricated_mark_three_levels_deep_is_found(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    nested = {"judges": [{"transcript": {"fabricated": [MARK.to_dict()]}}]}
    plans[0] = replace(plans[0], strict=None, details={Tier.JUDGE: nested})
    trials = append(store, gate_specs, plans)
    add_gold(store)
    assert not any(e.is_fabricated for e in trials[0].envelopes)  # not on the envelope itself
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["fabricated"]
    assert "envelope.details.judges[0].transcript.fabricated (judge: cassette miss)" in (
        decision.refusals[0].detail
    )


def test_a_fabricated_envelope_is_refused(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    plans[5] = replace(plans[5], marks={Tier.APPLY: (MARK,)})
    append(store, gate_specs, plans)
    add_gold(store)
    assert _codes(_decide(store, gate_specs)) == ["fabricated"]


def test_a_superseded_fabricated_trial_does_not_count(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    append(store, gate_specs, [replace(plans[0], run_id="run-0", marks={Tier.APPLY: (MARK,)})])
    append(store, gate_specs, plans)
    add_gold(store)
    assert _decide(store, gate_specs).publishable


def test_too_few_trials_is_a_threshold(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced(per_bucket=10))
    add_gold(store)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["threshold:min_trials"]
    assert "fewer than 30 graded trials: claude-sonnet-4-5 (20)" in decision.refusals[0].detail


def test_too_many_infrastructure_errors_is_a_threshold(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    for index in range(0, 30, 3):
        plans.append(Plan(f"errored/{index}", MODELS[index % 3], outcome="error@compile"))
    append(store, gate_specs, plans)
    add_gold(store)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["threshold:max_infra_error_rate"]
    assert "10 of 130 counted trials (7.7%)" in decision.refusals[0].detail


def test_infrastructure_errors_stay_out_of_denominators(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced()
    plans.append(Plan("errored/1", "gpt-5", outcome="error@tests"))
    append(store, gate_specs, plans)
    add_gold(store)
    evaluation = evaluate(store, gate_specs)
    rate = next(r for r in evaluation.numbers.pass_rates if r.group == "gpt-5")
    assert (rate.passed, rate.graded, rate.errors) == (20, 40, 1)
    assert check(evaluation).publishable


def test_a_broken_anchor_refuses_everything(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced())
    add_gold(store, agree=10, disagree=10)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["broken_anchor"]
    assert "phi=0.000 (n=40) is below the floor 0.3" in decision.refusals[0].detail


def test_too_few_gold_rows_is_a_broken_anchor(store: Store, gate_specs: SpecSet) -> None:
    append(store, gate_specs, balanced())
    add_gold(store, agree=5)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["broken_anchor"]
    assert "only 10 gold-labelled pull request(s)" in decision.refusals[0].detail


def test_a_pre_cutoff_advantage_trips_contamination(store: Store, gate_specs: SpecSet) -> None:
    plans = [p for p in balanced() if p.model != "gpt-5"]
    for n in range(20):
        plans.append(Plan(f"gpt/pre/{n}", "gpt-5", created=PRE))
        outcome = "pass" if n < 4 else "fail@tests"
        plans.append(Plan(f"gpt/post/{n}", "gpt-5", outcome=outcome, created=POST))
    append(store, gate_specs, plans)
    add_gold(store)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["contamination"]
    assert decision.refusals[0].detail.startswith("gpt-5 passes repositories created before")


def _reliability(reliable: bool) -> object:
    def probe(_trials: Sequence[TrialFacts], _specs: SpecSet) -> JudgeReliabilityView:
        problems = () if reliable else ("primary vs humans: kappa 0.100 is below the floor 0.6",)
        return SimpleNamespace(reliable=reliable, problems=problems)  # type: ignore[return-value]

    return probe


def _strict_ledger(store: Store, specs: SpecSet) -> None:
    plans = balanced()
    for plan in plans[::4]:
        plan.strict = ("pass", "pass") if plan.outcome == "pass" else None
    append(store, specs, plans)
    add_gold(store)


def test_strict_numbers_from_an_unreliable_pair_are_refused(
    store: Store, gate_specs: SpecSet
) -> None:
    _strict_ledger(store, gate_specs)
    decision = _decide(store, gate_specs, reliability=_reliability(False))
    assert _codes(decision) == ["unreliable_judges"]
    assert decision.refusals[0].detail == (
        "18 counted trial(s) were judged in strict mode by a judge pair that is not "
        "reliable: primary vs humans: kappa 0.100 is below the floor 0.6"
    )
    assert _decide(store, gate_specs, reliability=_reliability(True)).publishable


def test_the_pair_is_asked_only_about_strict_numbers(
    clean_store: Store, gate_specs: SpecSet
) -> None:
    def never(_trials: Sequence[TrialFacts], _specs: SpecSet) -> JudgeReliabilityView:
        raise AssertionError("no strict-mode trial is counted: nothing to ask")

    assert _decide(clean_store, gate_specs, reliability=never).publishable


def test_the_default_probe_reads_gate_reliability(store: Store, gate_specs: SpecSet) -> None:
    _strict_ledger(store, gate_specs)  # none of these changesets carries a hand label
    decision = _decide(store, gate_specs)
    assert _codes(decision) == ["unreliable_judges"]
    assert "(primary) vs humans: no item rated by both" in decision.refusals[0].detail


def test_a_hypothesis_registered_after_its_first_result_is_harking(
    clean_store: Store, gate_specs: SpecSet
) -> None:
    late = replace(gate_specs.hypotheses["h1-claude-vs-gpt-java"], registered_at=date(2099, 1, 1))
    specs = replace(gate_specs, hypotheses={**gate_specs.hypotheses, late.id: late})
    decision = _decide(clean_store, specs)
    assert _codes(decision) == ["harking"]
    assert "h1-claude-vs-gpt-java was registered on 2099-01-01" in decision.refusals[0].detail


def test_every_refusal_is_listed_at_once(store: Store, gate_specs: SpecSet) -> None:
    plans = balanced(per_bucket=6)
    plans[0] = replace(plans[0], stamps=Stamps("0" * 64, "1" * 64, "2" * 64))
    plans[1] = replace(plans[1], marks={Tier.COMPILE: (MARK,)})
    append(store, gate_specs, plans)
    decision = _decide(store, gate_specs)
    assert _codes(decision) == [
        "stale_stamp",
        "stale_stamp",
        "stale_stamp",
        "fabricated",
        "broken_anchor",
        "threshold:min_trials",
    ]
    assert not decision.publishable


@pytest.mark.parametrize("code", list(RefusalCode))
def test_each_code_is_absent_from_a_clean_ledger(
    clean_store: Store, gate_specs: SpecSet, code: RefusalCode
) -> None:
    decision = _decide(clean_store, gate_specs, reliability=_reliability(True))
    assert all(r.code is not code for r in decision.refusals)


def _interrupt(store: Store, run_id: str) -> None:
    store.runs.start_run(run_id, {}, holder=Holder(pid=1, host="grader-1", lease_s=30.0))
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert [r.run_id for r in store.runs.mark_interrupted(later, here="elsewhere")] == [run_id]


def test_counted_trials_of_an_interrupted_run_are_refused_naming_the_run(
    clean_store: Store, gate_specs: SpecSet
) -> None:
    _interrupt(clean_store, "run-1")
    decision = _decide(clean_store, gate_specs)
    assert _codes(decision) == ["incomplete_run"]
    detail = decision.refusals[0].detail
    assert "run run-1 was interrupted" in detail
    assert "`migration-evals run --resume run-1`" in detail


def test_a_still_running_run_is_refused_and_a_resumed_completed_one_is_not(
    clean_store: Store, gate_specs: SpecSet
) -> None:
    holder = Holder(pid=1, host="grader-1", lease_s=30.0)
    clean_store.runs.start_run("run-1", {}, holder=holder)
    running = _decide(clean_store, gate_specs)
    assert _codes(running) == ["incomplete_run"]
    assert "run run-1 is still running" in running.refusals[0].detail
    later = datetime.now(UTC) + timedelta(minutes=1)
    clean_store.runs.mark_interrupted(later, here="elsewhere")
    assert clean_store.runs.reopen_run("run-1", holder)  # what ``run --resume`` does first
    assert _codes(_decide(clean_store, gate_specs)) == ["incomplete_run"]
    clean_store.runs.finish_run("run-1", "completed", {})
    _interrupt(clean_store, "run-2")  # no counted trial comes from it
    assert _decide(clean_store, gate_specs).publishable
