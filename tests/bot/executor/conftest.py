"""A worker and a run over the bundled java-calc examples, all in this process on SQLite.

The broker is ``FakeDispatcher``; the worker is a real ``WorkerRuntime`` whose job queue
runs on a clock the test moves, so leases can run out without waiting for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from migration_evals.bot.cascades import CascadeBuilder
from migration_evals.bot.executor.driver import CeleryRun
from migration_evals.bot.executor.runtime import WorkerRuntime
from migration_evals.bot.executor.trials import TRIAL, TrialGrader
from migration_evals.bot.jobs.queue import JobQueue, QueueOptions, build_queue
from migration_evals.core.changesets import read_changesets
from migration_evals.core.model import Changeset
from migration_evals.core.settings import ScaleSettings, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.conftest import ROOT, SPECS_DIR
from tests.fakes import FakeDispatcher, all_kinds

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"


class Clock:
    """Real time plus however far a test moved it on (the driver writes on real time)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture(scope="session")
def java_calc() -> list[Changeset]:
    return [c.changeset for c in read_changesets(JAVA) if c.changeset.id.startswith("java-calc/")]


@pytest.fixture(scope="session")
def clone_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("clones")


@pytest.fixture
def settings(tmp_path: Path, clone_cache: Path) -> Settings:
    return Settings(
        specs_dir=SPECS_DIR,
        cassette_dir=ROOT / "cassettes",
        cache_dir=clone_cache,
        db_url=f"sqlite:///{tmp_path / 'scale.db'}",
        scale=ScaleSettings(lease_s=30.0, redispatch_s=60.0, max_attempts=2),
    )


@dataclass
class Cluster:
    """One store, one worker runtime, one run driver and the broker between them."""

    settings: Settings
    store: Store
    clock: Clock
    runtime: WorkerRuntime
    dispatcher: FakeDispatcher
    specs: SpecSet

    @property
    def queue(self) -> JobQueue:
        return self.runtime.queue

    def driver(self, **options: object) -> CeleryRun:
        return CeleryRun(
            self.settings,
            self.store,
            self.specs,
            self.dispatcher,
            poll_s=0.0,
            **options,  # type: ignore[arg-type]
        )


@pytest.fixture
def make_cluster(settings: Settings, specs: SpecSet) -> Iterator[Callable[..., Cluster]]:
    made: list[Cluster] = []

    def build(*, cascades: CascadeBuilder | None = None, deliver: bool = True) -> Cluster:
        store = Store.open(settings.db_url)
        clock = Clock()
        options = QueueOptions(lease_s=settings.scale.lease_s)
        queue = build_queue(store, all_kinds(), options, clock=clock)
        grader = TrialGrader(settings, store, queue.leasing, specs, build=cascades)
        runtime = WorkerRuntime(store, queue, {TRIAL: grader}, "w1", trials=grader)
        dispatcher = FakeDispatcher(deliver=runtime.run_job if deliver else None)
        cluster = Cluster(settings, store, clock, runtime, dispatcher, specs)
        made.append(cluster)
        return cluster

    yield build
    for cluster in made:
        cluster.store.close()
