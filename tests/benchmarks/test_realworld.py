"""The real-world benchmark's own mechanics, offline."""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchmarks.realworld import trimmed_repo
from tests.conftest import RepoFactory


def _show(git_dir: Path, what: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", what], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_a_depth_one_copy_left_half_made_is_made_again(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, commit = make_repo({"pom.xml": "<project/>\n"})
    dest = tmp_path / "copies" / "o+r"
    # What a fetch killed part-way leaves: a bare repository with no ref to the commit.
    subprocess.run(["git", "init", "-q", "--bare", str(dest)], check=True)
    assert trimmed_repo(repo / ".git", commit, dest) == dest
    assert _show(dest, "base:pom.xml") == "<project/>\n"
    assert not [p for p in dest.parent.iterdir() if p.name.startswith(".")]  # no work left
    # A finished copy is kept as it is.
    marker = dest / "kept"
    marker.write_text("")
    assert trimmed_repo(repo / ".git", commit, dest) == dest
    assert marker.exists()
