"""Two worker processes on a real PostgreSQL and a real Redis, on loopback.

A run of 200 trials (tier 1 real, tiers 2-4 replayed) completes exactly once; so does
one whose worker is killed mid-trial, one whose every job the broker delivers twice, and
one whose Redis is killed and restarted, forgetting every message, mid-run.
"""

from __future__ import annotations

import signal
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.dispatch import CeleryDispatcher, make_celery
from migration_evals.bot.jobs.queue import JobState
from migration_evals.core.model import Tier
from migration_evals.core.settings import ScaleSettings
from migration_evals.core.specs import SpecSet
from tests.bot.executor.processes import Cluster, Workload, build_workload
from tests.conftest import RedisServer, require_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

TRIALS = 200


@pytest.fixture(scope="session")
def workload(tmp_path_factory: pytest.TempPathFactory, specs: SpecSet) -> Workload:
    require_postgres()  # before ten seconds of building what a skipped test would not use
    return build_workload(tmp_path_factory.mktemp("workload"), specs, repos=100, models=2)


@pytest.fixture
def make_cluster(tmp_path: Path, workload: Workload, postgres_url: str) -> Iterator[Any]:
    made: list[Cluster] = []

    def build(broker_url: str) -> Cluster:
        cluster = Cluster(tmp_path, workload, postgres_url, broker_url)
        made.append(cluster)
        return cluster

    yield build
    for cluster in made:
        cluster.stop_all()


def _exactly_once(cluster: Cluster, document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every changeset graded, each trial written once with one envelope per tier; returns
    the run's job rows."""
    expected = {c.id for c in cluster.workload.changesets}
    ids = [t["id"] for t in document["trials"]]
    assert len(ids) == TRIALS and set(ids) == expected
    assert document["status"] == "completed" and document["fabricated_count"] == 0
    with cluster.store() as (store, queue):
        [run] = store.runs.all()
        assert run["status"] == "completed"
        entries = list(store.ledger.entries(run_id=run["run_id"]))
        per_trial = Counter(entry.trial_id for entry in entries)
        assert len(per_trial) == TRIALS and set(per_trial.values()) == {len(Tier)}
        assert len(store.ledger.trials_written(run["run_id"])) == TRIALS
        check = store.ledger.verify_ledger()
        assert check.ok and check.rows == TRIALS * len(Tier), check.problems
        jobs = queue.admin.jobs()
    assert len(jobs) == TRIALS and {j["state"] for j in jobs} == {JobState.DONE}
    return jobs


def _holders(jobs: list[dict[str, Any]]) -> set[str]:
    return {str(j["leased_by"]).rsplit(":", 1)[0] for j in jobs}


def test_two_workers_grade_200_trials_exactly_once(make_cluster: Any, redis_url: str) -> None:
    cluster = make_cluster(redis_url)
    cluster.start_worker("a")
    cluster.start_worker("b")
    document = cluster.finish_run(cluster.start_run())
    jobs = _exactly_once(cluster, document)
    assert len(_holders(jobs)) == 2, "both workers took jobs"
    assert {j["attempts"] for j in jobs} == {1}


def _running_job_of(cluster: Cluster, pid: int) -> dict[str, Any] | None:
    prefix = f"{socket.gethostname()}:{pid}:"
    with cluster.store() as (_store, queue):
        return next(
            (
                j
                for j in queue.admin.jobs()
                if j["state"] == JobState.RUNNING and str(j["leased_by"]).startswith(prefix)
            ),
            None,
        )


def test_a_worker_killed_mid_trial_loses_nothing(make_cluster: Any, redis_url: str) -> None:
    cluster = make_cluster(redis_url)
    victim = cluster.start_worker("victim")
    cluster.start_worker("survivor")
    run = cluster.start_run()
    cluster.wait_for("the first trials", lambda: cluster.written() >= 20, 120)
    held = None
    for _ in range(100):  # freeze it; if it holds a trial, that is mid-trial: kill it
        victim.send_signal(signal.SIGSTOP)
        time.sleep(0.2)  # let its last committed statement be visible
        held = _running_job_of(cluster, victim.pid)
        if held is not None:
            break
        victim.send_signal(signal.SIGCONT)
        time.sleep(0.1)
    assert held is not None, "the victim never held a trial"
    cluster.kill("victim")
    jobs = _exactly_once(cluster, cluster.finish_run(run))
    [again] = [j for j in jobs if j["id"] == held["id"]]
    assert again["attempts"] == 2  # run again after its lease ran out
    assert not str(again["leased_by"]).startswith(f"{socket.gethostname()}:{victim.pid}:")


def test_every_job_delivered_twice_runs_once(make_cluster: Any, redis_url: str) -> None:
    cluster = make_cluster(redis_url)
    cluster.start_worker("a")
    cluster.start_worker("b")
    run = cluster.start_run()
    cluster.wait_for("the first trials", lambda: cluster.written() >= 10, 120)
    with cluster.store() as (_store, queue):
        ids = [(int(j["id"]), TRIAL) for j in queue.admin.jobs()]
    scale = ScaleSettings(broker_url=redis_url, queue=cluster.queue)
    dispatcher = CeleryDispatcher(make_celery(scale), scale)
    dispatcher.publish(ids)  # the broker delivers every message a second time
    dispatcher.close()
    jobs = _exactly_once(cluster, cluster.finish_run(run))
    assert {j["attempts"] for j in jobs} == {1}  # a second delivery never ran a job again


def test_a_redis_restart_mid_run_is_survived(make_cluster: Any, redis_server: RedisServer) -> None:
    cluster = make_cluster(redis_server.url)
    cluster.start_worker("a")
    cluster.start_worker("b")
    run = cluster.start_run()
    cluster.wait_for("the first trials", lambda: cluster.written() >= 30, 120)
    redis_server.kill()  # every queued message is gone with it (no persistence)
    time.sleep(1.5)
    redis_server.start()
    _exactly_once(cluster, cluster.finish_run(run))
