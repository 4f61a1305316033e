"""Provenance on a mixed ledger: live, recorded, replayed, hand-made, fabricated and
never-run envelopes counted from what each envelope records and the run's modes, reused
(cached) ones under the origin of the answer they reuse; the hand-written judge answers'
cost kept out of what was measured."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from migration_evals.core.model import FabricatedMark, Tier, Trial
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.provenance import Origin, envelope_origin, provenance, run_modes
from migration_evals.gate.publication import check
from migration_evals.gate.report import report_document
from migration_evals.gate.trial_detail import run_records
from tests.gate.ledgers import Plan, build_trial

LIVE = {
    Tier.COMPILE: "compile/3 sandbox:docker/2",
    Tier.TESTS: "tests/3 sandbox:docker/2",
    Tier.JUDGE: "judge/1 judge:anthropic/0.70 none",
}
REPLAY = {
    Tier.COMPILE: "compile/3 sandbox:replay",
    Tier.TESTS: "tests/3 sandbox:replay",
    Tier.JUDGE: "judge/1 judge:replay none",
}
MODES = {
    "run-live": {"mode": "live", "sandbox_mode": "live"},
    "run-record": {"mode": "record", "sandbox_mode": "record"},
    "run-replay": {"mode": "replay", "sandbox_mode": "replay"},
}


def _judge(recorded_by: str, cost: float) -> dict[str, Any]:
    answer = {
        "verdict": "pass",
        "confidence": 0.9,
        "rationale": "ok",
        "evidence": [],
        "problem": "",
    }
    return {
        "role": "primary",
        "model": "m",
        "answer": answer,
        "cost_usd": cost,
        "recorded_by": recorded_by,
        "fabricated": [],
    }


def _trial(specs: SpecSet, plan: Plan, adapters: dict[Tier, str]) -> Trial:
    trial = build_trial(plan, specs, f"t-{plan.run_id}-{plan.changeset_id}")
    envelopes = tuple(
        replace(e, adapter=adapters[e.tier])
        if e.adapter and e.tier in adapters and not e.cached
        else e
        for e in trial.envelopes
    )
    return replace(trial, envelopes=envelopes)


@pytest.fixture
def mixed(store: Store, gate_specs: SpecSet) -> Store:
    miss = FabricatedMark("sandbox", "k" * 64, "cassettes/sandbox/k.json", "no cassette")
    hand = {Tier.JUDGE: {"judges": [_judge("hand (written in a file; no model was asked)", 0.5)]}}
    recorder = {Tier.JUDGE: {"judges": [_judge("judge:openai/1.0", 0.012)]}}
    trials = [
        _trial(gate_specs, Plan("live-1", run_id="run-live"), LIVE),
        _trial(gate_specs, Plan("live-2", run_id="run-live"), LIVE),
        _trial(gate_specs, Plan("rec-1", run_id="run-record"), LIVE),
        _trial(gate_specs, Plan("rec-2", run_id="run-record", cached=True), LIVE),
        _trial(gate_specs, Plan("hand", run_id="run-replay", details=hand), REPLAY),
        _trial(gate_specs, Plan("replayed", run_id="run-replay", details=recorder), REPLAY),
        _trial(gate_specs, Plan("failed", run_id="run-replay", outcome="fail@compile"), REPLAY),
        _trial(
            gate_specs, Plan("missed", run_id="run-replay", marks={Tier.COMPILE: (miss,)}), REPLAY
        ),
    ]
    for run_id, options in MODES.items():
        store.runs.start_run(run_id, options)
    store.ledger.append_trials([(t, {}) for t in trials])
    return store


def test_shares_on_a_mixed_ledger(mixed: Store, gate_specs: SpecSet) -> None:
    evaluation = evaluate(mixed, gate_specs)
    options = {run: r["options"] for run, r in run_records(mixed.runs).items()}
    found = provenance(evaluation.selection.trials, options)
    assert found.envelopes == {
        # 8 of the live run, tier 1 of the 5 others that ran it, and the 4 reused ones
        # (their adapter is a live one; whether their maker recorded is not known)
        Origin.LIVE: 17,
        Origin.RECORDED: 3,
        Origin.REPLAYED: 8,
        Origin.HAND_MADE: 1,
        Origin.FABRICATED: 1,
        Origin.NOT_RUN: 2,
    }
    assert found.reused == {Origin.LIVE: 4}
    assert found.ran == 30
    assert found.share(Origin.LIVE) == pytest.approx(17 / 30)
    assert found.share(Origin.HAND_MADE) == pytest.approx(1 / 30)
    assert found.by_tier[Tier.JUDGE] == {
        Origin.LIVE: 3,
        Origin.RECORDED: 1,
        Origin.HAND_MADE: 1,
        Origin.REPLAYED: 2,
        Origin.NOT_RUN: 1,
    }
    assert found.mixed == (
        "3 runs (judge live, sandbox live: 1; judge record, sandbox record: 1; "
        "judge replay, sandbox replay: 1); "
        "envelopes of tiers 2-4 live, recorded, replayed, hand-made"
    )
    # Six recorded answers, one of them reused (it cost what it cost when it was made).
    assert found.measured_inference_usd == pytest.approx(6 * 0.012)
    assert found.unmeasured_inference_usd == pytest.approx(0.5)


def test_the_report_does_not_call_hand_made_cost_measured(
    mixed: Store, gate_specs: SpecSet
) -> None:
    evaluation = evaluate(mixed, gate_specs)
    options = {run: r["options"] for run, r in run_records(mixed.runs).items()}
    document = report_document(evaluation, check(evaluation), "now", options)
    assert document["provenance"]["shares"]["hand-made"] == pytest.approx(1 / 30)
    assert document["provenance"]["unmeasured_inference_usd"] == pytest.approx(0.5)
    cost, reused = document["numbers"]["cost"], document["provenance"]["reused_cost"]
    assert reused["sandbox_s"] > 0  # the reused trial's sandbox runs, as made
    made = (cost["sandbox_seconds"] + reused["sandbox_s"]) * cost["usd_per_sandbox_second"]
    assert document["measured_ratio"] == pytest.approx(round(0.072 / round(made, 6), 2))
    assert document["numbers"]["cost"]["inference_usd"] == pytest.approx(
        0.56
    )  # all of it, as before


def test_a_single_source_is_not_mixed(store: Store, gate_specs: SpecSet) -> None:
    store.runs.start_run("run-1", MODES["run-live"])
    store.ledger.append_trials([(_trial(gate_specs, Plan(f"c{n}"), LIVE), {}) for n in range(3)])
    found = provenance(evaluate(store, gate_specs).selection.trials, {"run-1": MODES["run-live"]})
    assert (found.mixed, found.share(Origin.LIVE)) == ("", 1.0)


def test_a_replayed_run_is_not_mixed_by_its_first_tier(store: Store, gate_specs: SpecSet) -> None:
    """Tier 1 always runs here (live); a run that replays every port is one source."""
    store.runs.start_run("run-1", MODES["run-replay"])
    store.ledger.append_trials([(_trial(gate_specs, Plan(f"c{n}"), REPLAY), {}) for n in range(3)])
    found = provenance(evaluate(store, gate_specs).selection.trials, {"run-1": MODES["run-replay"]})
    assert found.envelopes[Origin.LIVE] == 3 and found.envelopes[Origin.REPLAYED] == 9
    assert found.mixed == ""


def test_origin_reads_the_envelope_alone() -> None:
    base = {
        "tier": "judge",
        "adapter": "judge/1 judge:replay none",
        "cached": False,
        "fabricated": [],
    }
    assert envelope_origin(base) is Origin.REPLAYED
    assert (
        envelope_origin({**base, "details": {"judges": [{"recorded_by": "a person"}]}})
        is Origin.HAND_MADE
    )
    assert envelope_origin({**base, "fabricated": [{"port": "judge"}]}) is Origin.FABRICATED
    # A reused envelope is what it reuses (a fabricated one is never reused; if it were,
    # it would still say fabricated).
    assert envelope_origin({**base, "cached": True}) is Origin.REPLAYED
    assert (
        envelope_origin({**base, "cached": True, "fabricated": [{"port": "judge"}]})
        is Origin.FABRICATED
    )
    assert envelope_origin({**base, "adapter": ""}) is Origin.NOT_RUN
    assert envelope_origin({**base, "tier": "apply", "adapter": "apply/1"}) is Origin.LIVE


def _made(list_cost: float, actual: float) -> dict[str, Any]:
    return {"trial_id": "t-first", "list_cost_usd": list_cost, "actual_cost_usd": actual}


def test_a_rerun_rests_on_what_the_first_run_made(store: Store, gate_specs: SpecSet) -> None:
    """The second run of the demo reuses every envelope: its provenance still says the
    judge answers were written by hand (no judge was asked), and what they cost when made."""
    hand = _judge("hand (answers written in examples/judgements.yaml; no model was asked)", 0.25)
    hand.update(input_tokens=600, output_tokens=40)
    details = {
        Tier.COMPILE: {"cached_from": _made(0.01, 0.001)},
        Tier.TESTS: {"cached_from": _made(0.03, 0.002)},
        Tier.JUDGE: {"judges": [hand], "cached_from": _made(0.08, 0.25)},
    }
    again = Plan("again", run_id="run-2", cached=True, details=details)
    store.runs.start_run("run-2", {"plan": {"modes": {"judge": "replay", "sandbox": "replay"}}})
    trial = build_trial(again, gate_specs, "t-again")
    reused = tuple(replace(e, adapter=REPLAY.get(e.tier, "apply/2")) for e in trial.envelopes)
    store.ledger.append_trials([(replace(trial, envelopes=reused), {})])
    trials = evaluate(store, gate_specs).selection.trials
    found = provenance(trials, {run: r["options"] for run, r in run_records(store.runs).items()})
    assert found.by_tier[Tier.JUDGE] == {Origin.HAND_MADE: 1}
    assert found.reused == {Origin.LIVE: 1, Origin.REPLAYED: 2, Origin.HAND_MADE: 1}
    assert found.unmeasured_inference_usd == pytest.approx(0.25)  # the warning survives
    assert found.runs == {"run-2": "judge replay, sandbox replay"}  # the plan's modes
    cost = found.to_dict()["reused_cost"]
    assert cost["list_usd"] == pytest.approx(0.12)
    assert cost["actual_usd"] == pytest.approx(0.253)
    assert (cost["judge_usd"], cost["tokens_in"], cost["tokens_out"]) == (0.25, 600, 40)
    assert sum(t.list_cost_usd for t in trials) == 0  # what the run itself paid


def test_run_modes_read_the_stored_plan_or_the_older_options() -> None:
    planned = {"plan": {"modes": {"sandbox": "live", "judge": "replay", "github": "replay"}}}
    assert run_modes(planned) == {"github": "replay", "judge": "replay", "sandbox": "live"}
    assert run_modes({"mode": "record"}) == {"judge": "record", "sandbox": "record"}
    assert run_modes({"mode": "replay", "sandbox_mode": "live"})["sandbox"] == "live"
    assert run_modes({}) == {}
