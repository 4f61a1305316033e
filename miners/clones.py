"""Mirror clones for mining: the whole history of every branch, plus GitHub's PR heads.

Survival needs the default branch's full history after a merge and, for rebase merges,
the PR's own commits (``refs/pull/<n>/head``), so each repository is cloned with
``--mirror`` (and ``--no-local`` for local paths, so nothing but objects and refs come
along) and fetched at most once per ``MirrorCache``: one nightly refresh, one fetch.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import RepositoryError
from core.git import git

__all__ = ["MirrorCache"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _name(url: str) -> str:
    tail = _SAFE.sub("-", url.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{hashlib.sha256(url.encode()).hexdigest()[:16]}-{tail}"


class MirrorCache:
    """Mirror clones under ``root``; safe to share between threads and processes."""

    def __init__(self, root: Path, *, timeout_s: float = 1800.0) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self._fresh: set[str] = set()
        self._guard = threading.Lock()

    @contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        (self.root / "locks").mkdir(parents=True, exist_ok=True)
        with self._guard, (self.root / "locks" / f"{name}.lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def mirror(self, url: str) -> Path:
        """The git dir of an up-to-date mirror of ``url`` (cloned or fetched as needed)."""
        name = _name(url)
        git_dir = self.root / "mirrors" / f"{name}.git"
        if url in self._fresh:
            return git_dir
        with self._locked(name):
            if git_dir.exists():
                self._fetch(url, git_dir)
            else:
                self._clone(url, git_dir)
        self._fresh.add(url)
        return git_dir

    def _clone(self, url: str, git_dir: Path) -> None:
        git_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=git_dir.parent))
        try:
            git(
                ["clone", "--mirror", "--no-local", "--quiet", "--", url, str(tmp / "m")],
                timeout=self.timeout_s,
            )
            os.replace(tmp / "m", git_dir)
        except RepositoryError as exc:
            raise RepositoryError(f"cannot clone {url}: {exc}") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _fetch(self, url: str, git_dir: Path) -> None:
        try:
            git(
                ["--git-dir", str(git_dir), "fetch", "--prune", "--quiet", "origin"],
                timeout=self.timeout_s,
            )
        except RepositoryError as exc:
            raise RepositoryError(f"cannot fetch {url}: {exc}") from exc
