"""The retroactive-scoring unlock: at exactly 50 labelled agent merges, recorded once."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.retro import (
    current_unlock,
    mark_retroactive,
    progress,
    record_unlock_if_earned,
    retroactive_trials,
)
from migration_evals.miners.tracking import TrackedPR, track_pr

T0 = datetime(2025, 1, 1, tzinfo=UTC)
POLICY = SurvivalPolicy()  # 30 days, 0.8, 50 PRs: the spec's values


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


def merged(
    store: Store,
    number: int,
    merged_on: float,
    label: GoldLabel | None = None,
    *,
    agent: bool = True,
) -> None:
    """Track an agent PR merged on day ``merged_on``; give it a gold ``label`` if any."""
    at = T0 + timedelta(days=merged_on)
    pr = TrackedPR(
        repo="octo/app",
        number=number,
        head_sha="a" * 40,
        base_sha="b" * 40,
        author="fixer-bot" if agent else "octocat",
        is_agent=agent,
        opened_at=at - timedelta(days=1),
        merged_at=at,
        closed_at=at,
        changeset_id=None,
    )
    track_pr(store.ledger, pr)
    if label is not None:
        upsert_gold(store.ledger, GoldRow("octo/app", number, label, at + timedelta(days=30)))


def labelled(store: Store, count: int, start: int = 1) -> None:
    for number in range(start, start + count):
        label = GoldLabel.ACCEPTED if number % 3 else GoldLabel.REJECTED
        merged(store, number, merged_on=0, label=label)


def test_49_labelled_agent_merges_do_not_unlock(store: Store) -> None:
    labelled(store, 49)
    now = T0 + timedelta(days=40)
    assert record_unlock_if_earned(store.db, store.ledger, now, POLICY) == (None, False)
    state = progress(store.db, now, POLICY)
    assert (len(state.labelled), state.needed, state.unlock) == (49, 1, None)


def test_the_50th_unlocks_once_with_time_and_pr_set(store: Store) -> None:
    labelled(store, 50)
    now = T0 + timedelta(days=40)
    unlock, new = record_unlock_if_earned(store.db, store.ledger, now, POLICY)
    assert new is True and unlock is not None
    assert unlock.unlocked_at == now
    assert unlock.prs == tuple(sorted(f"octo/app#{n}" for n in range(1, 51)))
    assert (unlock.threshold, unlock.window_days) == (50, 30)

    labelled(store, 5, start=51)  # more labels later change nothing about the record
    again, new_again = record_unlock_if_earned(
        store.db, store.ledger, now + timedelta(days=9), POLICY
    )
    assert new_again is False
    assert again == unlock == current_unlock(store.db)


def test_only_aged_labelled_agent_merges_count(store: Store) -> None:
    labelled(store, 47)
    merged(store, 100, merged_on=0, label=GoldLabel.ACCEPTED, agent=False)  # a human's
    merged(store, 101, merged_on=20, label=GoldLabel.PENDING)  # not aged at day 40
    merged(store, 102, merged_on=1)  # aged but not labelled yet (refresh failed)
    track_pr(
        store.ledger,
        TrackedPR(
            "octo/app",
            103,
            "a" * 40,
            "b" * 40,
            "fixer-bot",
            True,
            T0,
            None,
            T0 + timedelta(days=2),
            None,
        ),
    )
    track_pr(
        store.ledger,
        TrackedPR("octo/app", 104, "a" * 40, "b" * 40, "fixer-bot", True, T0, None, None, None),
    )
    state = progress(store.db, T0 + timedelta(days=40), POLICY)
    assert len(state.labelled) == 47
    assert dict(state.ready_at) == {
        "octo/app#101": T0 + timedelta(days=50),
        "octo/app#102": T0 + timedelta(days=31),
    }
    assert state.open_prs == 1  # 103 closed unmerged counts nowhere; 104 is open
    assert state.needed == 3
    assert state.earliest is None
    assert state.describe() == (
        "47 of 50 agent PRs merged, aged and labelled; "
        "3 more needed (1 more agent PR(s) must merge before it can be reached)"
    )


def test_earliest_date_is_when_the_needed_pending_merges_have_aged(store: Store) -> None:
    labelled(store, 45)
    for number, day in zip(range(200, 210), (20, 5, 18, 9, 30, 2, 25, 11, 14, 7), strict=True):
        merged(store, number, merged_on=day)
    now = T0 + timedelta(days=33)  # day-2 merge aged and awaits its label: ready now
    state = progress(store.db, now, POLICY)
    assert state.needed == 5
    # Aged by then: days 2, 5, 7, 9, 11 merges -> the fifth ages on day 41.
    assert state.earliest == T0 + timedelta(days=41)
    assert state.describe().endswith("5 more needed (earliest possible 2025-02-11)")
    assert state.to_dict()["earliest"] == (T0 + timedelta(days=41)).isoformat()


def test_progress_after_the_unlock_reports_it(store: Store) -> None:
    labelled(store, 50)
    now = T0 + timedelta(days=40)
    record_unlock_if_earned(store.db, store.ledger, now, POLICY)
    state = progress(store.db, now + timedelta(days=1), POLICY)
    assert state.earliest == now
    assert state.describe() == f"retroactive scoring unlocked at {now.isoformat()}"
    assert state.to_dict()["unlocked"] is True


def test_retroactive_trials_are_marked(store: Store) -> None:
    stamps = Stamps("o", "r", "h")
    changeset = Changeset("hist/1", "repo", "c" * 40, "", "java8-to-17", "gpt-5", T0.date())
    envelope = Envelope("t-1", "hist/1", Tier.APPLY, Verdict.PASS, 0.0, 0.0, 0.0, stamps)
    trial = Trial("t-1", "r-1", changeset, (envelope,))
    mark_retroactive(store.db, "r-1", [trial], T0)
    assert retroactive_trials(store.db) == {"t-1"}


def test_the_policy_comes_from_the_oracle_spec(specs: SpecSet) -> None:
    assert SurvivalPolicy.from_specs(specs) == POLICY
    assert POLICY.to_dict() == asdict(specs.oracle.gold)
