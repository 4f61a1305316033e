"""Publication bundles verify, and a bundle with one number changed fails naming it."""

from __future__ import annotations

import copy
import json
import sqlite3
from dataclasses import replace
from typing import Any

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.bundle import BUNDLE_FORMAT, build_bundle, differences, verify_bundle
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from tests.gate.ledgers import Plan, append


@pytest.fixture
def bundle(clean_store: Store, gate_specs: SpecSet) -> dict[str, Any]:
    evaluation = evaluate(clean_store, gate_specs)
    decision = check(evaluation)
    assert decision.publishable
    document = build_bundle(evaluation, decision, "2026-11-29T12:00:00+00:00")
    return json.loads(json.dumps(document))  # as it comes back from the file


def test_a_bundle_holds_what_was_promised(bundle: dict[str, Any], gate_specs: SpecSet) -> None:
    assert bundle["format"] == BUNDLE_FORMAT
    assert bundle["stamps"] == gate_specs.stamp_report()
    assert bundle["gate"]["publishable"] is True
    numbers = bundle["numbers"]
    gpt = numbers["pass_rates"]["gpt-5"]
    assert (gpt["passed"], gpt["graded"], gpt["rate"]) == (20, 40, 0.5)
    assert gpt["wilson_95"][0] < 0.5 < gpt["wilson_95"][1]
    assert len(gpt["trials_digest"]) == 64
    assert [row["tier"] for row in numbers["funnel"]] == ["apply", "compile", "tests", "judge"]
    assert numbers["cost"]["list_usd"] > numbers["cost"]["actual_usd"] > 0
    assert set(numbers["hypotheses"]) == set(gate_specs.hypotheses)
    assert len(bundle["trials"]) == 120 and all(len(t["digest"]) == 64 for t in bundle["trials"])
    assert len(bundle["ledger"]["head_hash"]) == 64


def test_a_bundle_verifies_offline_and_against_the_ledger(
    bundle: dict[str, Any], gate_specs: SpecSet, clean_store: Store
) -> None:
    assert verify_bundle(bundle, gate_specs).differences == ()
    checked = verify_bundle(bundle, gate_specs, store=clean_store)
    assert checked.ok, checked.differences


def test_results_appended_after_publishing_do_not_disturb_it(
    bundle: dict[str, Any], gate_specs: SpecSet, clean_store: Store
) -> None:
    append(clean_store, gate_specs, [Plan("newer", run_id="run-2")])
    assert verify_bundle(bundle, gate_specs, store=clean_store).ok


def test_one_changed_number_is_named(bundle: dict[str, Any], gate_specs: SpecSet) -> None:
    changed = copy.deepcopy(bundle)
    changed["numbers"]["pass_rates"]["gpt-5"]["passed"] = 21
    found = verify_bundle(changed, gate_specs).differences
    assert found == (
        "numbers.pass_rates.gpt-5.passed: the bundle says 21, recomputed 20",
        "bundle_digest: the document was changed after it was published",
    )


def test_a_changed_rate_is_named_even_with_a_fresh_digest(
    bundle: dict[str, Any], gate_specs: SpecSet, clean_store: Store
) -> None:
    changed = copy.deepcopy(bundle)
    changed["numbers"]["hypotheses"]["h2-go-rewrites-easier"]["b"]["rate"] = 0.9
    changed["bundle_digest"] = verify_bundle.__globals__["_digest"](changed)
    for store in (None, clean_store):
        found = verify_bundle(changed, gate_specs, store=store).differences
        assert found == (
            "numbers.hypotheses.h2-go-rewrites-easier.b.rate: the bundle says 0.9, recomputed 0.5",
        )


def test_a_changed_trial_is_caught_by_the_ledger(
    bundle: dict[str, Any], gate_specs: SpecSet, clean_store: Store
) -> None:
    changed = copy.deepcopy(bundle)
    trial = changed["trials"][3]
    trial["digest"] = "f" * 64
    found = verify_bundle(changed, gate_specs, store=clean_store).differences
    named = f'trials.{trial["trial_id"]}.digest: the bundle says "{"f" * 64}", recomputed'
    assert any(line.startswith(named) for line in found)
    # offline, the changed digest shows in the digests of every number it is behind
    assert "numbers.pass_rates.claude-sonnet-4-5.trials_digest" in " ".join(
        verify_bundle(changed, gate_specs).differences
    )


def test_an_edited_ledger_is_named(
    bundle: dict[str, Any], gate_specs: SpecSet, clean_store: Store
) -> None:
    path = clean_store.db.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE ledger SET verdict = 'fail' WHERE seq = 3")
    found = verify_bundle(bundle, gate_specs, store=clean_store).differences
    assert "ledger: row 3: content does not match its hash (edited)" in found


def test_stamps_are_checked_against_the_specs(bundle: dict[str, Any], specs: SpecSet) -> None:
    moved = replace(specs, oracle_stamp="9" * 64)
    found = verify_bundle(bundle, moved).differences
    assert found[0] == (
        f'stamps.oracle: the bundle says "{specs.oracle_stamp}", recomputed "{"9" * 64}"'
    )


def test_a_wrong_format_is_refused(gate_specs: SpecSet) -> None:
    assert verify_bundle({"format": "other"}, gate_specs).differences == (
        "format: expected migration-evals-bundle/1, got 'other'",
    )


def test_differences_name_paths() -> None:
    expected = {"a": {"b": [1, 2.0, {"c": "x"}]}, "trials": [{"trial_id": "t1", "v": 1}]}
    actual = {"a": {"b": [1, 2.0000000000001, {"c": "y"}]}, "trials": [{"trial_id": "t1", "v": 2}]}
    assert list(differences(expected, actual)) == [
        'a.b[2].c: the bundle says "y", recomputed "x"',
        "trials.t1.v: the bundle says 2, recomputed 1",
    ]
    assert list(differences({"x": True}, {"x": 1})) == ["x: the bundle says 1, recomputed true"]
