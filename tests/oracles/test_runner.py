"""The runner: every trial reaches the ledger once, in few transactions."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from migration_evals.core.artifacts import ArtifactKind, ArtifactStore
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, TrialRecord, trial_id
from migration_evals.oracles.runner import Runner

STAMPS = Stamps("o" * 64, "r" * 64, "h" * 64)


def _changeset(n: int) -> Changeset:
    return Changeset(
        id=f"c{n}",
        repo="https://example.com/r.git",
        base_commit="b" * 40,
        patch="p",
        recipe="java8-to-17",
        model="gpt-5",
        repo_created_at=date(2020, 1, 1),
    )


class _SteadyCascade:
    """Finishes a trial every few milliseconds, as replayed grading does."""

    tiers = (Tier.APPLY,)
    artifacts = None

    def run_trial(
        self, run_id: str, changeset: Changeset, budget: Budget, **_options: object
    ) -> TrialRecord:
        time.sleep(0.004)
        tid = trial_id(run_id, changeset.id)
        envelope = Envelope(tid, changeset.id, Tier.APPLY, Verdict.PASS, 0.001, 0.0, 0.0, STAMPS)
        return TrialRecord(Trial(tid, run_id, changeset, (envelope,)), {"apply": changeset.id})


class _CountingLedger(Ledger):
    transactions = 0

    def append_trials(self, trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> int:
        self.transactions += 1
        return super().append_trials(trials)


def test_trials_are_written_once_each_in_a_few_transactions(tmp_path: Path) -> None:
    opened = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger = _CountingLedger(opened.db, opened.keys)
    store = replace(opened, ledger=ledger)
    written: list[str] = []
    runner = Runner(
        _SteadyCascade(), store.runs, store.ledger, on_trial=lambda t: written.append(t.id)
    )  # type: ignore[arg-type]
    outcome = runner.run([_changeset(n) for n in range(40)], budget=Budget(None))
    assert len(outcome.trials) == 40
    assert sorted(written) == sorted(t.id for t in outcome.trials)
    check = store.ledger.verify_ledger()
    assert check.ok and check.rows == 40
    # The writer lingers for trials finishing soon after: without it, each of these
    # trials (one every 4 ms, each written in well under 4 ms) would get its own commit.
    assert ledger.transactions <= 10


class _HoldingCascade(_SteadyCascade):
    """Hands back each trial's patch as an artifact still to be kept."""

    def __init__(self, artifacts: ArtifactStore) -> None:
        self.artifacts = artifacts  # type: ignore[assignment]

    def run_trial(
        self, run_id: str, changeset: Changeset, budget: Budget, **options: object
    ) -> TrialRecord:
        assert options["hold_artifacts"] is True
        record = super().run_trial(run_id, changeset, budget)
        held = self.artifacts.prepare(f"patch of {changeset.id}".encode(), ArtifactKind.PATCH)
        return replace(record, artifacts=(held,))


class _CheckingLedger(Ledger):
    """Refuses a trial whose artifact is not kept yet."""

    artifacts: ArtifactStore

    def append_trials(self, trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> int:
        for trial, _keys in trials:
            assert self.artifacts.get(_digest(trial.changeset.id)) is not None
        return super().append_trials(trials)


def _digest(changeset_id: str) -> str:
    return hashlib.sha256(f"patch of {changeset_id}".encode()).hexdigest()


def test_held_artifacts_are_kept_before_the_rows_that_name_them(tmp_path: Path) -> None:
    opened = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger = _CheckingLedger(opened.db, opened.keys)
    ledger.artifacts = opened.artifacts
    store = replace(opened, ledger=ledger)
    runner = Runner(_HoldingCascade(store.artifacts), store.runs, store.ledger)  # type: ignore[arg-type]
    outcome = runner.run([_changeset(n) for n in range(12)], budget=Budget(None))
    assert len(outcome.trials) == 12 and not outcome.internal_errors
    assert store.ledger.verify_ledger().rows == 12
