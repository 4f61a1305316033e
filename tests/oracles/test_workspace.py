"""Strict apply in a temporary tree: hostile diffs are refused and write nothing outside it."""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO

import pytest

from migration_evals.core.errors import RepositoryError
from migration_evals.core.model import Changeset
from migration_evals.oracles.diffscreen import ScreenLimits
from migration_evals.oracles.folders import remove_tree
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.workspace import Workspace, remove_run_workspaces, workspace_prefix
from tests.conftest import (
    GIT_IDENTITY,
    PAST_PATH_MAX,
    PAST_RECURSION,
    RepoFactory,
    TrialBases,
    commit_all,
    deep_chain,
    diff_of,
    init_repository,
    resolve_ref,
    run_git,
    write_files,
)

LIMITS = ScreenLimits(max_files=20, max_patch_bytes=200_000)
BASE = {"src/app.py": "print('hello')\n", "README": "base\n", "run.sh": "#!/bin/sh\necho hi\n"}


def _changeset(repo: Path, commit: str, patch: str) -> Changeset:
    return Changeset("c", str(repo), commit, patch, "java8-to-17", "gpt-5", date(2020, 1, 1))


def _snapshot_listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def cache(tmp_path: Path) -> RepoCache:
    return RepoCache(tmp_path / "cache")


SharedBase = tuple[Path, str, RepoCache]


