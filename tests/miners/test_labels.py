"""Gold labels on real git histories with fixed commit dates.

Each test builds a repository with git itself: a PR merged (merge commit, squash or
rebase) on day 1, then whatever happened to it; the label is read at day 60 unless said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from migration_evals.core.errors import RepositoryError
from migration_evals.core.gold import GoldLabel
from migration_evals.core.ports import PullRequestInfo
from migration_evals.miners.clones import MirrorCache, fetch_time, record_fetch_time
from migration_evals.miners.labels import (
    Labelled,
    MergedAtSource,
    MergedChange,
    label_merged,
    label_pull_request,
)
from migration_evals.miners.policy import SurvivalPolicy
from tests.conftest import NewHistory
from tests.fakes import FakeClock
from tests.miners.histories import ADDED, BASE_FILE, History, day, indent

Mirror = Callable[[str], Path]


@pytest.fixture
def history(tmp_path: Path, new_history: NewHistory) -> History:
    return new_history(tmp_path / "app")


@pytest.fixture
def mirror(tmp_path: Path) -> Mirror:
    return MirrorCache(tmp_path / "mirrors").mirror


def no_git(url: str) -> Path:
    raise AssertionError(f"git was not needed to label this PR, but {url} was asked for")


def label(pr: PullRequestInfo, mirror: Mirror, now: float = 60) -> Labelled:
    labelled = label_pull_request(pr, now=day(now), policy=SurvivalPolicy(), mirror=mirror)
    assert labelled is not None
    return labelled


def merged(history: History, at: float = 1) -> PullRequestInfo:
    base = history.head("main")
    head = history.feature()
    merge = history.merge("feature", day(at))
    return history.pull_request(head=head, base=base, merged_at=day(at), merge_commit=merge)


def later(history: History, at: float, files: dict[str, str | None] | None = None) -> str:
    return history.commit(files or {f"other-{at}.txt": "unrelated\n"}, f"day {at}", day(at))


def test_merged_and_untouched_for_30_days_is_accepted(history: History, mirror: Mirror) -> None:
    pr = merged(history)
    in_window = later(history, 20)
    later(history, 40)
    result = label(pr, mirror)
    assert result.label is GoldLabel.ACCEPTED
    assert result.survival == 1.0
    assert result.evidence["state_commit"] == in_window
    assert result.evidence["state_commit_at"] == day(20).isoformat()
    assert result.evidence["window_end"] == day(31).isoformat()
    assert result.evidence["merge_commit"] == pr.merge_commit_sha
    assert result.evidence["revert"] is None
    assert result.evidence["lines_added"] == len(ADDED)
    assert result.evidence["state_is_merge"] is False


def test_reverted_on_day_12_is_rejected(history: History, mirror: Mirror) -> None:
    pr = merged(history)
    assert pr.merge_commit_sha is not None
    history.git("revert", "-m", "1", "--no-edit", pr.merge_commit_sha, at=day(12))
    revert = history.head()
    later(history, 40)
    result = label(pr, mirror)
    assert result.label is GoldLabel.REJECTED
    assert result.evidence["revert"]["sha"] == revert
    assert result.evidence["revert"]["how"] == "revert trailer"
    assert result.survival == 0.0


def test_a_revert_without_trailer_is_found_by_its_reversed_diff(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    undo = later(history, 12, {"app.txt": BASE_FILE})
    result = label(pr, mirror)
    assert result.label is GoldLabel.REJECTED
    assert result.evidence["revert"] == {
        "sha": undo,
        "how": "reverse diff",
        "at": day(12).isoformat(),
    }


def test_half_the_added_lines_rewritten_on_day_20_is_survival_one_half(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    rewritten = [f"rewritten by a human on day 20, line {i}\n" for i in range(5)]
    later(history, 20, {"app.txt": BASE_FILE + "".join(rewritten + ADDED[5:])})
    later(history, 40)
    result = label(pr, mirror)
    assert result.survival == 0.5
    assert result.label is GoldLabel.REJECTED  # below the spec's 0.8
    assert result.evidence["lines_alive"] == 5
    assert result.evidence["revert"] is None


def test_added_lines_only_reindented_on_day_3_still_survive(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    later(history, 3, {"app.txt": BASE_FILE + "".join(indent(ADDED))})
    later(history, 40)
    result = label(pr, mirror)
    assert result.survival == 1.0
    assert result.label is GoldLabel.ACCEPTED


def test_a_file_renamed_after_merge_still_counts_its_lines(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    history.git("mv", "app.txt", "renamed.txt")
    history.git("commit", "-q", "-m", "rename", at=day(5))
    later(history, 40)
    result = label(pr, mirror)
    assert result.survival == 1.0
    assert result.label is GoldLabel.ACCEPTED


def test_lines_moved_to_another_file_still_count_and_are_no_revert(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    later(history, 8, {"app.txt": BASE_FILE, "moved.txt": "header\n" + "".join(ADDED)})
    later(history, 40)
    result = label(pr, mirror)
    assert result.evidence["revert"] is None
    assert result.survival == 1.0


def test_merged_10_days_ago_is_pending_without_touching_git(history: History) -> None:
    pr = merged(history)
    result = label(pr, no_git, now=11)
    assert result.label is GoldLabel.PENDING
    assert result.survival is None
    assert result.evidence["window_end"] == day(31).isoformat()


def test_pending_until_the_window_has_fully_passed(history: History, mirror: Mirror) -> None:
    pr = merged(history)
    assert label(pr, no_git, now=31 - 1 / 86400).label is GoldLabel.PENDING
    assert label(pr, mirror, now=31).label is GoldLabel.ACCEPTED


def test_closed_without_merge_is_rejected(history: History) -> None:
    base = history.head("main")
    head = history.feature()
    pr = history.pull_request(head=head, base=base, merged_at=None, closed_at=day(2))
    result = label(pr, no_git)
    assert result.label is GoldLabel.REJECTED
    assert result.evidence["reason"] == "closed without merge"


def test_an_open_pull_request_gets_no_label(history: History) -> None:
    pr = history.pull_request(head=history.feature(), base=history.head(), merged_at=None)
    assert label_pull_request(pr, now=day(60), policy=SurvivalPolicy(), mirror=no_git) is None


def test_the_last_commit_at_or_before_the_window_end_is_the_state(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    later(history, 29)
    last_in_window = later(history, 31)  # exactly at the window's end: still inside
    later(history, 31.5)
    later(history, 45, {"app.txt": BASE_FILE + "gone\n"})  # after the window: does not count
    history.commit(
        {"app.txt": BASE_FILE}, f"Revert\n\nThis reverts commit {pr.merge_commit_sha}.", day(50)
    )
    result = label(pr, mirror)
    assert result.evidence["state_commit"] == last_in_window
    assert result.label is GoldLabel.ACCEPTED


def test_a_commit_after_the_window_end_with_an_older_date_does_not_move_the_state(
    history: History, mirror: Mirror
) -> None:
    """The branch's state stops at the first commit that landed after the window's end."""
    pr = merged(history)
    in_window = later(history, 20)
    later(history, 35)
    later(history, 25)  # a skewed clock: committed after day 35, dated day 25
    assert label(pr, mirror).evidence["state_commit"] == in_window


def test_a_quiet_branch_is_labelled_from_the_merge_day_state(
    history: History, mirror: Mirror
) -> None:
    """Nothing for a year after the merge, then a rewrite: the state is the merge itself."""
    pr = merged(history)
    later(history, 400, {"app.txt": BASE_FILE + "rewritten a year later\n"})
    result = label(pr, mirror, now=500)
    assert result.evidence["state_commit"] == pr.merge_commit_sha
    assert result.evidence["state_commit_at"] == day(1).isoformat()
    assert result.evidence["state_is_merge"] is True
    assert (result.label, result.survival) == (GoldLabel.ACCEPTED, 1.0)


def test_a_rewrite_on_day_200_does_not_change_a_day_30_label(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    later(history, 20)
    before = label(pr, mirror, now=100)
    later(history, 200, {"app.txt": BASE_FILE + "everything rewritten on day 200\n"})
    after = label(pr, mirror, now=300)
    assert (
        (after.label, after.survival)
        == (before.label, before.survival)
        == (
            GoldLabel.ACCEPTED,
            1.0,
        )
    )
    assert after.evidence["state_commit"] == before.evidence["state_commit"]


@pytest.mark.parametrize(
    ("revert_day", "expected"), [(29, GoldLabel.REJECTED), (31, GoldLabel.ACCEPTED)]
)
def test_a_revert_on_day_29_rejects_and_on_day_31_does_not(
    history: History, mirror: Mirror, revert_day: int, expected: GoldLabel
) -> None:
    pr = merged(history, at=0)
    assert pr.merge_commit_sha is not None
    history.git("revert", "-m", "1", "--no-edit", pr.merge_commit_sha, at=day(revert_day))
    result = label(pr, mirror)
    assert result.label is expected
    assert (result.evidence["revert"] is None) is (expected is GoldLabel.ACCEPTED)


def test_duplicate_line_credit_never_raises_survival(history: History, mirror: Mirror) -> None:
    """Blame credits later copies of a line to the change; they are reported, not counted."""
    pr = merged(history)
    kept = ADDED[:7]
    copies = [ADDED[0], ADDED[0], ADDED[1]]
    later(history, 10, {"app.txt": BASE_FILE + "".join(kept + copies)})
    result = label(pr, mirror)
    assert result.evidence["lines_added"] == 10
    assert result.evidence["lines_alive"] == 7
    assert result.evidence["lines_credited_not_added"] == 3
    assert result.survival == 0.7
    assert result.label is GoldLabel.REJECTED


def test_whitespace_only_added_lines_are_not_counted(history: History, mirror: Mirror) -> None:
    base = history.head("main")
    head = history.feature([*ADDED[:4], "\n", "    \n"])
    merge = history.merge("feature", day(1))
    pr = history.pull_request(head=head, base=base, merged_at=day(1), merge_commit=merge)
    result = label(pr, mirror)
    assert result.evidence["lines_added"] == 4
    assert result.evidence["lines"]["whitespace_only_not_counted"] == 2
    assert result.evidence["lines"]["counted"] == {"app.txt": "9-12"}


def test_a_squash_merge(history: History, mirror: Mirror) -> None:
    base = history.head("main")
    head = history.feature()
    squash = history.squash("feature", day(1))
    pr = history.pull_request(head=head, base=base, merged_at=day(1), merge_commit=squash)
    later(history, 20, {"app.txt": BASE_FILE + "".join(ADDED[:8])})
    later(history, 40)
    result = label(pr, mirror)
    assert result.evidence["change_commits"] == [squash]
    assert result.survival == 0.8
    assert result.label is GoldLabel.ACCEPTED  # 0.8 meets the threshold


def test_a_rebase_merge_counts_every_replayed_commit(history: History, mirror: Mirror) -> None:
    base = history.head("main")
    history.checkout("feature", new=True)
    history.commit({"app.txt": BASE_FILE + "".join(ADDED[:5])}, "first half", day(0))
    head = history.commit({"app.txt": BASE_FILE + "".join(ADDED)}, "second half", day(0.5))
    history.checkout("main")
    later(history, 0.7)  # main moved on, so the replayed commits are new commits
    history.git("cherry-pick", f"{base}..{head}", at=day(1))
    tip = history.head()
    pr = history.pull_request(head=head, base=base, merged_at=day(1), merge_commit=tip)
    result = label(pr, mirror)
    assert len(result.evidence["change_commits"]) == 2
    assert result.evidence["lines_added"] == 10
    assert result.survival == 1.0


def test_the_merge_commit_is_found_from_the_head_when_unknown(
    history: History, mirror: Mirror
) -> None:
    pr = merged(history)
    later(history, 40)
    unknown = dataclasses.replace(pr, merge_commit_sha=None)
    assert label(unknown, mirror).evidence["merge_commit"] == pr.merge_commit_sha


def test_a_repository_that_cannot_be_cloned_is_an_infrastructure_error(
    history: History, mirror: Mirror, tmp_path: Path
) -> None:
    pr = merged(history)
    gone = dataclasses.replace(pr, clone_url=str(tmp_path / "missing"))
    with pytest.raises(RepositoryError, match="cannot clone"):
        label(gone, mirror)


# -- windows the history at hand does not cover ------------------------------------------


def in_place(url: str) -> Path:
    """Read the repository where it is, as ``mine gold --git PATH`` does: no fetch made."""
    return Path(url) / ".git"


def test_a_clone_whose_tip_is_before_the_window_end_is_pending(history: History) -> None:
    """On day 60 by the clock, but the clone stops on day 10: the window is not known."""
    pr = merged(history)
    tip = later(history, 10)
    result = label(pr, in_place)
    assert result.label is GoldLabel.PENDING
    assert result.survival is None
    assert result.evidence["history_tip"] == tip
    assert result.evidence["history_tip_at"] == day(10).isoformat()
    assert result.evidence["fetched_at"] is None
    reason, end = result.evidence["reason"], day(31).isoformat()
    assert reason.startswith(f"the history at hand ends before the window does ({end})")
    assert "no fetch time recorded" in reason
    assert reason.endswith("fetch the repository and label again")
    closing = later(history, 40)
    again = label(pr, in_place)
    assert again.label is GoldLabel.ACCEPTED
    assert again.evidence["window_closed_by"] == {"commit": closing, "at": day(40).isoformat()}


def test_a_fetch_recorded_after_the_window_end_closes_a_quiet_window(history: History) -> None:
    pr = merged(history)
    git_dir = history.path / ".git"
    record_fetch_time(git_dir, day(30))
    early = label(pr, in_place)
    assert early.label is GoldLabel.PENDING
    assert f"last fetched {day(30).isoformat()}" in early.evidence["reason"]
    record_fetch_time(git_dir, day(31))
    result = label(pr, in_place)
    assert result.label is GoldLabel.ACCEPTED
    assert result.evidence["window_closed_by"] == {"fetched_at": day(31).isoformat()}
    assert result.evidence["state_commit"] == pr.merge_commit_sha


def test_a_mirror_records_when_its_fetch_began(history: History, tmp_path: Path) -> None:
    cache = MirrorCache(tmp_path / "mirrors", clock=FakeClock(day(35)))
    assert fetch_time(cache.mirror(str(history.path))) == day(35)
    assert fetch_time(history.path / ".git") is None


def test_a_deletion_undone_by_hand_is_rejected(history: History) -> None:
    """The change only deletes a file; a later commit brings it back, with no revert
    message: the change's diff backwards."""
    old = "".join(f"old helper line {i}, kept for callers of the old API\n" for i in range(6))
    history.commit({"old.txt": old}, "add the old helper", day(-5))
    base = history.head("main")
    history.checkout("feature", new=True)
    head = history.commit({"old.txt": None}, "drop the old helper", day(0))
    history.checkout("main")
    merge = history.merge("feature", day(1))
    pr = history.pull_request(head=head, base=base, merged_at=day(1), merge_commit=merge)
    restored = later(history, 12, {"old.txt": old})
    later(history, 40)
    result = label(pr, in_place)
    assert result.label is GoldLabel.REJECTED
    assert result.evidence["revert"] == {
        "sha": restored,
        "how": "reverse diff",
        "at": day(12).isoformat(),
    }


def test_a_deleted_file_brought_back_different_is_no_revert(history: History) -> None:
    old = "".join(f"old helper line {i}, kept for callers of the old API\n" for i in range(6))
    history.commit({"old.txt": old}, "add the old helper", day(-5))
    base = history.head("main")
    history.checkout("feature", new=True)
    head = history.commit({"old.txt": None}, "drop the old helper", day(0))
    history.checkout("main")
    merge = history.merge("feature", day(1))
    pr = history.pull_request(head=head, base=base, merged_at=day(1), merge_commit=merge)
    later(history, 12, {"old.txt": "a new helper, written afresh\n"})
    later(history, 40)
    result = label(pr, in_place)
    assert (result.label, result.evidence["revert"]) == (GoldLabel.ACCEPTED, None)


def test_a_root_commit_is_refused_as_no_change(history: History) -> None:
    root = history.head("main")
    later(history, 40)
    change = MergedChange("refs/heads/main", root, day(-10), MergedAtSource.COMMIT_LIST)
    with pytest.raises(RepositoryError, match=f"{root} is a root commit .* no change to label"):
        label_merged(history.path / ".git", change, now=day(60), policy=SurvivalPolicy())
