"""``migration_evals.bot.grading.grade``: where the trials run decides what progress hears of
them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot import grading
from migration_evals.bot.grading import Grading
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.core.liveness import Holder
from migration_evals.core.model import Changeset, Trial
from migration_evals.core.settings import Executor, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.runner import RunOutcome, RunStatus


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    yield opened
    opened.close()


def test_trials_graded_on_workers_report_progress_without_a_cost(
    tmp_path: Path, specs: SpecSet, store: Store
) -> None:
    def on_workers(
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
    ) -> RunOutcome:
        on_trial()
        on_trial()
        return RunOutcome("r-1", [], RunStatus.COMPLETED)

    settings = Settings(specs_dir=tmp_path, cassette_dir=tmp_path, cache_dir=tmp_path)
    plan = replace(plan_of(settings, specs), executor=Executor.CELERY)
    heard: list[Trial | None] = []
    grading.grade(plan, [], Grading.of(settings, store, specs, on_workers), on_trial=heard.append)
    assert heard == [None, None]  # their trials, and costs, are read back at the end
