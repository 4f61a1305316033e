"""Mirror clones for mining: the whole history of every branch, plus GitHub's PR heads.

Survival needs the default branch's full history after a merge and, for rebase merges,
the PR's own commits (``refs/pull/<n>/head``), so each repository is cloned with
``--mirror`` (and ``--no-local`` for local paths, so nothing but objects and refs come
along) and fetched at most once per ``MirrorCache``: one nightly refresh, one fetch.

A repository already on disk (a clone, a bare mirror, or a folder holding one) is read in
place (``find_git_dir``): copying it would gain nothing, and a partial mirror should fail
on the commits it lacks, not all at once.

Each clone or fetch records when it began in the mirror's own config (``fetch_time``):
the history is complete up to that moment, which is how a survival window on a branch
where nothing landed since can still be known to have closed.
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
from datetime import datetime
from pathlib import Path

from migration_evals.core.clock import Clock, SystemClock, as_utc
from migration_evals.core.errors import RepositoryError
from migration_evals.core.git import git

__all__ = [
    "FETCHED_AT",
    "MirrorCache",
    "branch_ref",
    "fetch_time",
    "find_git_dir",
    "record_fetch_time",
    "repository_name",
]

FETCHED_AT = "migration-evals.fetchedAt"
"""The git config key holding when the repository's history was last fetched (ISO 8601)."""

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_OWNER_NAME = re.compile(r"[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/*$")
_MIRROR_FOLDER = re.compile(r"^([A-Za-z0-9_.-]+)\+([A-Za-z0-9_.-]+)$")


def _name(url: str) -> str:
    tail = _SAFE.sub("-", url.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{hashlib.sha256(url.encode()).hexdigest()[:16]}-{tail}"


class MirrorCache:
    """Mirror clones under ``root``; safe to share between threads and processes."""

    def __init__(
        self, root: Path, *, timeout_s: float = 1800.0, clock: Clock | None = None
    ) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self.clock = clock or SystemClock()
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
            # Taken before asking: whatever is pushed while the fetch runs may be missing.
            started = self.clock.now()
            if git_dir.exists():
                self._fetch(url, git_dir)
            else:
                self._clone(url, git_dir)
            record_fetch_time(git_dir, started)
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


def record_fetch_time(git_dir: Path, at: datetime) -> None:
    """Note in ``git_dir``'s config that its history is complete up to ``at``."""
    stamp = as_utc(at).isoformat()
    git(["--git-dir", str(git_dir), "config", "--local", FETCHED_AT, stamp])


def fetch_time(git_dir: Path) -> datetime | None:
    """When ``git_dir``'s history was last fetched, if that was recorded (None otherwise)."""
    stamp = _ref(git_dir, "config", "--get", FETCHED_AT)
    if stamp is None:
        return None
    try:
        return as_utc(datetime.fromisoformat(stamp))
    except ValueError:
        raise RepositoryError(
            f"{git_dir}: {FETCHED_AT} = {stamp!r} is not an ISO date-time"
        ) from None


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _git_dir_in(path: Path) -> Path | None:
    if _is_git_dir(path):
        return path
    dot_git = path / ".git"
    if dot_git.exists():  # a work tree; .git may be a file pointing elsewhere (worktrees)
        done = git(["-C", str(path), "rev-parse", "--absolute-git-dir"])
        return Path(done.stdout.decode().strip())
    return None


def find_git_dir(path: Path) -> Path:
    """The git dir of ``path``: a bare repository, a work tree, or a folder holding one."""
    if not path.is_dir():
        raise RepositoryError(f"{path} is not a folder")
    found = _git_dir_in(path)
    if found is not None:
        return found
    inside = [
        f for f in (_git_dir_in(child) for child in sorted(path.iterdir()) if child.is_dir()) if f
    ]
    if len(inside) == 1:
        return inside[0]
    what = "no git repository" if not inside else f"{len(inside)} git repositories"
    raise RepositoryError(f"{path} holds {what}; name the repository's own folder")


def _ref(git_dir: Path, *args: str) -> str | None:
    done = git(["--git-dir", str(git_dir), *args], check=False)
    out = done.stdout.decode().strip()
    return out if done.returncode == 0 and out else None


def branch_ref(git_dir: Path, branch: str | None = None) -> str:
    """The ref of ``branch``, or of the default branch: the remote's HEAD, else this HEAD."""
    if branch:
        for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
            if _ref(git_dir, "rev-parse", "--verify", "--quiet", ref):
                return ref
        raise RepositoryError(f"no branch {branch!r} in {git_dir}")
    found = _ref(git_dir, "symbolic-ref", "-q", "refs/remotes/origin/HEAD") or _ref(
        git_dir, "symbolic-ref", "-q", "HEAD"
    )
    if found is None or not _ref(git_dir, "rev-parse", "--verify", "--quiet", found):
        raise RepositoryError(f"{git_dir} has no default branch; name one")
    return found


def repository_name(location: str, git_dir: Path) -> str:
    """``owner/name`` from a URL, the origin remote, or a mirror folder ``owner+name``;
    else the folder's name."""
    origin = _ref(git_dir, "config", "--get", "remote.origin.url") or ""
    for url in (location, origin):
        found = _OWNER_NAME.search(url) if "://" in url or "@" in url else None
        if found:
            return f"{found.group(1)}/{found.group(2)}"
    for folder in (git_dir, *git_dir.parents[:2]):
        mirror = _MIRROR_FOLDER.match(folder.name)
        if mirror:
            return f"{mirror.group(1)}/{mirror.group(2)}"
    plain = git_dir.parent if git_dir.name == ".git" else git_dir
    return plain.name.removesuffix(".git")
