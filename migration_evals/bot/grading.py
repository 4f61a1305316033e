"""``grade(plan, changesets)``: the one way changesets are graded, whoever asks.

``run``, ``demo``, retroactive grading in ``mine`` and the App's grade jobs all come
here with a plan; the plan's executor decides where the trials run (this process's
threads, or Celery workers), and the plan is stored with the run as its options. The
Celery side is handed in (``Grading.remote``) by whoever composes it, so that the App,
which grades its jobs where they run, never imports the executor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from migration_evals.bot.cascades import Cascades
from migration_evals.bot.heartbeat import Heartbeat
from migration_evals.bot.plan import RunPlan
from migration_evals.bot.resume import Resumption
from migration_evals.core.changesets import changeset_identity
from migration_evals.core.errors import ConfigError
from migration_evals.core.liveness import Holder
from migration_evals.core.model import Changeset, Trial
from migration_evals.core.settings import Executor, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, Carried
from migration_evals.oracles.runner import Runner, RunOutcome, new_run_id

__all__ = ["Grading", "RemoteRun", "grade", "resume", "run_options"]

log = logging.getLogger(__name__)


def run_options(
    plan: RunPlan,
    options: Mapping[str, Any] | None = None,
    changesets: Sequence[Changeset] = (),
) -> dict[str, Any]:
    """What a run stores as its options: where its changesets came from, which they are
    (``changeset_identity``, what a resumed run is checked against), and its plan."""
    identity = changeset_identity(changesets)
    return {**(options or {}), "changesets": identity, "plan": plan.to_dict()}


class RemoteRun(Protocol):
    """Runs a plan's trials on workers elsewhere
    (``migration_evals.bot.executor.driver.run_on_celery``)."""

    def __call__(
        self,
        plan: RunPlan,
        settings: Settings,
        store: Store,
        specs: SpecSet,
        changesets: Sequence[Changeset],
        *,
        options: Mapping[str, Any],
        on_trial: Callable[[], None],
        on_quiet: Callable[[str], None],
        run_id: str | None = None,
        holder: Holder | None = None,
        resume: bool = False,
    ) -> RunOutcome: ...


@dataclass(frozen=True)
class Grading:
    """Where a process grades: its own settings (folders, engine, credentials, broker),
    the store and the specs, the cascades it has built so far, and how it reaches
    workers (None: it grades every plan here)."""

    settings: Settings
    store: Store
    specs: SpecSet
    cascades: Cascades
    remote: RemoteRun | None = None

    @classmethod
    def of(
        cls, settings: Settings, store: Store, specs: SpecSet, remote: RemoteRun | None = None
    ) -> Grading:
        return cls(settings, store, specs, Cascades(settings, store, specs), remote)


def grade(
    plan: RunPlan,
    changesets: Sequence[Changeset],
    where: Grading,
    *,
    options: Mapping[str, Any] | None = None,
    on_trial: Callable[[Trial | None], None] = lambda _trial: None,
    on_quiet: Callable[[str], None] = log.warning,
    defer: bool = False,
    carried: Carried | None = None,
) -> RunOutcome:
    """Grade ``changesets`` as ``plan`` says; the run is stored with the plan, and its
    heartbeat beats while this process grades it (``migration_evals.bot.heartbeat``).

    ``on_trial`` hears of each finished trial, with the trial when it was graded here
    (None from workers, whose trials are read back at the end).

    ``defer`` and ``carried``: one changeset graded here by a job with attempts left,
    which an unavailable outside API puts back (``TrialDeferredError``) instead of
    waiting in this thread, and what its earlier attempt made (``Runner.run``)."""
    plan = where.cascades.pinned(plan)
    stored = run_options(plan, options, changesets)
    run_id = new_run_id()
    beat_s = where.settings.heartbeat_s
    holder = Holder.this_process(beat_s)
    with Heartbeat(where.store.runs, run_id, beat_s):
        if plan.executor is Executor.CELERY:
            if where.remote is None:
                raise ConfigError("this process cannot reach Celery workers; grade embedded")
            return where.remote(
                plan,
                where.settings,
                where.store,
                where.specs,
                changesets,
                options=stored,
                on_trial=lambda: on_trial(None),
                on_quiet=on_quiet,
                run_id=run_id,
                holder=holder,
            )
        runner = _runner(plan, where, on_trial)
        budget = Budget(plan.budget_usd)
        return runner.run(
            list(changesets),
            budget=budget,
            options=stored,
            run_id=run_id,
            holder=holder,
            defer=defer,
            carried=carried,
        )


def resume(
    resumption: Resumption,
    where: Grading,
    *,
    on_trial: Callable[[Trial | None], None] = lambda _trial: None,
    on_quiet: Callable[[str], None] = log.warning,
) -> RunOutcome:
    """Grade what an interrupted run left undone, with its stored plan, as that run; the
    run is taken over first, so two ``--resume`` of one run cannot both grade it.

    A Celery run's jobs are all in the database from its start, and the workers grade
    them whether or not anyone watches: resuming it is watching it to the end again."""
    run_id, plan = resumption.run_id, resumption.plan
    beat_s = where.settings.heartbeat_s
    holder = Holder.this_process(beat_s)
    remote = where.remote if plan.executor is Executor.CELERY else None
    if plan.executor is Executor.CELERY and remote is None:
        raise ConfigError("this process cannot reach Celery workers to resume the run")
    if not where.store.runs.reopen_run(run_id, holder):
        raise ConfigError(f"run {run_id} is no longer interrupted: another process took it over")
    with Heartbeat(where.store.runs, run_id, beat_s):
        if remote is not None:
            return remote(
                plan,
                where.settings,
                where.store,
                where.specs,
                resumption.changesets,
                options={},
                on_trial=lambda: on_trial(None),
                on_quiet=on_quiet,
                run_id=run_id,
                holder=holder,
                resume=True,
            )
        runner = _runner(plan, where, on_trial)
        return runner.run(
            list(resumption.missing),
            budget=resumption.budget(),
            run_id=run_id,
            earlier=resumption.earlier,
        )


def _runner(plan: RunPlan, where: Grading, on_trial: Callable[[Trial | None], None]) -> Runner:
    cascade = where.cascades.for_plan(plan)
    return Runner(cascade, where.store.runs, where.store.ledger, jobs=plan.jobs, on_trial=on_trial)
