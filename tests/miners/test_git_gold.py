"""Growing the gold table from git alone: one labelling core, the provider path's table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from migration_evals.core.gold import RELABELLED, GoldLabel, commit_key, gold_rows, label_history
from migration_evals.core.store import Store
from migration_evals.miners.agents import Agents
from migration_evals.miners.clones import MirrorCache
from migration_evals.miners.git_changes import ListedCommit, discover_changes, listed_changes
from migration_evals.miners.git_gold import GitGrowReport, GitSource, grow_gold_from_git
from migration_evals.miners.gold import ChangesetRecipe
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.retro import progress
from tests.conftest import SPECS_DIR, MixedProjects
from tests.fakes import FakeClock, LedgerGrader
from tests.miners.histories import ADDED, BASE_FILE, History, MixedProject, day

RECIPE = ChangesetRecipe("java8-to-17", lambda pr: "unknown", default_model="unknown")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'mine.db'}")


@pytest.fixture
def project(tmp_path: Path, mixed_projects: MixedProjects) -> MixedProject:
    return mixed_projects(tmp_path / "app")


def source(project: MixedProject) -> GitSource:
    git_dir = project.history.path / ".git"
    return GitSource(git_dir, "octo/app", str(project.history.path), "refs/heads/main", "stamp")


def grow(store: Store, project: MixedProject, grader: LedgerGrader | None = None):  # type: ignore[no-untyped-def]
    agents = Agents.load(SPECS_DIR / "agents.yaml")
    found = list(discover_changes(source(project).git_dir, "refs/heads/main", agents))
    return grow_gold_from_git(
        store.db,
        store.ledger,
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
    rows = {row.pr_number: row for row in gold_rows(store.db)}
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
    state = progress(store.db, day(60), SurvivalPolicy(unlock_prs=2))
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
    assert commit_key(project.agent_commit) not in {row.pr_number for row in gold_rows(store.db)}
    assert {row.label for row in gold_rows(store.db)} >= {GoldLabel.ACCEPTED, GoldLabel.REJECTED}


def look(store: Store, origin: History, mirrors: Path, fetched: datetime) -> GitGrowReport:
    """Mirror ``origin`` as of ``fetched``, discover its changes and label them then."""
    git_dir = MirrorCache(mirrors, clock=FakeClock(fetched)).mirror(str(origin.path))
    repo = GitSource(git_dir, "octo/app", str(origin.path), "refs/heads/main")
    agents = Agents.load(SPECS_DIR / "agents.yaml")
    return grow_gold_from_git(
        store.db,
        store.ledger,
        repo,
        list(discover_changes(git_dir, repo.tip, agents)),
        FakeClock(fetched),
        policy=SurvivalPolicy(),
        recipe=RECIPE,
        grade=None,
    )


def test_a_revert_that_arrives_later_inside_the_window_relabels_with_history(
    store: Store, tmp_path: Path
) -> None:
    origin = History.create(tmp_path / "origin")
    origin.checkout("fix", new=True)
    origin.commit({"app.txt": BASE_FILE + "".join(ADDED)}, "the fix", day(0))
    origin.checkout("main")
    origin.merge_as("fix", "Merge pull request #3 from octo/fix", 1)
    first = look(store, origin, tmp_path / "mirrors", fetched=day(35))
    (accepted,) = first.to_dict()["labels"]
    assert (accepted["pr"], accepted["label"]) == (3, "accepted")
    assert first.rows[0].evidence["window_closed_by"] == {"fetched_at": day(35).isoformat()}

    # Undone by hand on day 20, but pushed after the first fetch: inside the window all along.
    undo = origin.commit({"app.txt": BASE_FILE}, "put the old file back", day(20))
    second = look(store, origin, tmp_path / "mirrors", fetched=day(45))
    (rejected,) = second.to_dict()["labels"]
    assert (rejected["label"], rejected["revert"]) == ("rejected", undo)
    assert rejected["reason"] == (
        f"reverted by {undo} (reverse diff) (relabelled from accepted on 2025-02-15)"
    )
    chain = label_history(store.db, "octo/app", 3)
    assert (chain[0].label, chain[-1].label) == (GoldLabel.ACCEPTED, GoldLabel.REJECTED)
    assert chain[-1].evidence[RELABELLED] == [
        {
            "from": "accepted",
            "to": "rejected",
            "at": day(45).isoformat(),
            "reason": f"reverted by {undo} (reverse diff)",
            "was": "survived: 10 of 10 added lines remain (100%)",
        }
    ]
    assert gold_rows(store.db) == [chain[-1]]
    assert store.ledger.verify_ledger().ok

    # Nothing new on the branch: the label stands, and nothing more is recorded.
    look(store, origin, tmp_path / "mirrors", fetched=day(50))
    assert label_history(store.db, "octo/app", 3) == chain


def test_a_commit_a_merge_brought_in_is_labelled_from_the_merge(
    store: Store, tmp_path: Path
) -> None:
    """Made 40 days before it landed: its window runs from the merge, so a revert of the
    merge 24 days after landing falls inside it."""
    history = History.create(tmp_path / "app")
    history.checkout("old-work", new=True)
    own = history.commit({"app.txt": BASE_FILE + "".join(ADDED)}, "old work", day(-40))
    history.checkout("main")
    merge = history.merge("old-work", day(1))
    history.git("revert", "-m", "1", "--no-edit", merge, at=day(25))
    revert = history.head()
    history.commit({"other.txt": "later\n"}, "later", day(40))
    git_dir = history.path / ".git"
    agents = Agents.load(SPECS_DIR / "agents.yaml")
    changes, problems = listed_changes(git_dir, "refs/heads/main", [ListedCommit(own)], agents)
    assert problems == []
    repo = GitSource(git_dir, "octo/app", str(history.path), "refs/heads/main")
    report = grow_gold_from_git(
        store.db,
        store.ledger,
        repo,
        changes,
        FakeClock(day(60)),
        policy=SurvivalPolicy(),
        recipe=RECIPE,
        grade=None,
    )
    (row,) = report.rows
    assert row.label is GoldLabel.REJECTED
    assert row.evidence["commit"] == row.evidence["merge_commit"] == merge
    assert row.evidence["listed_commits"] == [own]
    assert row.evidence["merged_at"] == day(1).isoformat()
    assert row.evidence["window_end"] == day(31).isoformat()
    assert row.evidence["revert"]["sha"] == revert
    assert row.evidence["state_commit"] == revert


def test_a_commit_listed_twice_is_labelled_once(store: Store, project: MixedProject) -> None:
    git_dir = source(project).git_dir
    agents = Agents.load(SPECS_DIR / "agents.yaml")
    listed = [ListedCommit(project.squashed_pr), ListedCommit(project.squashed_pr)]
    changes, problems = listed_changes(git_dir, "refs/heads/main", listed, agents)
    report = grow_gold_from_git(
        store.db,
        store.ledger,
        source(project),
        changes,
        FakeClock(day(60)),
        policy=SurvivalPolicy(),
        recipe=RECIPE,
        grade=None,
    )
    assert problems == []
    assert [(x["commit"], x["label"]) for x in report.to_dict()["labels"]] == [
        (project.squashed_pr, "rejected")
    ]
    assert [row.pr_number for row in gold_rows(store.db)] == [2]


def test_a_staler_copy_of_the_history_leaves_a_final_label_alone(
    store: Store, tmp_path: Path
) -> None:
    history = History.create(tmp_path / "app")
    history.feature()
    merge = history.merge_as("feature", "Merge pull request #4 from octo/feature", 1)
    history.commit({"other.txt": "later\n"}, "later", day(40))
    git_dir = history.path / ".git"
    repo = GitSource(git_dir, "octo/app", str(history.path), "refs/heads/main")
    agents = Agents.load(SPECS_DIR / "agents.yaml")

    def grow_here() -> GitGrowReport:
        changes = list(discover_changes(git_dir, repo.tip, agents))
        policy = SurvivalPolicy()
        clock = FakeClock(day(60))
        return grow_gold_from_git(
            store.db, store.ledger, repo, changes, clock, policy=policy, recipe=RECIPE, grade=None
        )

    (first,) = grow_here().rows
    assert first.label is GoldLabel.ACCEPTED
    history.git("reset", "-q", "--hard", merge)  # the branch as a clone from day 1 has it
    (second,) = grow_here().rows
    assert second == first
    assert label_history(store.db, "octo/app", 4)[-1] == first