@pytest.fixture
def shared_base(trial_bases: TrialBases) -> SharedBase:
    """``BASE`` committed, and a cache over it, one per worker (``TrialBases``), for the tests
    that only read it (``diff_of`` leaves it as it was); those that change the repository or
    the cache make their own."""
    _, repo, commit = trial_bases.base(BASE)
    return repo, commit, trial_bases.repos


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Send temporary files to a folder of the test's, so leftovers can be counted."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_the_base_files_staged_for_git_are_read_once(
    shared_base: SharedBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, commit, cache = shared_base
    patch = diff_of(repo, {"src/app.py": "print('bye')\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        assert workspace.apply().ok
        view = workspace.view()

        def unread(path: Path) -> bytes:
            raise AssertionError(f"{path} read again")

        monkeypatch.setattr(Path, "read_bytes", unread)
        assert view.read_base("src/app.py") == b"print('hello')\n"


def test_good_patch_applies_and_overlays(shared_base: SharedBase) -> None:
    repo, commit, cache = shared_base
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
        members = _members(workspace.archive(1, 2))
        assert members["new/file.txt"][1] == b"n\n"
        assert "README" not in members
        base = _members(workspace.archive(1, 2, patched=False))
        assert base["README"][1] == BASE["README"].encode()


def _members(archive: IO[bytes]) -> dict[str, tuple[tarfile.TarInfo, bytes | None]]:
    """Every entry of a tree archive, with the content of its regular files."""
    found = {}
    with archive, tarfile.open(fileobj=archive, mode="r|") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isreg() else None
            found[member.name] = (member, handle.read() if handle else None)
    return found


def test_the_archive_gives_every_entry_one_owner_and_its_folders_first(
    shared_base: SharedBase,
) -> None:
    repo, commit, cache = shared_base
    patch = diff_of(repo, {"deep/er/file.txt": "x\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        archive = workspace.archive(65534, 65533)
        names = []
        with archive, tarfile.open(fileobj=archive, mode="r|") as tar:
            for member in tar:
                names.append(member.name)
                assert (member.uid, member.gid) == (65534, 65533)
    # Each folder comes before what is in it, so the engine never makes one root-owned.
    assert names.index("deep") < names.index("deep/er") < names.index("deep/er/file.txt")
    assert names.index("src") < names.index("src/app.py")


def test_every_entry_of_the_archive_carries_the_base_commits_date(
    shared_base: SharedBase,
) -> None:
    # As git archive gives a commit's tree: a copy the tests make in the first second of
    # the run still has a time of its own, and two streams of one tree are the same bytes.
    repo, commit, cache = shared_base
    committed = int(run_git(repo, "show", "-s", "--format=%ct", commit))
    patch = diff_of(repo, {"src/app.py": "print('bye')\n", "new/file.txt": "n\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        for patched in (False, True):
            members = _members(workspace.archive(0, 0, patched=patched))
            assert {member.mtime for member, _ in members.values()} == {committed}
        with workspace.archive(0, 0) as first, workspace.archive(0, 0) as second:
            assert first.read() == second.read()


def test_the_archive_of_a_folder_has_it_as_root(shared_base: SharedBase) -> None:
    repo, commit, cache = shared_base
    patch = diff_of(repo, {"src/app.py": "print('bye')\n"})
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        members = _members(workspace.archive(0, 0, subdir="src"))
    assert set(members) == {"app.py"}
    assert members["app.py"][1] == b"print('bye')\n"
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        # "." is the root, as a build command names it.
        assert set(_members(workspace.archive(0, 0, subdir="."))) == set(
            _members(workspace.archive(0, 0))
        )


def test_executable_bit_from_the_patch_survives_the_archive(
    make_repo: RepoFactory, cache: RepoCache
) -> None:
    repo, commit = make_repo(BASE)
    (repo / "run.sh").chmod(0o755)
    patch = diff_of(repo, {"run.sh": "#!/bin/sh\necho bye\n"})
    assert "new mode 100755" in patch
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        assert workspace.apply().executable == frozenset({"run.sh"})
        member, _ = _members(workspace.archive(0, 0))["run.sh"]
        assert member.mode & 0o111


def test_context_mismatch_fails_with_location(shared_base: SharedBase) -> None:
    repo, commit, cache = shared_base
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


def test_missing_base_commit_is_an_infrastructure_error(shared_base: SharedBase) -> None:
    repo, _, cache = shared_base
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


@dataclass(frozen=True)
class LinkedBase:
    """``BASE`` and a link ``link`` to the folder ``outside``, committed, with a cache."""

    repo: Path
    commit: str
    outside: Path
    cache: RepoCache


@pytest.fixture(scope="module")
def linked_base(tmp_path_factory: pytest.TempPathFactory) -> LinkedBase:
    """One repository and clone for the hostile diffs: each test checks that nothing was
    written outside, to the repository or to its snapshot, so each finds them unchanged."""
    folder = tmp_path_factory.mktemp("linked-base")
    outside = folder / "outside"
    outside.mkdir()
    repo = folder / "repo"
    init_repository(repo)
    write_files(repo, BASE)
    os.symlink(outside, repo / "link")
    return LinkedBase(repo, commit_all(repo, "with link"), outside, RepoCache(folder / "cache"))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_diffs_are_refused_and_write_nothing_outside(
    name: str, linked_base: LinkedBase, private_tmp: Path
) -> None:
    repo, commit, outside, cache = (
        linked_base.repo,
        linked_base.commit,
        linked_base.outside,
        linked_base.cache,
    )
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
    commit = commit_all(repo, "with link")
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


def test_the_base_commits_date_is_asked_of_git_once_and_kept_beside_its_snapshot(
    make_repo: RepoFactory, cache: RepoCache
) -> None:
    repo, commit = make_repo(BASE)
    cache.snapshot(str(repo), commit)
    date = run_git(repo, "show", "-s", "--format=%cI", commit)
    assert cache.committed_at(str(repo), commit) == date
    # Another cache over the same folder answers with neither the clone nor the repository.
    remove_tree(cache.git_dir(str(repo)))
    remove_tree(repo)
    assert RepoCache(cache.root).committed_at(str(repo), commit) == date


def test_a_base_path_spelled_unlike_the_listing_gets_the_full_checks(
    shared_base: SharedBase,
) -> None:
    repo, commit, cache = shared_base
    with Workspace(cache, _changeset(repo, commit, diff_of(repo, {"README": "x\n"})), LIMITS) as ws:
        view = ws.view()
        assert view.read_base("README") == b"base\n"
        assert view.read_base("./src/../README") == b"base\n"
        assert view.read_base("src") is None
        assert view.read_base("src/missing.py") is None
        assert ws.view().reads["README"] == b"base\n"  # one workspace's views share reads


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


@pytest.fixture
def deep_trees(tmp_path: Path) -> Iterator[None]:
    """For tests that leave trees deeper than pytest's own clean-up can remove (it
    recurses): everything under the test's folder is removed with ``remove_tree``."""
    yield
    for child in tmp_path.iterdir():
        remove_tree(child)


@pytest.mark.usefixtures("deep_trees")
def test_a_patch_nesting_deeper_than_python_recurses_applies_and_leaves_nothing(
    shared_base: SharedBase, private_tmp: Path
) -> None:
    repo, commit, cache = shared_base
    deep = "d/" * PAST_RECURSION + "f.txt"
    with Workspace(cache, _changeset(repo, commit, _new_file(deep, "x")), LIMITS) as workspace:
        applied = workspace.apply()
        assert applied.ok, applied.problems
        assert applied.overlay == {deep: b"x\n"}
    assert os.listdir(private_tmp) == []


@pytest.mark.usefixtures("deep_trees")
def test_closing_a_workspace_removes_a_deep_leftover_tree(
    shared_base: SharedBase, private_tmp: Path
) -> None:
    repo, commit, cache = shared_base
    workspace = Workspace(cache, _changeset(repo, commit, diff_of(repo, {"README": "x\n"})), LIMITS)
    with workspace:
        leftover = workspace._mkdtemp("me-apply-")
        deep_chain(leftover, PAST_PATH_MAX)
    assert os.listdir(private_tmp) == []


def test_a_snapshot_read_never_goes_through_a_link(
    make_repo: RepoFactory, cache: RepoCache, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    repo, commit = make_repo(BASE)
    (repo / "out").symlink_to(outside)
    commit = commit_all(repo, "a link out")
    with Workspace(cache, _changeset(repo, commit, diff_of(repo, {"README": "x\n"})), LIMITS) as ws:
        view = ws.view()
        assert view.read_base("out/secret") is None
        assert view.read("out/secret") is None
        assert view.read_base("README") == b"base\n"


def _commit_in_one_pack(repo: Path, parent: str, path: str, content: str) -> str:
    """A commit adding ``path`` to ``parent`` on main, written by ``git fast-import`` into one
    pack (the work tree is left as it was): ``git commit`` writes a loose object for each
    folder above the file, and creating those files cost more than the rest of the test."""
    who = f"{GIT_IDENTITY['GIT_AUTHOR_NAME']} <{GIT_IDENTITY['GIT_AUTHOR_EMAIL']}> 1704067200 +0000"
    message = "a deep file\n"
    stream = (
        f"commit refs/heads/main\nauthor {who}\ncommitter {who}\n"
        f"data {len(message)}\n{message}from {parent}\n"
        f"M 100644 inline {path}\ndata {len(content)}\n{content}\n"
    )
    run_git(repo, "fast-import", "--quiet", input=stream)
    return resolve_ref(repo, "main")


@pytest.mark.usefixtures("deep_trees")
def test_a_base_file_deeper_than_python_recurses_is_staged_and_patched(
    make_repo: RepoFactory, cache: RepoCache, private_tmp: Path
) -> None:
    repo, base = make_repo(BASE)
    deep = "d/" * PAST_RECURSION + "f.txt"
    commit = _commit_in_one_pack(repo, base, deep, "x\n")
    patch = f"diff --git a/{deep} b/{deep}\n--- a/{deep}\n+++ b/{deep}\n@@ -1 +1 @@\n-x\n+patched\n"
    with Workspace(cache, _changeset(repo, commit, patch), LIMITS) as workspace:
        applied = workspace.apply()
        assert applied.ok, applied.problems
        assert applied.overlay == {deep: b"patched\n"}
    assert os.listdir(private_tmp) == []


@pytest.mark.usefixtures("deep_trees")
def test_a_workspace_left_by_an_exception_is_removed_too(
    shared_base: SharedBase, private_tmp: Path
) -> None:
    repo, commit, cache = shared_base
    changeset = _changeset(repo, commit, diff_of(repo, {"README": "x\n"}))

    def crash() -> None:
        with Workspace(cache, changeset, LIMITS) as workspace:
            deep_chain(workspace._mkdtemp("me-apply-"), PAST_RECURSION)
            raise RuntimeError("a tier crashed")

    with pytest.raises(RuntimeError):
        crash()
    assert os.listdir(private_tmp) == []


def test_a_runs_leftover_apply_trees_are_found_by_name_and_removed(tmp_path: Path) -> None:
    mine = tmp_path / (workspace_prefix("r-1") + "abc")
    (mine / "deep" / "er").mkdir(parents=True)
    (mine / "deep" / "er" / "f.java").write_text("class F {}")
    other = tmp_path / (workspace_prefix("r-10") + "abc")  # another run, a longer id
    other.mkdir()
    assert remove_run_workspaces("r-1", tmp_path) == [mine]
    assert not mine.exists() and other.exists()


def test_a_run_id_cannot_reach_outside_the_scratch_folder() -> None:
    assert workspace_prefix("../x*") == "me-apply-.._x_-"
    assert "/" not in workspace_prefix("a/b")
