"""Shared gold anchors: exported with the envelopes behind every verdict, recomputed on
import, refused when edited, forged or graded under other specs, and named by the gate."""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from migration_evals.core.checkpoints import CheckpointSigner
from migration_evals.core.errors import ConfigError
from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold
from migration_evals.core.model import Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.anchor import anchor_status
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.refusals import RefusalCode
from migration_evals.gate.shared_anchor import (
    ANCHOR_FORMAT,
    build_anchor,
    check_anchor,
    imported_rows,
)
from tests.conftest import write_checkpoint_key
from tests.gate.ledgers import Plan, append

NOW = "2026-05-01T00:00:00+00:00"


def graded_gold(store: Store, specs: SpecSet, agree: int = 16, disagree: int = 2) -> None:
    """Trials in the ledger and gold labels on them: ``agree`` pass/accepted and
    fail/rejected pairs each, ``disagree`` passes that were rejected."""
    plans = [Plan(f"gold/{n:03d}", outcome="pass") for n in range(agree + disagree)]
    plans += [Plan(f"gold/{n:03d}", outcome="fail@compile") for n in range(100, 100 + agree)]
    for number, trial in enumerate(append(store, specs, plans), start=1):
        accepted = trial.verdict is Verdict.PASS and number <= agree
        upsert_gold(
            store.ledger,
            GoldRow(
                repo="example/gold",
                pr_number=number,
                label=GoldLabel.ACCEPTED if accepted else GoldLabel.REJECTED,
                computed_at=datetime(2026, 1, 1, tzinfo=UTC),
                changeset_id=trial.changeset.id,
                model=trial.changeset.model,
                funnel_verdict=trial.verdict,
                trial_id=trial.id,
            ),
        )


@pytest.fixture
def signer(tmp_path: Path) -> CheckpointSigner:
    return CheckpointSigner.from_pem(write_checkpoint_key(tmp_path / "key.pem"))


@pytest.fixture
def anchor(store: Store, gate_specs: SpecSet, signer: CheckpointSigner) -> dict[str, Any]:
    graded_gold(store, gate_specs)
    return build_anchor(store.db, store.trials, gate_specs, NOW, signer)


def test_an_exported_anchor_carries_labels_envelopes_stamps_and_its_statistic(
    anchor: dict[str, Any], gate_specs: SpecSet, signer: CheckpointSigner
) -> None:
    assert anchor["format"] == ANCHOR_FORMAT and len(anchor["labels"]) == 34
    assert anchor["stamps"] == {
        "oracle": gate_specs.oracle_stamp,
        "recipes": {"java8-to-17": gate_specs.recipe("java8-to-17").stamp},
    }
    trial = anchor["trials"][anchor["labels"][0]["trial_id"]]
    assert [e["tier"] for e in trial["envelopes"]] == ["apply", "compile", "tests", "judge"]
    assert anchor["anchor"]["n"] == 34 and anchor["anchor"]["state"] == "ok"
    assert anchor["anchor"]["table"]["passed_rejected"] == 2
    found = check_anchor(anchor, gate_specs, verifier=signer.verifier())
    assert (found.problems, found.stale, found.importable) == ((), "", True)


