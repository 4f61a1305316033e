"""Reading what became of a merged pull request from the default branch's git history.

Three questions, each answered with plain git so a reader can repeat it by hand:

* **Which commits are the PR's?** For a merge commit, everything it brought in
  (``M --not M^1``). For a squash, the squashed commit. For a rebase merge, the run of
  commits ending at ``M`` whose patch-ids match the PR's own commits.
* **Was it reverted?** A later commit whose message carries git's ``This reverts commit
  <sha>`` for one of those commits, or whose diff on the PR's files is the PR's diff
  reversed (same ``git patch-id``, so line numbers and whitespace do not matter).
* **How much of it survived?** ``git blame -w -M -C`` counts the lines still attributed
  to the PR's commits; whitespace-only edits, moved lines and renamed files keep their
  attribution, so a re-indent or a rename is not the change dying.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from core.errors import RepositoryError
from core.git import git

__all__ = [
    "LandedPR",
    "Revert",
    "RevertKind",
    "attributed_lines",
    "commit_time",
    "find_revert",
    "is_ancestor",
    "landed_pr",
    "locate_merge",
    "merge_base",
    "survival_commit",
]

_BLAME_HEADER = re.compile(rb"^([0-9a-f]{40}(?:[0-9a-f]{24})?) \d+ \d+")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")
_BLAME_OPTIONS = ("-w", "-M", "-C")


def _git(git_dir: Path, *args: str, input: bytes | None = None) -> str:
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
    return datetime.fromisoformat(_git(git_dir, "show", "-s", "--format=%cI", rev).strip())


def locate_merge(git_dir: Path, branch: str, merge_commit: str | None, head_sha: str) -> str:
    """The commit with which the PR landed on ``branch``.

    GitHub's ``merge_commit_sha`` when it is on the branch; otherwise the oldest
    first-parent commit of the branch that contains the PR's head (a merge commit).
    """
    tip = f"refs/heads/{branch}"
    known = merge_commit is not None and _has_commit(git_dir, merge_commit)
    if known and merge_commit and is_ancestor(git_dir, merge_commit, tip):
        return merge_commit
    if _has_commit(git_dir, head_sha):
        landed = _git(
            git_dir,
            "rev-list",
            "--first-parent",
            "--ancestry-path",
            "--reverse",
            f"{head_sha}..{tip}",
        ).split()
        if landed:
            return landed[0]
    raise RepositoryError(
        f"cannot find where the pull request landed on {branch} "
        f"(merge commit {merge_commit or 'unknown'}, head {head_sha})"
    )


@dataclass(frozen=True, slots=True)
class LandedPR:
    """A PR as it sits on the default branch: its commits and the branch just before it."""

    merge_commit: str
    before: str
    commits: frozenset[str]
    files: tuple[str, ...]  # paths (at the merge commit) the PR added or changed


def _parents(git_dir: Path, rev: str) -> list[str]:
    return _git(git_dir, "rev-list", "--parents", "-n", "1", rev).split()[1:]


def _patch_ids(git_dir: Path, log_args: Sequence[str]) -> list[tuple[str, str]]:
    """``(patch_id, commit)`` for every commit ``git log -p log_args`` shows, in its order."""
    patches = git(["--git-dir", str(git_dir), "log", "-p", "--no-color", *log_args]).stdout
    ids = _git(git_dir, "patch-id", "--stable", input=patches)
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


def landed_pr(git_dir: Path, merge: str, head_sha: str) -> LandedPR:
    """The PR's commits on the branch, however it was merged (merge, squash or rebase)."""
    parents = _parents(git_dir, merge)
    if not parents:
        raise RepositoryError(f"merge commit {merge} has no parent; cannot isolate the PR")
    if len(parents) > 1:
        commits = _git(git_dir, "rev-list", merge, "--not", parents[0]).split()
        before = parents[0]
    else:
        commits = _rebased_run(git_dir, merge, head_sha)
        oldest = _parents(git_dir, commits[-1])
        if not oldest:
            raise RepositoryError(f"{commits[-1]} has no parent; cannot isolate the PR")
        before = oldest[0]
    files = _git(
        git_dir, "diff", "--name-only", "-M", "--diff-filter=ACMR", "-z", before, merge
    ).split("\0")
    return LandedPR(merge, before, frozenset(commits), tuple(f for f in files if f))


