"""Workers grade as the run's plan says, never as their own environment does, and refuse a
plan they cannot honour."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from migration_evals.bot.executor.trials import TrialTask
from migration_evals.bot.plan import plan_of
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.model import Changeset, Tier, Verdict
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.bot.executor.conftest import Cluster

NO_ENGINE = "unix:///nonexistent/docker.sock"


def test_the_trial_job_carries_the_plan_and_the_worker_builds_from_it(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    seen: list[Settings] = []

    def build(settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
        seen.append(settings)
        replaying = dataclasses.replace(settings, sandbox_mode=CassetteMode.REPLAY)
        return build_cascade(replaying, store=store, specs=specs)

    cluster = make_cluster(cascades=build)
    assert cluster.settings.effective_sandbox_mode is CassetteMode.REPLAY  # the worker's own
    plan = dataclasses.replace(
        plan_of(cluster.settings, cluster.specs), sandbox=CassetteMode.LIVE, strict=True
    )
    driver = cluster.driver(plan=plan)
    driver.run(java_calc[:1], options={"input": "test"})
    [job] = cluster.queue.admin.jobs()
    assert TrialTask.of(json.loads(job["payload"])).plan == plan
    assert [(s.effective_sandbox_mode, s.strict_judge) for s in seen] == [(CassetteMode.LIVE, True)]
    [run] = cluster.store.runs.all()
    assert '"sandbox":"live"' in run["options"] and '"strict":true' in run["options"]


def test_a_plan_the_worker_cannot_honour_ends_as_an_error_saying_why(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster(deliver=False)
    cluster.settings = dataclasses.replace(cluster.settings, docker_host=NO_ENGINE)
    cluster.runtime.trials.plans.settings = cluster.settings  # type: ignore[union-attr]
    plan = dataclasses.replace(plan_of(cluster.settings, cluster.specs), sandbox=CassetteMode.LIVE)
    driver = cluster.driver(plan=plan)
    driver.start("r-live", java_calc[:1], {})
    [(job_id, _kind)] = cluster.dispatcher.published
    # Attempts left: put back for a worker that can, never graded some other way.
    assert "failed" in cluster.runtime.run_job(job_id)
    [row] = cluster.queue.admin.jobs()
    assert row["state"] == "queued" and "cannot honour the run plan" in row["last_error"]
    assert list(cluster.store.ledger.entries()) == []
    cluster.clock.advance(600)
    assert "error: trial" in cluster.runtime.run_job(job_id)  # the last attempt
    outcome = driver.finish("r-live", java_calc[:1])
    [trial] = outcome.trials
    first = trial.envelopes[0]
    assert trial.verdict is Verdict.ERROR and first.tier is Tier.APPLY
    assert "cannot honour the run plan" in first.reason and "no Docker engine" in first.reason
    assert "sandbox is live" in first.reason
    assert outcome.internal_errors == []  # an infrastructure error, not a crash
    assert first.stamps == plan.stamps_for(java_calc[0].recipe)
