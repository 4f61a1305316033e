"""Where a commit landed on the default branch's first-parent line."""

from __future__ import annotations

from pathlib import Path

from migration_evals.miners.history import landing_commit
from tests.conftest import run_git


def _commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    run_git(repo, "add", name)
    run_git(repo, "commit", "-q", "-m", name)
    return run_git(repo, "rev-parse", "HEAD")


def test_every_commit_of_a_merged_branch_landed_with_its_merge(tmp_path: Path) -> None:
    """Not only the branch's last commit: its first one too, which a first-parent walk
    never visits on its way to the merge."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, "base")
    run_git(repo, "checkout", "-q", "-b", "topic")
    branch = [_commit(repo, f"topic{i}") for i in range(3)]
    run_git(repo, "checkout", "-q", "main")
    beside = _commit(repo, "beside")  # on the line while the branch was open
    run_git(repo, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    merge = run_git(repo, "rev-parse", "HEAD")
    after = _commit(repo, "after")
    git_dir = repo / ".git"
    assert [landing_commit(git_dir, "main", sha) for sha in branch] == [merge] * 3
    assert landing_commit(git_dir, "main", beside) == beside
    assert landing_commit(git_dir, "main", base) == base
    assert landing_commit(git_dir, "main", after) == after
