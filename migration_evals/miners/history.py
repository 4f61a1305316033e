"""Reading what became of a merged pull request from the default branch's git history.

Three questions, each answered with plain git so a reader can repeat it by hand:

* **Which commits are the PR's?** For a merge commit, everything it brought in
  (``M --not M^1``). For a squash, the squashed commit. For a rebase merge, the run of
  commits ending at ``M`` whose patch-ids match the PR's own commits.
* **Was it reverted?** A later commit whose message carries git's ``This reverts commit
  <sha>`` for one of those commits, or whose diff on the PR's files is the PR's diff
  reversed (same ``git patch-id``, so line numbers and whitespace do not matter).
* **Where did the branch stand at the window's end?** The last first-parent commit at
  or before that moment (``state_at``): on a quiet branch, the merge itself. The first
  commit that landed after it, if the history at hand has one, shows the moment is past.
* **Where did a commit land?** Itself, when it is on the branch's first-parent line;
  otherwise the merge that brought it in (``landing_commit``).

How much of the change survived is ``migration_evals.miners.lines``'s question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from migration_evals.core.errors import RepositoryError
from migration_evals.core.git import git

__all__ = [
    "BranchState",
    "LandedPR",
    "Revert",
    "RevertKind",
    "commit_time",
    "find_revert",
    "git_text",
    "is_ancestor",
    "landed_pr",
    "landing_commit",
    "locate_merge",
    "merge_base",
    "state_at",
]

_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")


def git_text(git_dir: Path, *args: str, input: bytes | None = None) -> str:
    """The standard output of ``git --git-dir git_dir args``, decoded leniently."""
    done = git(["--git-dir", str(git_dir), *args], input=input)
    return done.stdout.decode("utf-8", "replace")


def _has_commit(git_dir: Path, sha: str | None) -> bool:
    if not sha:
        return False
    done = git(["--git-dir", str(git_dir), "cat-file", "-e", f"{sha}^{{commit}}"], check=False)
    return done.returncode == 0


def is_ancestor(git_dir: Path, ancestor: str, descendant: str) -> bool:
    args = ["--git-dir", str(git_dir), "merge-base", "--is-ancestor", ancestor, descendant]
    return git(args, check=False).returncode == 0


def commit_time(git_dir: Path, rev: str) -> datetime:
    """The committer date of ``rev``: when it landed where it is."""
    return datetime.fromisoformat(git_text(git_dir, "show", "-s", "--format=%cI", rev).strip())


def _first_parent_descendants(git_dir: Path, sha: str, tip: str) -> list[str]:
    """The commits of ``tip``'s first-parent line that contain ``sha``, oldest first.

    Not ``rev-list --first-parent --ancestry-path``: that decides descent over the commits
    it walks, and a first-parent walk never visits a merged branch's own commits, so a
    commit that is not the branch's last would have no descendant at all. Containing
    ``sha`` is monotonic along the line (each commit holds its first parent), so the
    oldest such commit is found by bisection."""
    line = git_text(git_dir, "rev-list", "--first-parent", f"^{sha}", tip).split()
    low, high = 0, len(line)  # line[:low] contain sha; line[high:] do not
    while low < high:
        middle = (low + high) // 2
        if is_ancestor(git_dir, sha, line[middle]):
            low = middle + 1
        else:
            high = middle
    return list(reversed(line[:low]))


def landing_commit(git_dir: Path, tip: str, sha: str) -> str:
    """The commit of ``tip``'s first-parent line with which ``sha`` (an ancestor) landed.

    ``sha`` itself when it is on that line (``tip`` is it, or the next commit there has it
    as first parent); otherwise the oldest first-parent commit containing it: the merge
    that brought in the branch it was made on.
    """
    later = _first_parent_descendants(git_dir, sha, tip)
    if not later or _parents(git_dir, later[0])[:1] == [sha]:
        return sha
    return later[0]


def locate_merge(git_dir: Path, tip: str, merge_commit: str | None, head_sha: str) -> str:
    """The commit with which the PR landed on the branch ``tip`` names.

    GitHub's ``merge_commit_sha`` when it is on the branch; otherwise the oldest
    first-parent commit of the branch that contains the PR's head (a merge commit).
    """
    known = merge_commit is not None and _has_commit(git_dir, merge_commit)
    if known and merge_commit and is_ancestor(git_dir, merge_commit, tip):
        return merge_commit
    if _has_commit(git_dir, head_sha):
        landed = _first_parent_descendants(git_dir, head_sha, tip)
        if landed:
            return landed[0]
    raise RepositoryError(
        f"cannot find where the pull request landed on {tip} "
        f"(merge commit {merge_commit or 'unknown'}, head {head_sha})"
    )


@dataclass(frozen=True, slots=True)
class LandedPR:
    """A PR as it sits on the default branch: its commits and the branch just before it."""

    merge_commit: str
    before: str
    commits: frozenset[str]
    files: tuple[str, ...]  # paths (at the merge commit) the PR added or changed
    renamed_from: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # new -> old


def _parents(git_dir: Path, rev: str) -> list[str]:
    return git_text(git_dir, "rev-list", "--parents", "-n", "1", rev).split()[1:]


def _patch_ids(git_dir: Path, log_args: Sequence[str]) -> list[tuple[str, str]]:
    """``(patch_id, commit)`` for every commit ``git log -p log_args`` shows, in its order."""
    patches = git(["--git-dir", str(git_dir), "log", "-p", "--no-color", *log_args]).stdout
    ids = git_text(git_dir, "patch-id", "--stable", input=patches)
    return [(p, c) for p, c in (line.split() for line in ids.splitlines())]


def _rebased_run(git_dir: Path, merge: str, head_sha: str) -> list[str]:
    """The commits ending at ``merge`` (first parents) that replay the PR's own commits."""
    if not _has_commit(git_dir, head_sha):
        return [merge]
    own = {pid for pid, _ in _patch_ids(git_dir, ["--no-merges", head_sha, "--not", merge])}
    run: list[str] = []
    limit = str(max(len(own), 1))
    for pid, commit in _patch_ids(git_dir, ["--first-parent", "-n", limit, merge]):
        if pid not in own:
            break
        run.append(commit)
    return run or [merge]


