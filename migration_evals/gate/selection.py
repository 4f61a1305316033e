"""Which trials count.

The ledger keeps every trial ever graded; re-grading a changeset appends a new trial. The
numbers count the **latest trial of each (changeset id, recipe, model)**: a re-run after
an infrastructure error, a spec change or a cassette fix supersedes the earlier attempt,
and superseded trials are never mixed into the same number. With a run id, only that
run's trials are considered (and the latest per key within it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from migration_evals.gate.trials import TrialFacts

__all__ = ["RULE", "Selection", "select_trials"]

RULE = "latest trial per (changeset id, recipe, model)"


@dataclass(frozen=True, slots=True)
class Selection:
    """The counted trials (oldest first), the scope they came from, and what was dropped."""

    run_id: str | None
    trials: tuple[TrialFacts, ...]
    in_scope: tuple[TrialFacts, ...]
    superseded: int

    @property
    def rule(self) -> str:
        return RULE if self.run_id is None else f"{RULE}, within run {self.run_id}"

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "run": self.run_id,
            "trials": len(self.trials),
            "superseded": self.superseded,
        }


def select_trials(trials: Iterable[TrialFacts], run_id: str | None = None) -> Selection:
    """The latest trial per key among ``trials`` (in ledger order), optionally one run's."""
    scope = tuple(t for t in trials if run_id is None or t.run_id == run_id)
    latest: dict[tuple[str, str, str], TrialFacts] = {}
    for trial in scope:
        key = (trial.changeset_id, trial.recipe, trial.model)
        current = latest.get(key)
        if current is None or trial.last_seq >= current.last_seq:
            latest[key] = trial
    counted = tuple(sorted(latest.values(), key=lambda t: t.first_seq))
    return Selection(run_id, counted, scope, len(scope) - len(counted))
