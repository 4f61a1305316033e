"""``run --resume RUN_ID``: what an interrupted run left undone, and whether it may resume.

A run resumes only as it was planned: with its stored plan (never this process's
settings), under the same specs (otherwise its trials would carry two sets of stamps),
and with exactly the changesets it was started with (``changeset_identity``: the count
and a digest of every changeset's content, patch hash included). Trial ids derive from
the run id and the changeset id, so the trials already in the ledger are found by id and
only the changesets without one are graded; the ledger is only appended to. A Celery
run's jobs were all written when it started and its workers go on grading them, so its
resume watches it to the end again (``migration_evals.bot.grading.resume``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migration_evals.bot.heartbeat import resume_hint
from migration_evals.bot.plan import RunPlan
from migration_evals.core.changesets import changeset_identity
from migration_evals.core.errors import ConfigError
from migration_evals.core.liveness import RunState
from migration_evals.core.model import Changeset, Envelope, Trial
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, trial_id

__all__ = ["Resumption", "plan_resume", "stored_input"]


@dataclass(frozen=True, slots=True)
class Resumption:
    """An interrupted run about to be resumed: its plan, its trials in the ledger, and
    the changesets it has no trial for yet (in input order)."""

    run_id: str
    plan: RunPlan
    earlier: tuple[Trial, ...]
    missing: tuple[Changeset, ...]
    changesets: tuple[Changeset, ...]  # all of the run's, in input order

    def budget(self) -> Budget:
        """The run's budget less what its trials in the ledger already cost."""
        budget = Budget(self.plan.budget_usd)
        budget.spent_usd = sum(trial.cost_usd for trial in self.earlier)
        return budget


def plan_resume(
    store: Store, specs: SpecSet, run_id: str, changesets: Sequence[Changeset]
) -> Resumption:
    """What resuming ``run_id`` with ``changesets`` grades, or a ``ConfigError`` saying
    why it may not resume and what to do instead."""
    options = _interrupted_options(store, run_id)
    plan = RunPlan.from_dict(options["plan"])
    _check_changesets(run_id, options.get("changesets"), changesets)
    for recipe in sorted({changeset.recipe for changeset in changesets}):
        differ = plan.specs_problem(specs, recipe)
        if differ is not None:
            raise ConfigError(
                f"the specs changed since run {run_id} was planned ({differ}): resumed, its "
                "trials would carry two sets of stamps; start a new run instead"
            )
    earlier = _trials_in_ledger(store, run_id, changesets)
    done = {trial.id for trial in earlier}
    missing = tuple(c for c in changesets if trial_id(run_id, c.id) not in done)
    return Resumption(run_id, plan, earlier, missing, tuple(changesets))


def stored_input(db_url: str, run_id: str) -> Path:
    """The changesets file ``run_id`` was started with, as its command line named it."""
    store = Store.open(db_url)
    try:
        row = store.runs.run(run_id)
    finally:
        store.close()
    if row is None:
        raise ConfigError(f"there is no run {run_id} in {store.db.display_url}")
    named = json.loads(row["options"]).get("input")
    path = Path(str(named)) if named else None
    if path is None or not path.is_file():
        raise ConfigError(
            f"run {run_id} was given {named!r}, which is not a file here: name its "
            f"changesets file, `{resume_hint(run_id)} CHANGESETS.jsonl`"
        )
    return path


def _interrupted_options(store: Store, run_id: str) -> dict[str, Any]:
    row = store.runs.run(run_id)
    if row is None:
        raise ConfigError(f"there is no run {run_id} in {store.db.display_url}")
    status = str(row["status"])
    if status == RunState.RUNNING:
        raise ConfigError(
            f"run {run_id} is still running (last heartbeat {row['heartbeat_at']}); it is "
            "marked interrupted once its lease runs out, and can be resumed then"
        )
    if status != RunState.INTERRUPTED:
        raise ConfigError(f"run {run_id} is {status!r}, not interrupted: nothing to resume")
    options: dict[str, Any] = json.loads(row["options"])
    return options


def _check_changesets(run_id: str, recorded: object, given: Sequence[Changeset]) -> None:
    if not isinstance(recorded, dict):
        raise ConfigError(
            f"run {run_id} was started by a release that did not record which changesets "
            "it planned, so a resume cannot be checked against them: start a new run"
        )
    found = changeset_identity(given)
    if found != recorded:
        raise ConfigError(
            f"these {found['count']} changeset(s) are not the {recorded.get('count')} run "
            f"{run_id} was planned with (digest {str(found['digest'])[:12]} vs "
            f"{str(recorded.get('digest'))[:12]}): give `{resume_hint(run_id)}` the same "
            "file, unchanged (patches included)"
        )


def _trials_in_ledger(
    store: Store, run_id: str, changesets: Sequence[Changeset]
) -> tuple[Trial, ...]:
    """The run's trials already in the ledger, in input order."""
    envelopes: dict[str, list[Envelope]] = {}
    for entry in store.ledger.entries(run_id=run_id):
        envelopes.setdefault(entry.trial_id, []).append(entry.envelope)
    return tuple(
        Trial(tid, run_id, changeset, tuple(envelopes[tid]))
        for changeset in changesets
        if (tid := trial_id(run_id, changeset.id)) in envelopes
    )
