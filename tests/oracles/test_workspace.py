"""Strict apply in a temporary tree: hostile diffs are refused and write nothing outside it."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from core.errors import RepositoryError
from core.model import Changeset
from oracles.diffscreen import ScreenLimits
from oracles.repos import RepoCache
from oracles.workspace import Workspace
from tests.conftest import RepoFactory, diff_of, run_git

LIMITS = ScreenLimits(max_files=20, max_patch_bytes=200_000)
BASE = {"src/app.py": "print('hello')\n", "README": "base\n", "run.sh": "#!/bin/sh\necho hi\n"}


def _changeset(repo: Path, commit: str, patch: str) -> Changeset:
    return Changeset("c", str(repo), commit, patch, "java8-to-17", "gpt-5", date(2020, 1, 1))


def _snapshot_listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def cache(tmp_path: Path) -> RepoCache:
    return RepoCache(tmp_path / "cache")


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Send temporary files to a folder of the test's, so leftovers can be counted."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_good_patch_applies_and_overlays(make_repo: RepoFactory, cache: RepoCache) -> None:
    repo, commit = make_repo(BASE)
    patch = diff_of(repo, {"src/app.py": "print('bye')\n", "README": None, "new/file.txt": "n\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        applied = workspace.apply()
        assert applied.ok, applied.problems
        assert applied.overlay == {
            "src/app.py": b"print('bye')\n",
            "README": None,
            "new/file.txt": b"n\n",
        }
        view = workspace.view()
        assert view.read("src/app.py") == b"print('bye')\n"
        assert view.read_base("src/app.py") == b"print('hello')\n"
        assert sorted(view.files()) == ["new/file.txt", "run.sh", "src/app.py"]
        tree = workspace.materialise()
        assert (tree / "new/file.txt").read_text() == "n\n"
        assert not (tree / "README").exists()


def test_executable_bit_from_the_patch_survives_materialise(
    make_repo: RepoFactory, cache: RepoCache
) -> None:
    repo, commit = make_repo(BASE)
    (repo / "run.sh").chmod(0o755)
    patch = diff_of(repo, {"run.sh": "#!/bin/sh\necho bye\n"})
    assert "new mode 100755" in patch
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        assert workspace.apply().executable == frozenset({"run.sh"})
        assert os.access(workspace.materialise() / "run.sh", os.X_OK)


def test_context_mismatch_fails_with_location(make_repo: RepoFactory, cache: RepoCache) -> None:
    repo, commit = make_repo(BASE)
    patch = diff_of(repo, {"src/app.py": "print('bye')\n"}).replace(
        "-print('hello')", "-print('hullo')"
    )
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        applied = workspace.apply()
    assert not applied.ok
    assert (applied.problems[0].path, applied.problems[0].line) == ("src/app.py", 1)


def test_no_fuzz_a_changed_context_line_fails(make_repo: RepoFactory, cache: RepoCache) -> None:
    lines = "".join(f"line {i}\n" for i in range(30))
    repo, commit = make_repo({"f.txt": lines})
    patch = diff_of(repo, {"f.txt": lines.replace("line 15\n", "line fifteen\n")})
    # GNU patch's default fuzz would still apply this; strict git apply must not.
    fuzzed = patch.replace(" line 13\n", " line thirteen\n")
    assert fuzzed != patch
    with Workspace(cache, _changeset(repo, commit, fuzzed), LIMITS) as workspace:
        applied = workspace.apply()
    assert not applied.ok
    assert applied.problems[0].path == "f.txt"


def test_missing_base_commit_is_an_infrastructure_error(
    make_repo: RepoFactory, cache: RepoCache
) -> None:
    repo, _ = make_repo(BASE)
    workspace = Workspace(cache, _changeset(repo, "f" * 40, "x"), LIMITS)
    with workspace, pytest.raises(RepositoryError, match="does not exist"):
        _ = workspace.base


def test_unreachable_repo_is_an_infrastructure_error(tmp_path: Path, cache: RepoCache) -> None:
    changeset = _changeset(tmp_path / "no-such-repo", "a" * 40, "x")
    workspace = Workspace(cache, changeset, LIMITS)
    with workspace, pytest.raises(RepositoryError, match="cannot clone"):
        _ = workspace.base


def _new_file(path: str, body: str = "pwned") -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{body}\n"
    )


HOSTILE = {
    "absolute path": lambda out: _new_file(str(out / "abs-pwned")),
    "dot-dot": lambda out: _new_file(
        "../../../../../../../../" + str(out / "dd-pwned").lstrip("/")
    ),
    "git dir": lambda out: _new_file(".git/hooks/post-checkout"),
    "symlink": lambda out: (
        "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n"
        f"@@ -0,0 +1 @@\n+{out}\n\\ No newline at end of file\n"
    ),
    "submodule": lambda out: (
        "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n"
        "+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n"
    ),
    "binary": lambda out: (
        "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 4\nLcmZQzWMT#Y01f~L\n\n"
    ),
    "through base symlink": lambda out: _new_file("link/pwned.txt"),
    "modify base symlink": lambda out: (
        "diff --git a/link b/link\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-x\n+y\n"
    ),
    "too many files": lambda out: "".join(_new_file(f"f{i}") for i in range(25)),
    "too many bytes": lambda out: _new_file("big.txt", "x" * 300_000),
    "corrupt": lambda out: (
        "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n"
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_diffs_are_refused_and_write_nothing_outside(
    name: str, make_repo: RepoFactory, cache: RepoCache, tmp_path: Path, private_tmp: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo, commit = make_repo(BASE)
    os.symlink(outside, repo / "link")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "with link")
    commit = run_git(repo, "rev-parse", "HEAD")
    patch = HOSTILE[name](outside)
    workspace = Workspace(cache, _changeset(repo, commit, patch), LIMITS)
    snapshot_before = _snapshot_listing(cache.snapshot(str(repo), commit))
    repo_before = _snapshot_listing(repo)
    applied = workspace.apply()
    workspace.close()
    assert not applied.ok, f"{name} was not refused"
    assert list(outside.iterdir()) == []
    assert _snapshot_listing(cache.snapshot(str(repo), commit)) == snapshot_before
    assert _snapshot_listing(repo) == repo_before
    assert list(private_tmp.iterdir()) == [], "temporary files were left behind"
    assert not list(Path("/").glob("abs-pwned"))


STAGING_REFUSALS = {
    "through base symlink": (
        _new_file("link/pwned.txt"),
        "path is or goes through a symbolic link in the base tree",
    ),
    "modify base symlink": (
        "diff --git a/link b/link\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-x\n+y\n",
        "path is or goes through a symbolic link in the base tree",
    ),
    "directory": (
        "diff --git a/src b/src\n--- a/src\n+++ b/src\n@@ -1 +1 @@\n-x\n+y\n",
        "path is a directory in the base tree",
    ),
}


@pytest.mark.parametrize("name", sorted(STAGING_REFUSALS))
def test_paths_that_are_not_plain_base_files_are_refused_with_the_reason(
    name: str, make_repo: RepoFactory, cache: RepoCache, tmp_path: Path
) -> None:
    repo, _ = make_repo(BASE)
    os.symlink(tmp_path, repo / "link")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "with link")
    commit = run_git(repo, "rev-parse", "HEAD")
    patch, reason = STAGING_REFUSALS[name]
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        applied = workspace.apply()
    assert [(p.message, p.path) for p in applied.problems][:1] == [
        (reason, patch.split(" b/", 1)[1].split("\n", 1)[0])
    ]


def test_snapshot_and_clone_are_cached(make_repo: RepoFactory, cache: RepoCache) -> None:
    repo, commit = make_repo(BASE)
    first = cache.snapshot(str(repo), commit)
    marker = first / "marker"
    marker.write_text("still here")
    assert cache.snapshot(str(repo), commit) == first
    assert marker.exists()
    assert not (cache.git_dir(str(repo)) / "hooks" / "post-checkout").exists()


def test_git_apply_never_reaches_a_repository_around_the_temporary_directory(
    make_repo: RepoFactory, cache: RepoCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    outer, _ = make_repo({"outer.txt": "outer\n"})
    inside = outer / "scratch"
    inside.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(inside))
    repo, commit = make_repo(BASE)
    patch = diff_of(repo, {"src/app.py": "print('bye')\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        assert workspace.apply().ok
    assert run_git(outer, "status", "--porcelain") == ""
    assert list(inside.iterdir()) == []
