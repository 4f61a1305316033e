"""The repository cache: one bare clone per repository, one read-only snapshot per commit.

Every repository is cloned (``--no-local`` even for local paths, so its config and hooks
never come along) into ``<cache>/repos``. A snapshot is the plain checkout of one commit in
``<cache>/snapshots``, created once and only read afterwards; per-trial work happens in
temporary directories that copy from it. Locks are per repository and hold across threads
and processes, so parallel trials and several workers can share one cache.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from migration_evals.core.errors import RepositoryError
from migration_evals.core.git import git
from migration_evals.core.locks import NamedLocks
from migration_evals.oracles.folders import Walk, remove_small_tree

__all__ = ["RepoCache"]

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_CHECKOUT_ENV = {"GIT_LFS_SKIP_SMUDGE": "1"}


def _repo_key(repo: str) -> str:
    tail = _SAFE_NAME.sub("-", repo.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{hashlib.sha256(repo.encode()).hexdigest()[:16]}-{tail}"


class RepoCache:
    """Clones and snapshots under ``root``; safe to share between threads and processes."""

    def __init__(self, root: Path, *, timeout_s: float = 600.0) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self._verified: set[tuple[str, str]] = set()
        self._listings: dict[Path, tuple[str, ...]] = {}
        self._listed: dict[Path, frozenset[str]] = {}
        self._snapshots: dict[tuple[str, str], Path] = {}
        self._dates: dict[tuple[str, str], str] = {}
        self._locks = NamedLocks(root / "locks")

    def _locked(self, name: str) -> AbstractContextManager[None]:
        return self._locks.held(name)

    def git_dir(self, repo: str) -> Path:
        return self.root / "repos" / f"{_repo_key(repo)}.git"

    def snapshot_dir(self, repo: str, commit: str) -> Path:
        return self.root / "snapshots" / _repo_key(repo) / commit

    def ensure_commit(self, repo: str, commit: str) -> Path:
        """Clone ``repo`` if needed and make sure ``commit`` is present; return the git dir.

        The one git call that finds the commit also reads its committer date, which the
        snapshot keeps beside it (``committed_at``)."""
        if (repo, commit) in self._verified:
            return self.git_dir(repo)
        with self._locked(_repo_key(repo)):
            git_dir = self.git_dir(repo)
            if not git_dir.exists():
                self._clone(repo, git_dir)
            found = self._commit_date(git_dir, commit)
            if found is None:
                self._fetch(git_dir, commit)
                found = self._commit_date(git_dir, commit)
                if found is None:
                    raise RepositoryError(f"base commit {commit} does not exist in {repo}")
        self._dates.setdefault((repo, commit), found)
        self._verified.add((repo, commit))
        return git_dir

    def _clone(self, repo: str, git_dir: Path) -> None:
        git_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=git_dir.parent))
        try:
            git(
                ["clone", "--bare", "--no-local", "--quiet", "--", repo, str(tmp)],
                timeout=self.timeout_s,
            )
            os.replace(tmp, git_dir)
        except RepositoryError as exc:
            raise RepositoryError(f"cannot clone {repo}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _commit_date(self, git_dir: Path, commit: str) -> str | None:
        """The committer date (ISO 8601) of ``commit``, None when the clone lacks it."""
        done = git(
            ["--git-dir", str(git_dir), "show", "-s", "--format=%cI", f"{commit}^{{commit}}"],
            check=False,
        )
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def _fetch(self, git_dir: Path, commit: str) -> None:
        base = ["--git-dir", str(git_dir), "fetch", "--quiet", "origin"]
        by_sha = git([*base, commit], timeout=self.timeout_s, check=False)
        if by_sha.returncode != 0:
            git(
                [*base, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                timeout=self.timeout_s,
                check=False,
            )

    def committed_at(self, repo: str, commit: str) -> str:
        """When ``commit`` was committed (its committer date, ISO 8601): when its tree
        was current on its branch, and so what its authors' builds resolved against.

        Asked of git once per commit, when its snapshot is made, and kept beside it: the
        commit id hashes the committer line, so the date never changes, and every trial
        on the base asks for it."""
        known = self._dates.get((repo, commit))
        if known is not None:
            return known
        kept = self._date_file(repo, commit)
        try:
            found = kept.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            found = ""
        if not found:  # a snapshot made before dates were kept, or none yet
            self.ensure_commit(repo, commit)
            found = self._keep_date(repo, commit)
        self._dates[(repo, commit)] = found
        return found

    def _date_file(self, repo: str, commit: str) -> Path:
        return self.snapshot_dir(repo, commit).with_name(f"{commit}.committed-at")

    def _keep_date(self, repo: str, commit: str) -> str:
        """Write the committer date ``ensure_commit`` read, whole or not at all."""
        found = self._dates[(repo, commit)]
        kept = self._date_file(repo, commit)
        kept.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=".date-", dir=kept.parent)
        with os.fdopen(handle, "w", encoding="ascii") as out:
            out.write(found)
        os.replace(tmp, kept)
        return found

    def snapshot(self, repo: str, commit: str) -> Path:
        """The checked-out tree of ``commit``; created once, then only read."""
        known = self._snapshots.get((repo, commit))
        if known is not None:
            return known
        target = self._make_snapshot(repo, commit)
        self._snapshots[(repo, commit)] = target
        return target

    def _make_snapshot(self, repo: str, commit: str) -> Path:
        target = self.snapshot_dir(repo, commit)
        if target.is_dir():
            return target
        git_dir = self.ensure_commit(repo, commit)
        with self._locked(_repo_key(repo)):
            if target.is_dir():
                return target
            target.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".snap-", dir=target.parent))
            try:
                self._checkout(git_dir, commit, work)
                self._keep_date(repo, commit)
                os.replace(work / "tree", target)
            finally:
                remove_small_tree(work)
        return target

    def files(self, snapshot: Path) -> tuple[str, ...]:
        """Regular files of a snapshot (relative POSIX paths); listed once, then remembered."""
        listing = self._listings.get(snapshot)
        if listing is None:
            walk = Walk(snapshot)
            found = [entry.relative for entry in walk if entry.kind == "file"]
            if walk.cut or walk.unreadable:
                where = walk.cut or f"cannot list {walk.unreadable[0]}"
                raise RepositoryError(
                    f"the snapshot {snapshot.name} is too large to read ({where})"
                )
            listing = self._listings[snapshot] = tuple(sorted(found))
        return listing

    def listed(self, snapshot: Path) -> frozenset[str]:
        """``files`` as a set, for membership tests."""
        found = self._listed.get(snapshot)
        if found is None:
            found = self._listed[snapshot] = frozenset(self.files(snapshot))
        return found

    def _checkout(self, git_dir: Path, commit: str, work: Path) -> None:
        tree = work / "tree"
        tree.mkdir()
        env = {**_CHECKOUT_ENV, "GIT_INDEX_FILE": str(work / "index")}
        # One process reads the commit into the (new, empty) index and writes every file.
        read = ["read-tree", "--reset", "-u", commit]
        git(
            ["--git-dir", str(git_dir), "--work-tree", str(tree), *read],
            env=env,
            timeout=self.timeout_s,
        )
