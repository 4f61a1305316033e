"""Growing the gold table from git alone: one labelling core, the provider path's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.gold import GoldLabel, commit_key, gold_rows
from core.store import Store
from miners.agents import Agents
from miners.git_changes import discover_changes
from miners.git_gold import GitSource, grow_gold_from_git
from miners.gold import ChangesetRecipe
from miners.policy import SurvivalPolicy
from miners.retro import progress
from tests.conftest import SPECS_DIR
from tests.fakes import FakeClock, LedgerGrader
from tests.miners.histories import MixedProject, day, mixed_project

RECIPE = ChangesetRecipe("java8-to-17", lambda pr: "unknown", default_model="unknown")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


@pytest.fixture
def project(tmp_path: Path) -> MixedProject:
    return mixed_project(tmp_path / "app")


def source(project: MixedProject) -> GitSource:
    git_dir = project.history.path / ".git"
    return GitSource(git_dir, "octo/app", str(project.history.path), "refs/heads/main", "stamp")


def grow(store: Store, project: MixedProject, grader: LedgerGrader | None = None):  # type: ignore[no-untyped-def]
    agents = Agents.load(SPECS_DIR / "agents.yaml")
    found = list(discover_changes(source(project).git_dir, "refs/heads/main", agents))
    return grow_gold_from_git(
        store,
        source(project),
        found,
        FakeClock(day(60)),
        policy=SurvivalPolicy(unlock_prs=2),
        recipe=RECIPE,
        grade=grader,
    )


def test_changes_from_git_are_labelled_into_the_gold_table(
    store: Store, project: MixedProject
) -> None:
    grader = LedgerGrader(store)
    report = grow(store, project, grader)
    labels = {row["commit"]: (row["pr"], row["label"]) for row in report.to_dict()["labels"]}
    assert labels == {
        project.merged_pr: (1, "accepted"),
        project.squashed_pr: (2, "rejected"),
        project.agent_commit: (None, "accepted"),
        project.late_pr: (5, "pending"),
    }
    assert report.errors == []
    rows = {row.pr_number: row for row in gold_rows(store)}
    assert set(rows) == {1, 2, 5, commit_key(project.agent_commit)}
    assert rows[2].evidence["revert"]["sha"] == project.revert
    assert (
        rows[1].evidence["merged_at_source"]
        == "the merge commit's committer date (no provider consulted)"
    )
    assert rows[1].evidence["is_agent"] is True
    assert rows[1].evidence["agents_stamp"] == "stamp"
    # Each changeset was graded once, and its verdict sits next to its label.
    assert {c.id for c in grader.seen} == {row.changeset_id for row in rows.values()}
    assert all(row.funnel_verdict is not None for row in rows.values())
    assert rows[1].changeset_id is not None and rows[1].changeset_id.startswith("octo/app/pull/1@")


def test_agent_changes_mined_from_git_earn_the_unlock(store: Store, project: MixedProject) -> None:
    grow(store, project)
    state = progress(store, day(60), SurvivalPolicy(unlock_prs=2))
    assert sorted(state.labelled) == ["octo/app#1", f"octo/app@{project.agent_commit[:12]}"]
    assert state.needed == 0


def test_a_rerun_keeps_final_labels_and_grades_nothing_again(
    store: Store, project: MixedProject
) -> None:
    first = grow(store, project, LedgerGrader(store))
    again = LedgerGrader(store)
    second = grow(store, project, again)
    assert second.to_dict() == first.to_dict()
    # Final rows are left alone; the pending one is relabelled, its verdict read back.
    assert again.seen == []


def test_a_change_git_cannot_read_is_an_error_not_a_label(
    store: Store, project: MixedProject
) -> None:
    history = project.history
    blob = history.git("rev-parse", f"{project.agent_commit}:three.txt")
    (history.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    report = grow(store, project)
    assert [e["commit"] for e in report.errors] == [project.agent_commit]
    assert project.agent_commit not in {label["commit"] for label in report.to_dict()["labels"]}
    assert commit_key(project.agent_commit) not in {row.pr_number for row in gold_rows(store)}
    assert {row.label for row in gold_rows(store)} >= {GoldLabel.ACCEPTED, GoldLabel.REJECTED}