def survival_commit(git_dir: Path, branch: str, not_before: datetime) -> str:
    """The first commit on ``branch`` (first parents) at or after ``not_before``.

    When nothing landed since, the tip is what the branch looked like at that time.
    """
    listing = _git(
        git_dir, "log", "--first-parent", "--reverse", "--format=%H %cI", f"refs/heads/{branch}"
    ).splitlines()
    if not listing:
        raise RepositoryError(f"branch {branch} has no commits")
    for line in listing:
        sha, when = line.split(" ", 1)
        if datetime.fromisoformat(when) >= not_before:
            return sha
    return listing[-1].split(" ", 1)[0]


class RevertKind(StrEnum):
    TRAILER = "revert trailer"  # "This reverts commit <sha>." naming one of the PR's commits
    REVERSE_DIFF = "reverse diff"  # the PR's diff applied backwards


@dataclass(frozen=True, slots=True)
class Revert:
    sha: str
    kind: RevertKind
    at: datetime


def _by_trailer(git_dir: Path, pr: LandedPR, until: str) -> str | None:
    log = _git(git_dir, "log", "--reverse", "--format=%H%x00%B%x1e", f"{pr.merge_commit}..{until}")
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
    out = _git(git_dir, "patch-id", "--stable", input=diff).split()
    return out[0] if out else None


def _by_reverse_diff(git_dir: Path, pr: LandedPR, until: str) -> str | None:
    """A commit whose whole diff is the PR's diff backwards.

    Whole diffs, not diffs cut down to the PR's files: moving the PR's lines into another
    file removes them from the PR's files too, and that is not a revert.
    """
    if not pr.files:
        return None
    backwards = _patch_id(git_dir, [pr.merge_commit, pr.before])
    if backwards is None:
        return None
    # Only commits that touch the PR's files can undo it; the rest are not diffed.
    candidates = _git(
        git_dir, "rev-list", "--reverse", f"{pr.merge_commit}..{until}", "--", *pr.files
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


def _touched(git_dir: Path, since: str, until: str) -> list[set[str]]:
    """Files touched by each commit in ``since..until``, oldest first; a rename gives both
    its old and its new name."""
    log = _git(
        git_dir,
        "log",
        "--reverse",
        "-M",
        "-C",
        "--name-status",
        "--format=%x1e",
        f"{since}..{until}",
    )
    touched = []
    for chunk in log.split("\x1e"):
        # "M\tpath", "A\tpath", "R087\told\tnew", "C100\tfrom\tto"
        paths = {p for line in chunk.splitlines() if line for p in line.split("\t")[1:]}
        if paths:
            touched.append(paths)
    return touched


def _candidate_files(git_dir: Path, pr: LandedPR, at: str) -> list[str]:
    """Where the PR's lines may live at ``at``: its files, and files that took lines from them.

    A file joins when a commit touched it together with a file already in the set, so a
    rename or a move out of the PR's files is followed; only files present at ``at`` count.
    """
    candidates = set(pr.files)
    for files in _touched(git_dir, pr.merge_commit, at):
        if candidates.intersection(files):
            candidates.update(files)
    present = set(_git(git_dir, "ls-tree", "-r", "-z", "--name-only", at).split("\0"))
    return sorted(candidates & present)


def _blamed(git_dir: Path, rev: str, path: str, commits: Iterable[str]) -> int:
    wanted = set(commits)
    out = git(["--git-dir", str(git_dir), "blame", *_BLAME_OPTIONS, "--porcelain", rev, "--", path])
    count = 0
    for line in out.stdout.splitlines():
        match = _BLAME_HEADER.match(line)
        if match and match.group(1).decode() in wanted:
            count += 1
    return count


def attributed_lines(git_dir: Path, pr: LandedPR, at: str) -> int:
    """Lines of the tree at ``at`` that blame (-w -M -C) still attributes to the PR's commits."""
    files = pr.files if at == pr.merge_commit else _candidate_files(git_dir, pr, at)
    return sum(_blamed(git_dir, at, path, pr.commits) for path in files)


def merge_base(git_dir: Path, base_sha: str, head_sha: str) -> str | None:
    """Where the PR's branch forked from its base: the commit its diff applies to."""
    if not (_has_commit(git_dir, base_sha) and _has_commit(git_dir, head_sha)):
        return None
    done = git(["--git-dir", str(git_dir), "merge-base", base_sha, head_sha], check=False)
    found = done.stdout.decode().strip()
    return found if done.returncode == 0 and found else None