def _root_commit(sha: str) -> str:
    return (
        f"{sha} is a root commit (it starts the history, with no parent): there is no "
        "branch before it to compare with, so it is no change to label"
    )


def landed_pr(git_dir: Path, merge: str, head_sha: str) -> LandedPR:
    """The PR's commits on the branch, however it was merged (merge, squash or rebase)."""
    parents = _parents(git_dir, merge)
    if not parents:
        raise RepositoryError(_root_commit(merge))
    if len(parents) > 1:
        commits = git_text(git_dir, "rev-list", merge, "--not", parents[0]).split()
        before = parents[0]
    else:
        commits = _rebased_run(git_dir, merge, head_sha)
        oldest = _parents(git_dir, commits[-1])
        if not oldest:
            raise RepositoryError(_root_commit(commits[-1]))
        before = oldest[0]
    files, renamed_from = _changed_files(git_dir, before, merge)
    return LandedPR(merge, before, frozenset(commits), files, renamed_from)


def _changed_files(
    git_dir: Path, before: str, after: str
) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Paths added or changed from ``before`` to ``after``, and the old name of each rename."""
    fields = git_text(
        git_dir, "diff", "--name-status", "-M", "--diff-filter=ACMR", "-z", before, after
    ).split("\0")
    files: list[str] = []
    renamed_from: dict[str, tuple[str, ...]] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status[0] in "RC":
            old, new = fields[index + 1], fields[index + 2]
            renamed_from[new] = (old,)
            files.append(new)
            index += 3
        else:
            files.append(fields[index + 1])
            index += 2
    return tuple(files), renamed_from


@dataclass(frozen=True, slots=True)
class BranchState:
    """The branch as it stood at a moment: its newest commit then, and that commit's date;
    and the first commit that landed after the moment, when the history at hand has one."""

    commit: str
    at: datetime
    landed_after: tuple[str, datetime] | None = None


def state_at(git_dir: Path, tip: str, merge: str, moment: datetime) -> BranchState:
    """The last commit on ``tip``'s first-parent history at or before ``moment``, from ``merge`` on.

    The walk starts at the merge (nothing landed since: the merge itself is the state) and
    stops at the first commit that landed after ``moment`` (kept as ``landed_after``); a
    later commit with an older date (clock skew, a rebase) cannot pull the state past
    that point.
    """
    if not is_ancestor(git_dir, merge, tip):
        raise RepositoryError(
            f"{tip} does not contain merge commit {merge} (history rewritten?); not labelling"
        )
    state = BranchState(merge, commit_time(git_dir, merge))
    listing = git_text(
        git_dir,
        "log",
        "--first-parent",
        "--ancestry-path",
        "--reverse",
        "--format=%H %cI",
        f"{merge}..{tip}",
    ).splitlines()
    for line in listing:
        sha, when = line.split(" ", 1)
        landed = datetime.fromisoformat(when)
        if landed > moment:
            return BranchState(state.commit, state.at, (sha, landed))
        state = BranchState(sha, landed)
    return state


class RevertKind(StrEnum):
    TRAILER = "revert trailer"  # "This reverts commit <sha>." naming one of the PR's commits
    REVERSE_DIFF = "reverse diff"  # the PR's diff applied backwards


@dataclass(frozen=True, slots=True)
class Revert:
    sha: str
    kind: RevertKind
    at: datetime


def _by_trailer(git_dir: Path, pr: LandedPR, until: str) -> str | None:
    log = git_text(
        git_dir, "log", "--reverse", "--format=%H%x00%B%x1e", f"{pr.merge_commit}..{until}"
    )
    for entry in log.split("\x1e"):
        sha, _, message = entry.strip().partition("\0")
        for named in _REVERTS.findall(message):
            if any(commit.startswith(named) for commit in pr.commits):
                return sha
    return None


def _patch_id(git_dir: Path, diff_args: Sequence[str]) -> str | None:
    diff = git(["--git-dir", str(git_dir), "diff", "--no-color", *diff_args]).stdout
    if not diff.strip():
        return None
    out = git_text(git_dir, "patch-id", "--stable", input=diff).split()
    return out[0] if out else None


def _by_reverse_diff(git_dir: Path, pr: LandedPR, until: str) -> str | None:
    """A commit whose whole diff is the PR's diff backwards.

    Whole diffs, not diffs cut down to the PR's files: moving the PR's lines into another
    file removes them from the PR's files too, and that is not a revert.
    """
    backwards = _patch_id(git_dir, [pr.merge_commit, pr.before])
    if backwards is None:
        return None
    # Only commits that touch a path the PR touched can undo it; the rest are not diffed.
    # Every path counts, deleted ones included: undoing a deletion brings the file back.
    touched = git_text(
        git_dir, "diff", "--name-only", "--no-renames", "-z", pr.before, pr.merge_commit
    ).split("\0")
    candidates = git_text(
        git_dir,
        "--literal-pathspecs",  # a file named like a pathspec (":x", "*.go") is a name
        "rev-list",
        "--reverse",
        f"{pr.merge_commit}..{until}",
        "--",
        *(path for path in touched if path),
    ).split()
    for sha in candidates:
        if _patch_id(git_dir, [f"{sha}^1", sha]) == backwards:
            return sha
    return None


def find_revert(git_dir: Path, pr: LandedPR, until: str) -> Revert | None:
    """The first commit after the merge, up to ``until``, that reverts the PR."""
    for kind, finder in (
        (RevertKind.TRAILER, _by_trailer),
        (RevertKind.REVERSE_DIFF, _by_reverse_diff),
    ):
        sha = finder(git_dir, pr, until)
        if sha is not None:
            return Revert(sha, kind, commit_time(git_dir, sha))
    return None


def merge_base(git_dir: Path, base_sha: str, head_sha: str) -> str | None:
    """Where the PR's branch forked from its base: the commit its diff applies to."""
    if not (_has_commit(git_dir, base_sha) and _has_commit(git_dir, head_sha)):
        return None
    done = git(["--git-dir", str(git_dir), "merge-base", base_sha, head_sha], check=False)
    found = done.stdout.decode().strip()
    return found if done.returncode == 0 and found else None
