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

from bot.cascades import Cascades
from bot.plan import RunPlan
from core.errors import ConfigError
from core.model import Changeset, Trial
from core.settings import Executor, Settings
from core.specs import SpecSet
from core.store import Store
from oracles.cascade import Budget
from oracles.runner import Runner, RunOutcome

__all__ = ["Grading", "RemoteRun", "grade", "run_options"]

log = logging.getLogger(__name__)


def run_options(plan: RunPlan, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a run stores as its options: where its changesets came from, and its plan."""
    return {**(options or {}), "plan": plan.to_dict()}


class RemoteRun(Protocol):
    """Runs a plan's trials on workers elsewhere (``bot.executor.driver.run_on_celery``)."""

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
) -> RunOutcome:
    """Grade ``changesets`` as ``plan`` says; the run is stored with the plan.

    ``on_trial`` hears of each finished trial, with the trial when it was graded here
    (None from workers, whose trials are read back at the end)."""
    stored = run_options(plan, options)
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
        )
    cascade = where.cascades.for_plan(plan)
    runner = Runner(cascade, where.store, jobs=plan.jobs, on_trial=on_trial)
    return runner.run(list(changesets), budget=Budget(plan.budget_usd), options=stored)