def test_imported_labels_count_and_the_gate_names_where_they_came_from(
    anchor: dict[str, Any], gate_specs: SpecSet, tmp_path: Path, store: Store
) -> None:
    other = Store.open(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        for row in imported_rows(anchor, "team-anchor.json"):
            upsert_gold(other.ledger, row)
        status = anchor_status(other.db, gate_specs)
        assert (status.phi, status.n) == (anchor_status(store.db, gate_specs).phi, 34)
        (source,) = status.sources
        assert (source.origin, source.rows, source.stale) == ("team-anchor.json", 34, "")
        digest = anchor["anchor_digest"][:16]
        assert source.summary.startswith(
            f"34 label(s) imported from team-anchor.json (anchor {digest}"
        )
        assert source.summary.endswith(f"exported {NOW}, signed by key {source.signer})")
        assert status.to_dict()["sources"][0]["digest"] == anchor["anchor_digest"]
    finally:
        other.close()


def test_an_edited_label_does_not_verify(anchor: dict[str, Any], gate_specs: SpecSet) -> None:
    edited = deepcopy(anchor)
    edited["labels"][-1]["label"] = "accepted"  # a rejected failure, now accepted
    found = check_anchor(edited, gate_specs)
    assert not found.verifies and not found.importable
    assert "anchor_digest: the document was changed after it was exported" in found.problems
    assert any(
        p.startswith("anchor.table.failed_accepted: the anchor says 0") for p in found.problems
    )


def test_a_verdict_its_envelopes_do_not_give_does_not_verify(
    anchor: dict[str, Any], gate_specs: SpecSet
) -> None:
    edited = deepcopy(anchor)
    label = edited["labels"][-1]
    label["funnel_verdict"] = "pass"
    found = check_anchor(edited, gate_specs)
    where = f"labels.example/gold#{label['pr_number']}"
    assert f"{where}: the label says pass, its trial's envelopes fail" in found.problems


def test_a_re_digested_forgery_is_caught_by_the_signature(
    anchor: dict[str, Any], gate_specs: SpecSet, signer: CheckpointSigner, tmp_path: Path
) -> None:
    other = CheckpointSigner.from_pem(write_checkpoint_key(tmp_path / "other.pem"))
    forged = build_anchor_like(anchor, other)
    assert check_anchor(forged, gate_specs).verifies  # consistent, signed by someone
    found = check_anchor(forged, gate_specs, verifier=signer.verifier())
    assert any("signature: signed by key" in p for p in found.problems)
    unsigned = {**anchor, "signature": None}
    found = check_anchor(unsigned, gate_specs, verifier=signer.verifier())
    assert "signature: the anchor is unsigned, but a public key was given" in found.problems
    assert check_anchor(unsigned, gate_specs).notes == (
        "unsigned: the anchor carries no signature",
    )


def build_anchor_like(anchor: dict[str, Any], signer: CheckpointSigner) -> dict[str, Any]:
    """The same anchor signed with another key (what a forger holding its own key makes)."""
    key, signature = signer.sign_document(ANCHOR_FORMAT, anchor["anchor_digest"])
    return {**anchor, "signature": {"signer": key, "signature": signature}}


def test_an_anchor_graded_under_other_specs_is_stale(
    anchor: dict[str, Any], no_judge_specs: SpecSet
) -> None:
    found = check_anchor(anchor, no_judge_specs)
    assert found.verifies and not found.importable
    assert found.stale == "the oracle spec"


def test_once_the_specs_move_on_the_gate_leaves_an_imported_anchor_out_and_says_why(
    anchor: dict[str, Any], gate_specs: SpecSet, no_judge_specs: SpecSet, tmp_path: Path
) -> None:
    other = Store.open(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        for row in imported_rows(anchor, "team-anchor.json"):
            upsert_gold(other.ledger, row)
        status = anchor_status(other.db, no_judge_specs)
        assert status.n == 0 and status.sources[0].stale == "the oracle spec"
        refusals = check(evaluate(other, no_judge_specs)).refusals
        stale = [r.detail for r in refusals if r.code is RefusalCode.STALE_STAMP]
        assert stale == [
            "the oracle spec changed since the gold anchor imported from team-anchor.json was "
            "graded; its 34 label(s) are left out of the anchor"
        ]
    finally:
        other.close()


def test_export_refuses_a_verdict_without_its_trial(store: Store, gate_specs: SpecSet) -> None:
    upsert_gold(
        store.ledger,
        GoldRow(
            repo="example/gold",
            pr_number=7,
            label=GoldLabel.ACCEPTED,
            computed_at=datetime(2026, 1, 1, tzinfo=UTC),
            funnel_verdict=Verdict.PASS,
            trial_id="t-nowhere",
        ),
    )
    with pytest.raises(ConfigError, match=r"example/gold#7 \(trial t-nowhere\)"):
        build_anchor(store.db, store.trials, gate_specs, NOW)
