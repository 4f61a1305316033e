"""Growing the gold table: labels from git, funnel verdicts from the ledger or graded once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from migration_evals.core.errors import ChangesetProviderError
from migration_evals.core.gold import GoldLabel, gold_rows
from migration_evals.core.model import Verdict
from migration_evals.core.ports import PullRequestInfo, PullRequestQuery
from migration_evals.core.store import Store
from migration_evals.miners.clones import MirrorCache
from migration_evals.miners.gold import ChangesetRecipe, grow_gold
from migration_evals.miners.policy import SurvivalPolicy
from tests.fakes import FakeClock, FakeProvider, LedgerGrader
from tests.miners.histories import ADDED, History, day

QUERY = PullRequestQuery(repos=("example/app",))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


def scenario(tmp_path: Path) -> tuple[FakeProvider, list[PullRequestInfo], str]:
    history = History.create(tmp_path / "app")
    fork_point = history.head()
    history.checkout("pr-1", new=True)
    head = history.commit({"pr1.txt": "".join(ADDED)}, "PR 1", day(0.5))
    history.checkout("main")
    moved = history.commit({"other.txt": "main moved on\n"}, "main moves", day(0.7))
    merge = history.merge("pr-1", day(1))
    # GitHub reports the base branch's tip as the base sha, not where the branch forked.
    accepted = history.pull_request(
        head=head, base=moved, merged_at=day(1), merge_commit=merge, number=1
    )
    pending = history.merged_pr(4, day(50))
    base = history.head()
    history.checkout("closed", new=True)
    closed_head = history.commit({"closed.txt": "no\n"}, "closed", day(2))
    history.checkout("main")
    closed = history.pull_request(
        head=closed_head, base=base, merged_at=None, closed_at=day(3), number=2
    )
    still_open = dataclasses.replace(closed, number=3, closed_at=None)
    provider = FakeProvider().add(accepted, closed, still_open, pending)
    provider.diffs = {("example/app", n): f"diff of PR {n}\n" for n in (1, 4)}
    return provider, [accepted, closed, still_open, pending], fork_point


def grow(store: Store, provider: FakeProvider, mirrors: MirrorCache, grader: LedgerGrader | None):  # type: ignore[no-untyped-def]
    recipe = ChangesetRecipe("java8-to-17", lambda pr: "gpt-5" if pr.is_agent else "unknown")
    return grow_gold(
        store.db,
        store.ledger,
        provider,
        QUERY,
        FakeClock(day(55)),
        policy=SurvivalPolicy(),
        mirror=mirrors.mirror,
        recipe=recipe,
        grade=grader,
    )


def test_labels_and_funnel_verdicts_land_in_the_gold_table(tmp_path: Path, store: Store) -> None:
    provider, (accepted, closed, _, pending), fork_point = scenario(tmp_path)
    grader = LedgerGrader(store)
    report = grow(store, provider, MirrorCache(tmp_path / "m"), grader)
    assert report.still_open == ["example/app#3"]
    assert report.errors == {}
    rows = {row.pr_number: row for row in gold_rows(store.db)}
    assert {n: r.label for n, r in rows.items()} == {
        1: GoldLabel.ACCEPTED,
        2: GoldLabel.REJECTED,
        4: GoldLabel.PENDING,
    }
    assert {n: r.funnel_verdict for n, r in rows.items()} == {
        1: Verdict.PASS,
        2: Verdict.FAIL,  # no diff to apply
        4: Verdict.PASS,
    }
    assert rows[1].changeset_id == accepted.changeset_id
    assert rows[1].model == "gpt-5" and rows[1].evidence["funnel"]["trial_id"] == "t-1"
    graded = {c.id: c for c in grader.seen}
    assert graded[accepted.changeset_id].patch == "diff of PR 1\n"
    # The changeset applies to the merge base of the PR's base and head, as GitHub's diff does.
    assert graded[accepted.changeset_id].base_commit == fork_point
    assert graded[accepted.changeset_id].base_commit != accepted.base_sha
    assert graded[closed.changeset_id].base_commit == closed.base_sha
    assert graded[pending.changeset_id].source == pending.url


def test_a_rerun_skips_final_labels_and_never_regrades(tmp_path: Path, store: Store) -> None:
    provider, _, _ = scenario(tmp_path)
    mirrors = MirrorCache(tmp_path / "m")
    grow(store, provider, mirrors, LedgerGrader(store))
    again = LedgerGrader(store)
    report = grow(store, provider, mirrors, again)
    assert sorted(report.skipped_final) == ["example/app#1", "example/app#2"]
    assert [r.pr_number for r in report.rows] == [4]  # pending: relabelled
    assert again.seen == []  # its changeset's trial is in the ledger already
    assert report.rows[0].funnel_verdict is Verdict.PASS


def test_without_a_grader_rows_have_no_verdict(tmp_path: Path, store: Store) -> None:
    provider, _, _ = scenario(tmp_path)
    grow(store, provider, MirrorCache(tmp_path / "m"), None)
    assert {r.funnel_verdict for r in gold_rows(store.db)} == {None}


def test_a_failed_diff_keeps_the_label_and_says_it_was_not_graded(
    tmp_path: Path, store: Store
) -> None:
    provider, _, _ = scenario(tmp_path)
    original = provider.diff

    def flaky(repo: str, number: int) -> str:
        if number == 1:
            provider.down.add((repo, number))
        return original(repo, number)

    provider.diff = flaky  # type: ignore[method-assign]
    report = grow(store, provider, MirrorCache(tmp_path / "m"), LedgerGrader(store))
    assert report.errors == {
        "example/app#1": "labelled, but not graded: "
        "GitHub answered 502 for the diff of example/app#1"
    }
    row = next(r for r in gold_rows(store.db) if r.pr_number == 1)
    assert row.label is GoldLabel.ACCEPTED and row.funnel_verdict is None


def test_labels_so_far_are_kept_when_listing_fails_half_way(tmp_path: Path, store: Store) -> None:
    provider, pulls, _ = scenario(tmp_path)

    def outage(query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        yield pulls[0]
        raise ChangesetProviderError("GitHub answered 502 for pull requests of example/app")

    provider.pull_requests = outage  # type: ignore[method-assign]
    with pytest.raises(ChangesetProviderError, match="502"):
        grow(store, provider, MirrorCache(tmp_path / "m"), LedgerGrader(store))
    assert [(r.pr_number, r.label) for r in gold_rows(store.db)] == [(1, GoldLabel.ACCEPTED)]
