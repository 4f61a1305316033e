"""The runner: every trial reaches the ledger once, in few transactions."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

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
