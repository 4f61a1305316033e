"""Tracked PRs: registered once per (repo, number), merge state updated on every call."""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from migration_evals.core.store import Store
from migration_evals.miners.tracking import TrackedPR, note_check, track_pr, tracked_pr, tracked_prs

OPENED = datetime(2025, 3, 1, 9, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


def opened(number: int = 12, **changes: object) -> TrackedPR:
    pr = TrackedPR(
        repo="octo/app",
        number=number,
        head_sha="a" * 40,
        base_sha="b" * 40,
        author="fixer-bot[bot]",
        is_agent=True,
        opened_at=OPENED,
        merged_at=None,
        closed_at=None,
        changeset_id="octo/app/pull/12@aaaaaaaaaaaa",
    )
    return dataclasses.replace(pr, **changes)  # type: ignore[arg-type]


def test_tracking_twice_keeps_one_row_and_updates_the_merge_state(store: Store) -> None:
    track_pr(store.ledger, opened())
    merged_at = OPENED + timedelta(days=2)
    merged = opened(
        head_sha="c" * 40, merged_at=merged_at, closed_at=merged_at, merge_commit_sha="d" * 40
    )
    track_pr(store.ledger, merged)
    track_pr(store.ledger, merged)
    assert tracked_prs(store.db) == [merged]


def test_a_later_call_without_changeset_or_merge_sha_keeps_them(store: Store) -> None:
    track_pr(store.ledger, opened(merge_commit_sha="d" * 40))
    track_pr(store.ledger, opened(changeset_id=None, merge_commit_sha=None))
    found = tracked_pr(store.db, "octo/app", 12)
    assert found is not None
    assert found.changeset_id == "octo/app/pull/12@aaaaaaaaaaaa"
    assert found.merge_commit_sha == "d" * 40


def test_a_reopened_pr_loses_its_closed_date(store: Store) -> None:
    track_pr(store.ledger, opened(closed_at=OPENED + timedelta(days=1)))
    track_pr(store.ledger, opened())
    found = tracked_pr(store.db, "octo/app", 12)
    assert found is not None and found.closed_at is None


def test_times_are_stored_in_utc(store: Store) -> None:
    paris = timezone(timedelta(hours=1))
    track_pr(store.ledger, opened(opened_at=datetime(2025, 3, 1, 10, tzinfo=paris)))
    found = tracked_pr(store.db, "octo/app", 12)
    assert found is not None and found.opened_at == OPENED
    assert found.opened_at.tzinfo is not None


def test_concurrent_registrations_of_the_same_pr_make_one_row(store: Store) -> None:
    def register() -> None:
        track_pr(store.ledger, opened())

    threads = [threading.Thread(target=register) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(tracked_prs(store.db)) == 1


def test_agents_only_and_order(store: Store) -> None:
    track_pr(store.ledger, opened(number=3))
    track_pr(store.ledger, opened(number=1, is_agent=False, author="octocat"))
    track_pr(store.ledger, opened(number=2))
    assert [p.number for p in tracked_prs(store.db)] == [1, 2, 3]
    assert [p.number for p in tracked_prs(store.db, agents_only=True)] == [2, 3]


def test_note_check_does_not_touch_the_merge_state(store: Store) -> None:
    track_pr(store.ledger, opened())
    note_check(store.ledger, opened(), OPENED + timedelta(days=1), "GitHub answered 502")
    assert tracked_prs(store.db) == [opened()]


@pytest.mark.parametrize(("repo", "number"), [("octo", 1), ("octo/app/x", 1), ("octo/app", 0)])
def test_malformed_keys_are_refused(repo: str, number: int) -> None:
    with pytest.raises(ValueError, match="repo|number"):
        opened(repo=repo, number=number)
