"""``run --executor celery`` in one process: the same results as the embedded runner,
exactly once however often the broker delivers, and nothing lost when workers die."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from migration_evals.bot.executor.driver import CeleryRun
from migration_evals.bot.executor.runtime import Housekeeper
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.queue import JobState
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.errors import BrokerError
from migration_evals.core.model import Changeset, Tier, Verdict
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Cascade
from migration_evals.oracles.runner import RunStatus
from tests.bot.executor.conftest import Cluster
from tests.conftest import ROOT
from tests.fakes import FakeDispatcher

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())


def test_every_changeset_is_graded_once_though_each_is_delivered_twice(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    cluster.dispatcher.copies = 2  # at least once: every message arrives twice
    ticks: list[None] = []
    outcome = cluster.driver().run(java_calc, options={}, on_trial=lambda: ticks.append(None))
    assert outcome.status is RunStatus.COMPLETED and len(ticks) == len(java_calc)
    assert [t.changeset.id for t in outcome.trials] == [c.id for c in java_calc]
    # The verdicts the embedded runner gives the same examples (the demo's expectations).
    assert {t.changeset.id: t.verdict.value for t in outcome.trials} == {
        c.id: EXPECTED[c.id]["verdict"] for c in java_calc
    }
    entries = list(cluster.store.ledger.entries(run_id=outcome.run_id))
    assert len(entries) == len(java_calc) * len(Tier)  # one set of envelopes per trial
    assert cluster.store.ledger.verify_ledger().ok
    jobs = cluster.queue.admin.jobs()
    assert {j["state"] for j in jobs} == {JobState.DONE} and {j["attempts"] for j in jobs} == {1}
    [run] = cluster.store.runs.all()
    assert run["status"] == RunStatus.COMPLETED and '"executor":"celery"' in run["options"]


def test_an_announcement_lost_at_the_start_is_made_again(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    cluster.dispatcher.fail = BrokerError("the broker is down")
    driver = cluster.driver()
    driver.start("r-lost", java_calc[:3], {})
    assert len(cluster.queue.admin.jobs()) == 3 and cluster.dispatcher.published == []
    cluster.dispatcher.fail = None  # the broker is back
    keeper = Housekeeper(cluster.queue, cluster.dispatcher, holder="w1", redispatch_s=60.0)
    assert keeper.tick() == 0  # just announced (or so the database believes)
    cluster.clock.advance(61)
    cluster.dispatcher.waiting = 3
    assert keeper.tick() == 0  # the broker still holds announcements: they are on their way
    cluster.dispatcher.waiting = 0
    assert keeper.tick() == 3
    outcome = driver.finish("r-lost", java_calc[:3])
    assert len(outcome.trials) == 3 and outcome.status is RunStatus.COMPLETED


def test_a_trial_whose_workers_keep_dying_is_an_internal_error(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster(deliver=False)
    driver = cluster.driver()
    driver.start("r-dying", java_calc[:2], {})
    ids = [job_id for job_id, _ in cluster.dispatcher.published]
    cluster.runtime.run_job(ids[0])  # graded normally
    for _attempt in range(2):  # the second one kills its worker every time
        assert cluster.queue.leasing.lease_by_id(ids[1], "doomed") is not None
        cluster.clock.advance(31)
    cluster.runtime.run_job(ids[1])  # out of attempts: given up
    failed = driver.wait("r-dying", java_calc[:2], lambda: None)
    assert list(failed) == ["trial:r-dying:java-calc/no-apply"]
    driver._record_given_up("r-dying", java_calc[:2], failed)
    outcome = driver.finish("r-dying", java_calc[:2])
    assert outcome.status is RunStatus.INTERNAL_ERRORS
    assert outcome.trials[1].verdict is Verdict.ERROR
    assert "gave up after 2 attempt(s)" in outcome.internal_errors[0]


def test_a_quiet_run_says_what_to_check(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster(deliver=False)
    said: list[str] = []
    now = [0.0]

    def later(_seconds: float) -> None:  # time passes; after a while a worker shows up
        now[0] += 20
        if now[0] > 40:
            for job_id, _ in cluster.dispatcher.published:
                cluster.runtime.run_job(job_id)

    driver = cluster.driver(quiet_s=30.0, on_quiet=said.append, clock=lambda: now[0], sleep=later)
    outcome = driver.run(java_calc[:1], options={})
    assert len(outcome.trials) == 1
    assert len(said) == 1 and "is a worker (`migration-evals worker`) running" in said[0]


def test_a_crash_while_grading_is_recorded_not_lost(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset], specs: object
) -> None:
    class Exploding:
        def __init__(self, real: Cascade) -> None:
            self.real = real
            self.specs = real.specs
            self.oracles = real.oracles

        def run_trial(self, *_args: object, **_options: object) -> None:
            raise RuntimeError("boom")

    def cascades(settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
        built = build_cascade(settings, store=store, specs=specs)
        return dataclasses.replace(built, cascade=Exploding(built.cascade))  # type: ignore[arg-type]

    cluster = make_cluster(cascades=cascades)
    outcome = cluster.driver().run(java_calc[:1], options={})
    assert outcome.status is RunStatus.INTERNAL_ERRORS
    assert outcome.internal_errors == ["java-calc/good: RuntimeError: boom"]
    assert [j["state"] for j in cluster.queue.admin.jobs()] == [JobState.DONE]


def test_a_crash_in_the_plan_check_ends_the_trial_as_an_internal_error(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    # A bug in the worker's refusal check (here: building the plan's cascade) failed the
    # job, to be tried again later with the same bug, and the run waited on it.
    def cascades(*_args: object) -> Cascade:
        raise RuntimeError("boom")

    cluster = make_cluster(cascades=cascades, deliver=False)
    driver = cluster.driver()
    driver.start("r-check", java_calc[:1], {})
    [(job_id, _kind)] = cluster.dispatcher.published
    cluster.runtime.run_job(job_id)
    [job] = cluster.queue.admin.jobs()
    assert job["state"] == JobState.DONE and job["attempts"] == 1
    outcome = driver.finish("r-check", java_calc[:1])
    assert outcome.status is RunStatus.INTERNAL_ERRORS
    [trial] = outcome.trials
    assert [e.verdict for e in trial.envelopes][:2] == [Verdict.ERROR, Verdict.SKIPPED]
    assert "internal error checking the run plan: RuntimeError: boom" in outcome.internal_errors[0]
    assert cluster.store.ledger.verify_ledger().ok


def test_announcements_go_to_the_trial_queue(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    cluster.driver().run(java_calc[:2], options={})
    assert [kind for _, kind in cluster.dispatcher.published] == [TRIAL] * 2


@pytest.mark.parametrize("copies", [1, 3])
def test_the_housekeeper_announces_only_while_it_holds_the_lease(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset], copies: int
) -> None:
    cluster = make_cluster(deliver=False)
    cluster.driver().start("r-keepers", java_calc[:2], {})
    keepers = [
        Housekeeper(cluster.queue, FakeDispatcher(), holder=f"w{n}", redispatch_s=1.0)
        for n in range(copies)
    ]
    cluster.clock.advance(2)
    assert sum(k.tick() for k in keepers) == 2  # one of them, once


def test_a_budget_is_shared_by_the_workers_and_stops_the_run(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster()
    settings = cluster.settings.with_overrides(budget_usd=0.05)  # apply, compile, tests
    run = CeleryRun(settings, cluster.store, cluster.specs, cluster.dispatcher, poll_s=0.0)
    outcome = run.run(java_calc[:3], options={})
    assert outcome.status is RunStatus.STOPPED_BUDGET
    [trial] = outcome.trials  # the first passes three tiers; the judge would overspend
    assert [e.verdict for e in trial.envelopes][-1] is Verdict.INCONCLUSIVE
    assert outcome.not_started == 2  # the others never started, as embedded
    results = [j["result"] for j in cluster.queue.admin.jobs()]
    assert sum(r.startswith("not started") for r in results) == 2


def test_the_run_waits_out_a_database_that_stops_answering(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster(deliver=False)
    said: list[str] = []
    polls = [0]
    real = cluster.store.db.engine

    def later(_seconds: float) -> None:
        polls[0] += 1
        if polls[0] == 1:
            cluster.store.db.engine = sa.create_engine("sqlite:////nonexistent/away.db")
        if polls[0] == 3:  # the server is back; the worker ran the job meanwhile
            cluster.store.db.engine = real
            for job_id, _ in cluster.dispatcher.published:
                cluster.runtime.run_job(job_id)

    driver = cluster.driver(on_quiet=said.append, sleep=later)
    outcome = driver.run(java_calc[:1], options={})
    assert len(outcome.trials) == 1
    assert len(said) == 1 and said[0].startswith("the database did not answer; still waiting")


def test_a_run_whose_watcher_died_is_watched_to_the_end_on_resume(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    cluster = make_cluster(deliver=False)
    first = cluster.driver()
    first.start("r-watched", java_calc[:3], {})  # then the watching command is killed
    for job_id, _kind in cluster.dispatcher.published:
        cluster.runtime.run_job(job_id)  # the workers grade on, unwatched
    outcome = cluster.driver().run(java_calc[:3], options={}, run_id="r-watched", resume=True)
    assert outcome.status is RunStatus.COMPLETED and len(outcome.trials) == 3
    assert len(cluster.queue.admin.jobs()) == 3  # no job written twice
    [run] = cluster.store.runs.all()
    assert run["status"] == RunStatus.COMPLETED
