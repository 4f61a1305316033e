"""The nightly refresh over tracked PRs, real git histories and a fake provider."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date
from pathlib import Path

import pytest

from migration_evals.core import schema
from migration_evals.core.gold import GoldLabel, gold_rows
from migration_evals.core.model import (
    Changeset,
    Envelope,
    FabricatedMark,
    Stamps,
    Tier,
    Trial,
    Verdict,
)
from migration_evals.core.store import Store
from migration_evals.miners.clones import MirrorCache
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.survival import RefreshReport, refresh
from migration_evals.miners.tracking import TrackedPR, track_pr, tracked_prs
from tests.conftest import NewHistory
from tests.fakes import FakeClock, FakeProvider
from tests.miners.histories import History, day


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


@pytest.fixture
def history(tmp_path: Path, new_history: NewHistory) -> History:
    return new_history(tmp_path / "app")


@pytest.fixture
def mirrors(tmp_path: Path) -> MirrorCache:
    return MirrorCache(tmp_path / "mirrors")


def nightly(
    store: Store,
    provider: FakeProvider,
    mirrors: MirrorCache,
    at: float,
    policy: SurvivalPolicy | None = None,
) -> RefreshReport:
    clock = FakeClock(day(at))
    return refresh(
        store.db,
        store.ledger,
        provider,
        clock,
        policy=policy or SurvivalPolicy(),
        mirror=mirrors.mirror,
    )


def graded(store: Store, changeset_id: str, *verdicts: Verdict, fabricated: bool = False) -> str:
    """Put a trial of ``changeset_id`` in the ledger, as the bot would have."""
    stamps = Stamps("o", "r", "h")
    marks = (FabricatedMark("sandbox", "k", "c.json", "no cassette"),) if fabricated else ()
    changeset = Changeset(
        changeset_id, "repo", "c" * 40, "", "java8-to-17", "gpt-5", date(2020, 1, 1)
    )
    envelopes = tuple(
        Envelope("t-bot", changeset_id, tier, verdict, 0.001, 0.0, 0.1, stamps, fabricated=marks)
        for tier, verdict in zip(Tier, verdicts, strict=False)
    )
    store.ledger.append_trial(Trial("t-bot", "r-bot", changeset, envelopes), {})
    return "t-bot"


def test_a_tracked_merge_is_pending_then_accepted_then_left_alone(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    pr = history.merged_pr(7, day(1))
    history.commit({"later.txt": "x\n"}, "day 40", day(40))
    track_pr(store.ledger, TrackedPR.from_info(pr, changeset_id="example/app/pull/7@abc"))
    provider = FakeProvider().add(pr)

    first = nightly(store, provider, mirrors, at=11)
    assert first.labels == {"example/app#7": GoldLabel.PENDING}
    (row,) = gold_rows(store.db)
    assert row.label is GoldLabel.PENDING and row.computed_at == day(11)

    second = nightly(store, provider, mirrors, at=60)
    assert second.labels == {"example/app#7": GoldLabel.ACCEPTED}
    (row,) = gold_rows(store.db)
    assert row.survival == 1.0
    assert row.changeset_id == "example/app/pull/7@abc"
    assert row.evidence["merge_commit"] == pr.merge_commit_sha
    assert row.evidence["funnel"] is None and row.funnel_verdict is None

    provider.asked.clear()
    third = nightly(store, provider, mirrors, at=61)
    assert third.checked == 0 and provider.asked == []


def test_the_gold_row_carries_the_funnel_verdict_from_the_ledger(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    pr = history.merged_pr(7, day(1))
    track_pr(store.ledger, TrackedPR.from_info(pr, changeset_id="cs-7"))
    trial_id = graded(store, "cs-7", Verdict.PASS, Verdict.FAIL)
    nightly(store, FakeProvider().add(pr), mirrors, at=45)
    (row,) = gold_rows(store.db)
    assert (row.funnel_verdict, row.trial_id, row.model) == (Verdict.FAIL, trial_id, "gpt-5")
    assert row.evidence["funnel"] == {"trial_id": trial_id, "verdict": "fail"}


def test_closed_unmerged_is_rejected_without_cloning(store: Store, history: History) -> None:
    pr = history.pull_request(
        head=history.feature(), base=history.head(), merged_at=None, closed_at=day(3)
    )
    track_pr(store.ledger, TrackedPR.from_info(pr, changeset_id=None))

    class NoClones(MirrorCache):
        def mirror(self, url: str) -> Path:
            raise AssertionError("no clone needed")

    report = nightly(store, FakeProvider().add(pr), NoClones(Path("unused")), at=4)
    assert report.labels == {"example/app#7": GoldLabel.REJECTED}


def test_an_outage_on_one_pr_is_noted_and_the_others_still_refresh(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    first, second = history.merged_pr(1, day(1)), history.merged_pr(2, day(2))
    for pr in (first, second):
        track_pr(store.ledger, TrackedPR.from_info(pr))
    provider = FakeProvider(down={("example/app", 1)}).add(first, second)
    report = nightly(store, provider, mirrors, at=50)
    assert report.errors == {"example/app#1": "GitHub answered 502 for pull request example/app#1"}
    assert report.labels == {"example/app#2": GoldLabel.ACCEPTED}
    assert [(r.pr_number, r.label) for r in gold_rows(store.db)] == [(2, GoldLabel.ACCEPTED)]
    with store.db.reading() as conn:
        errors = dict(
            conn.execute(
                schema.tracked_prs_table.select().with_only_columns(
                    schema.tracked_prs_table.c.number, schema.tracked_prs_table.c.last_error
                )
            ).all()
        )
    assert errors == {1: "GitHub answered 502 for pull request example/app#1", 2: None}


def test_an_open_pr_is_followed_until_it_merges(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    merged = history.merged_pr(9, day(2))
    still_open = dataclasses.replace(merged, merged_at=None, closed_at=None, merge_commit_sha=None)
    track_pr(store.ledger, TrackedPR.from_info(still_open))
    provider = FakeProvider().add(still_open)
    assert nightly(store, provider, mirrors, at=1).still_open == ["example/app#9"]
    provider.add(merged)
    nightly(store, provider, mirrors, at=3)
    (tracked,) = tracked_prs(store.db)
    assert tracked.merged_at == day(2).astimezone(UTC)
    assert tracked.merge_commit_sha == merged.merge_commit_sha


def test_the_refresh_records_the_unlock_when_it_is_earned(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    policy = SurvivalPolicy(unlock_prs=3)
    pulls = [history.merged_pr(n, day(n)) for n in (1, 2, 3)]
    for pr in pulls:
        track_pr(store.ledger, TrackedPR.from_info(pr))
    provider = FakeProvider().add(*pulls)
    assert nightly(store, provider, mirrors, at=32, policy=policy).unlock is None  # 2 aged
    report = nightly(store, provider, mirrors, at=33, policy=policy)
    assert report.newly_unlocked
    assert report.unlock is not None and report.unlock.unlocked_at == day(33)
    assert report.unlock.prs == ("example/app#1", "example/app#2", "example/app#3")
    assert nightly(store, provider, mirrors, at=34, policy=policy).newly_unlocked is False


def test_a_fabricated_funnel_verdict_is_carried_into_the_gold_row(
    store: Store, history: History, mirrors: MirrorCache
) -> None:
    pr = history.merged_pr(7, day(1))
    track_pr(store.ledger, TrackedPR.from_info(pr, changeset_id="cs-7"))
    graded(store, "cs-7", Verdict.PASS, Verdict.PASS, fabricated=True)
    nightly(store, FakeProvider().add(pr), mirrors, at=45)
    (row,) = gold_rows(store.db)
    (mark, _) = row.evidence["funnel"]["fabricated"]  # one per envelope
    assert mark["fabricated"] is True and mark["port"] == "sandbox"
