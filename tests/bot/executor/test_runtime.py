"""A worker process's runtime: leases by id, late writers discarded, specs checked, reaping."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from migration_evals.bot.executor.runtime import Housekeeper, reapers_of
from migration_evals.bot.executor.trials import TRIAL, TrialTask, trial_job
from migration_evals.bot.jobs.queue import JobState
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.model import Changeset, Tier
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.bot.executor.conftest import Cluster
from tests.fakes import FakeDispatcher, FakeSandbox


def _one_job(cluster: Cluster, changeset: Changeset, plan: RunPlan | None = None) -> int:
    task = TrialTask("r-1", changeset, plan or plan_of(cluster.settings, cluster.specs))
    with cluster.store.db.engine.begin() as conn:
        [job_id] = cluster.queue.intake.insert_many(conn, [trial_job(task)])
    return job_id


def test_a_worker_presumed_dead_writes_nothing_when_it_wakes(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    job_id = _one_job(cluster, java_calc[0])
    slow = cluster.queue.leasing.lease_by_id(job_id, "slow-worker")
    assert slow is not None
    cluster.clock.advance(31)  # its lease runs out: presumed dead
    assert "pass: trial" in cluster.runtime.run_job(job_id)  # another worker grades it
    grader = cluster.runtime.handlers[TRIAL]
    assert grader(slow, "slow-worker").startswith("discarded")  # the first one wakes up
    entries = list(cluster.store.ledger.entries())
    assert len(entries) == len(Tier) and cluster.store.ledger.verify_ledger().ok
    [row] = cluster.queue.admin.jobs()
    assert row["state"] == JobState.DONE and row["attempts"] == 2
    assert row["leased_by"].startswith("w1:")


def test_a_repeated_delivery_after_the_work_is_done_does_nothing(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    job_id = _one_job(cluster, java_calc[0])
    cluster.runtime.run_job(job_id)
    assert "nothing to do" in cluster.runtime.run_job(job_id)
    assert len(list(cluster.store.ledger.entries())) == len(Tier)


def test_a_worker_with_other_specs_refuses_the_trial(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    plan = dataclasses.replace(plan_of(cluster.settings, cluster.specs), oracle_stamp="0" * 64)
    job_id = _one_job(cluster, java_calc[0], plan)
    assert "failed" in cluster.runtime.run_job(job_id)
    [row] = cluster.queue.admin.jobs()
    assert row["state"] == JobState.QUEUED and "specs differ" in row["last_error"]
    assert list(cluster.store.ledger.entries()) == []


class ReapingSandbox(FakeSandbox):
    reaped = 0

    def reap(self) -> int:
        self.reaped += 1
        return 0


def test_sandboxes_that_can_reap_are_reaped_by_the_housekeeper(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    sandbox = ReapingSandbox()

    def cascades(settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
        built = build_cascade(settings, store=store, specs=specs)
        return dataclasses.replace(built, sandbox=sandbox)

    cluster = make_cluster(cascades=cascades)
    assert cluster.runtime.reapers() == []  # no cascade built yet
    cluster.runtime.run_job(_one_job(cluster, java_calc[1]))  # fails at apply: no sandbox run
    assert reapers_of(cluster.runtime.trials.cascades()) == [sandbox]  # type: ignore[union-attr]
    now = [0.0]
    keeper = Housekeeper(
        cluster.queue,
        FakeDispatcher(),
        holder="w1",
        redispatch_s=60.0,
        reapers=cluster.runtime.reapers,
        reap_every_s=30.0,
        clock=lambda: now[0],
    )
    keeper.tick()
    keeper.tick()
    now[0] += 31
    keeper.tick()
    assert sandbox.reaped == 2
