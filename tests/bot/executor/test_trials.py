"""Trial jobs while a judge API is down: put back, never waited for in the worker, and
once the API answers again every trial is in the ledger exactly once, paid for once."""

from __future__ import annotations

import json
from collections.abc import Callable

import sqlalchemy as sa

from migration_evals.bot.executor.driver import CeleryRun
from migration_evals.bot.executor.runtime import Housekeeper
from migration_evals.bot.jobs.pool import CARRIED
from migration_evals.bot.jobs.queue import JobState
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.model import Changeset, Tier, Verdict
from migration_evals.core.schema import budgets_table
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.judges.retry import BRIEF_WAIT_S
from migration_evals.oracles.runner import RunStatus
from migration_evals.oracles.tiers.judge import JudgeOracle
from tests.bot.executor.conftest import Cluster
from tests.conftest import ROOT
from tests.fakes import FakeTimer, OutageJudge

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())
JUDGED = {"java-calc/good", "java-calc/judge-bait"}  # the examples that reach tier 4
DOWN = 10**6  # unavailable until a test says otherwise


class Outage:
    """Builds the real cascade with its primary judge behind an API that is down."""

    def __init__(self, *, retry_after_s: float | None) -> None:
        self.timer = FakeTimer()
        self.retry_after_s = retry_after_s
        self.judge: OutageJudge | None = None

    def __call__(self, settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
        built = build_cascade(settings, store=store, specs=specs)
        oracle = built.cascade.oracles[Tier.JUDGE]
        assert isinstance(oracle, JudgeOracle)
        self.judge = OutageJudge(
            oracle.primary, self.timer, down=DOWN, retry_after_s=self.retry_after_s
        )
        oracle.primary = self.judge
        return built

    def recover(self) -> None:
        assert self.judge is not None
        self.judge.down = self.judge.calls


def _spent(store: Store, run_id: str) -> float:
    with store.db.reading() as conn:
        spent = conn.execute(
            sa.select(budgets_table.c.spent_usd).where(budgets_table.c.run_id == run_id)
        ).scalar_one()
    return float(spent)


def _announce_due(cluster: Cluster, seconds: float) -> int:
    cluster.clock.advance(seconds)
    keeper = Housekeeper(cluster.queue, cluster.dispatcher, holder="w1", redispatch_s=60.0)
    return keeper.tick()


def test_a_judge_outage_puts_trials_back_and_every_trial_is_written_once_after(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    outage = Outage(retry_after_s=120.0)
    cluster = make_cluster(cascades=outage)
    settings = cluster.settings.with_overrides(budget_usd=10.0)
    run = CeleryRun(settings, cluster.store, cluster.specs, cluster.dispatcher, poll_s=0.0)
    run.start("r-out", java_calc, {})

    jobs = {json.loads(j["payload"])["changeset"]["id"]: j for j in cluster.queue.admin.jobs()}
    waiting = {cid for cid, j in jobs.items() if j["state"] == JobState.QUEUED}
    assert waiting == JUDGED  # the other trials were graded meanwhile
    for cid in JUDGED:
        job = jobs[cid]
        assert job["attempts"] == 1 and job["last_error"].startswith("unavailable: ")
        # The API's Retry-After (two readings of a real clock apart, hence the tolerance).
        assert job["run_after"] - job["updated_at"] > 119.9
        assert set(json.loads(job["payload"])[CARRIED]["tiers"]) == {"apply", "compile", "tests"}
    assert outage.timer.sleeps == []  # no worker waited for the judge API
    assert len(cluster.store.ledger.trials_written("r-out")) == len(java_calc) - len(JUDGED)

    assert _announce_due(cluster, 60.0) == 0  # not before the API asked
    outage.recover()
    assert _announce_due(cluster, 61.0) == len(JUDGED)

    failed = run.wait("r-out", java_calc, lambda: None)
    assert failed == {}
    outcome = run.finish("r-out", java_calc)
    assert outcome.status is RunStatus.COMPLETED
    assert {t.changeset.id: t.verdict.value for t in outcome.trials} == {
        c.id: EXPECTED[c.id]["verdict"] for c in java_calc
    }
    entries = list(cluster.store.ledger.entries(run_id="r-out"))
    assert len(entries) == len(java_calc) * len(Tier)  # one set of envelopes per trial
    assert cluster.store.ledger.verify_ledger().ok
    assert outage.judge is not None and outage.judge.answered == len(JUDGED)
    for trial in outcome.trials:
        if trial.changeset.id in JUDGED:  # tiers 1-3 came from the first attempt
            assert all("carried_from" in e.details for e in trial.envelopes[:3])
    # The shared budget counts every tier of every trial once.
    listed = sum(entry.envelope.list_cost_usd for entry in entries)
    assert abs(_spent(cluster.store, "r-out") - listed) < 1e-9
    assert {j["state"] for j in cluster.queue.admin.jobs()} == {JobState.DONE}
    assert outage.timer.sleeps == []


def test_on_the_last_attempt_the_judge_tier_records_error_and_the_run_ends(
    make_cluster: Callable[..., Cluster], java_calc: list[Changeset]
) -> None:
    outage = Outage(retry_after_s=None)
    cluster = make_cluster(cascades=outage)
    run = cluster.driver()
    good = [c for c in java_calc if c.id == "java-calc/good"]
    run.start("r-last", good, {})
    [job] = cluster.queue.admin.jobs()
    assert job["state"] == JobState.QUEUED and job["attempts"] == 1
    assert max(outage.timer.sleeps) <= BRIEF_WAIT_S  # one quick retry at most
    brief = len(outage.timer.sleeps)

    assert _announce_due(cluster, 3600.0) == 1  # attempt 2 of 2: the last
    [job] = cluster.queue.admin.jobs()
    assert job["state"] == JobState.DONE and job["attempts"] == 2
    outcome = run.finish("r-last", good)
    [trial] = outcome.trials
    judged = trial.envelopes[3]
    assert judged.verdict is Verdict.ERROR and trial.verdict is Verdict.ERROR
    assert "the judge API answered 429" in judged.reason
    assert "gave up after 5 attempt(s)" in judged.reason
    assert outage.timer.sleeps[brief:] == [1.0, 2.0, 4.0, 8.0]  # the bounded retries
    assert all("carried_from" in e.details for e in trial.envelopes[:3])
    assert len(list(cluster.store.ledger.entries(run_id="r-last"))) == len(Tier)
