"""A trial's workspace: the base snapshot plus the patch, applied strictly by git.

``apply`` screens the diff, copies only the files it declares from the read-only base
snapshot into a temporary directory, runs ``git apply`` there (no fuzz, no ``--reject``, no
``--unsafe-paths``, no fallback to ``patch``), then checks that git touched nothing it did
not declare and created no symbolic link. The patched files are kept in memory as an
overlay; ``materialise`` builds a full disposable copy only when a live sandbox needs one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.git import git
from core.model import Changeset, Evidence
from core.stamps import sha256_hex
from oracles.diffscreen import ScreenLimits, screen_diff
from oracles.repos import RepoCache
from oracles.tree import FileChange

__all__ = ["ApplyResult", "SnapshotTree", "Workspace", "tree_hash"]

_PATCH_FAILED = re.compile(r"^error: patch failed: (.+):(\d+)$")
_PATH_ERROR = re.compile(r"^error: (.+?): (.+)$")


def tree_hash(base_commit: str, patch_sha256: str | None) -> str:
    """Identifies a tree by its base commit and the patch on top (none for the baseline)."""
    return sha256_hex(f"tree\n{base_commit}\n{patch_sha256 or ''}")


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """The outcome of screening and applying: problems (empty when it applied) and files."""

    problems: tuple[Evidence, ...]
    changes: tuple[FileChange, ...] = ()
    overlay: Mapping[str, bytes | None] = field(default_factory=dict)
    executable: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        return not self.problems


def _inside_symlink(base: Path, path: str) -> bool:
    current = base
    for part in path.split("/")[:-1]:
        current = current / part
        if current.is_symlink():
            return True
    return False


def _unlisted_base_file(base: Path, path: str) -> Evidence | None:
    """Why a declared path that the snapshot's listing lacks cannot be staged, if it
    cannot: it is or goes through a symbolic link, or it is a directory."""
    source = base / path
    if _inside_symlink(base, path) or source.is_symlink():
        return Evidence("path is or goes through a symbolic link in the base tree", path)
    if source.is_dir():
        return Evidence("path is a directory in the base tree", path)
    return None


def _stage_base_files(
    base: Path, tree: Path, paths: Iterable[str], listed: Container[str]
) -> list[Evidence]:
    """Copy the declared paths that exist at base into ``tree``; refuse symlinked ones.

    ``listed`` holds the snapshot's regular files, found by a walk that never follows a
    symbolic link, so a listed path needs no further checks; only the rest are examined.
    """
    problems = []
    made: set[str] = set()
    base_dir, tree_dir = str(base), str(tree)
    for path in paths:
        if path not in listed:
            problem = _unlisted_base_file(base, path)
            if problem is not None:
                problems.append(problem)
                continue
            if not (base / path).is_file():
                continue  # a file the patch creates
        source = os.path.join(base_dir, path)
        target = os.path.join(tree_dir, path)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        shutil.copyfile(source, target)
        if os.access(source, os.X_OK):
            shutil.copymode(source, target)
    return problems


def _apply_errors(stderr: str) -> list[Evidence]:
    problems = []
    for line in stderr.splitlines():
        if match := _PATCH_FAILED.match(line):
            problems.append(Evidence("patch does not apply", match[1], int(match[2])))
        elif match := _PATH_ERROR.match(line):
            problems.append(Evidence(match[2], match[1]))
    return problems or [Evidence(f"git apply failed: {stderr.strip() or 'no message'}")]


def _drain(tree: Path, declared: set[str]) -> tuple[ApplyResult, list[Evidence]]:
    """Read the patched files back, refuse anything undeclared, and empty ``tree``.

    One bottom-up walk both checks what git did and removes it, which is cheaper than a
    check followed by ``rmtree``.
    """
    problems: list[Evidence] = []
    overlay: dict[str, bytes | None] = dict.fromkeys(declared)
    executable: set[str] = set()
    for folder, dirs, files in os.walk(tree, topdown=False):
        for name in files:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, tree).replace(os.sep, "/")
            if os.path.islink(full):
                problems.append(Evidence("the patch created a symbolic link", rel))
            elif rel not in declared:
                problems.append(Evidence("git changed a path the diff headers do not declare", rel))
            else:
                with open(full, "rb") as handle:
                    overlay[rel] = handle.read()
                if os.access(full, os.X_OK):
                    executable.add(rel)
            os.unlink(full)
        for name in dirs:
            full = os.path.join(folder, name)
            if os.path.islink(full):
                problems.append(
                    Evidence("the patch created a symbolic link", os.path.relpath(full, tree))
                )
                os.unlink(full)
            else:
                os.rmdir(full)
    return ApplyResult((), (), overlay, frozenset(executable)), problems


class Workspace:
    """Everything one trial needs from its repository; close it to delete temporary files."""

    def __init__(
        self,
        repos: RepoCache,
        changeset: Changeset,
        limits: ScreenLimits,
        *,
        scratch: Path | None = None,
    ) -> None:
        self.repos = repos
        self.changeset = changeset
        self.limits = limits
        # Where the small, short-lived apply trees go (a RAM-backed folder keeps the many
        # mkdir/unlink calls of each trial off the disk); None: the system's temp folder.
        self.scratch = scratch
        self._applied: ApplyResult | None = None
        self._temporary: list[Path] = []

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        for path in self._temporary:
            shutil.rmtree(path, ignore_errors=True)
        self._temporary.clear()

    def _forget(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)
        self._temporary.remove(path)

    def _mkdtemp(self, prefix: str, folder: Path | None = None) -> Path:
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
        self._temporary.append(path)
        return path

    @property
    def base(self) -> Path:
        """The base commit's snapshot (clones the repository on first use)."""
        return self.repos.snapshot(self.changeset.repo, self.changeset.base_commit)

    def tree_hash(self, *, patched: bool = True) -> str:
        patch = self.changeset.patch_sha256 if patched else None
        return tree_hash(self.changeset.base_commit, patch)

    def apply(self) -> ApplyResult:
        """Screen and apply the patch once; later calls return the same result."""
        if self._applied is None:
            self._applied = self._screen_and_apply()
        return self._applied

    def _screen_and_apply(self) -> ApplyResult:
        patch = self.changeset.patch.encode("utf-8")
        parsed = screen_diff(patch, self.limits)
        if parsed.problems:
            return ApplyResult(tuple(parsed.problems), tuple(parsed.changes))
        base = self.base
        tree = self._mkdtemp("me-apply-", self.scratch)
        paths = {p for change in parsed.changes for p in change.paths()}
        listed = self.repos.listed(base)
        problems = _stage_base_files(base, tree, sorted(paths), listed)
        if problems:
            return ApplyResult(tuple(problems), tuple(parsed.changes))
        done = git(
            ["apply", "--whitespace=nowarn"],
            cwd=tree,
            input=patch,
            # Outside any repository git apply works on plain files; the ceiling stops it
            # from discovering a repository in a parent directory.
            env={"GIT_CEILING_DIRECTORIES": str(tree.parent)},
            check=False,
        )
        if done.returncode != 0:
            stderr = done.stderr.decode("utf-8", "replace")
            return ApplyResult(tuple(_apply_errors(stderr)), tuple(parsed.changes))
        drained, problems = _drain(tree, paths)
        self._forget(tree)
        return replace(drained, problems=tuple(problems), changes=tuple(parsed.changes))

    def view(self) -> SnapshotTree:
        applied = self.apply()
        base = self.base
        return SnapshotTree(base, applied.changes, applied.overlay, self.repos.files(base))

    def materialise(self, *, patched: bool = True) -> Path:
        """A disposable full copy of the base tree, with the patch on top if ``patched``."""
        target = self._mkdtemp("me-tree-") / "tree"
        shutil.copytree(self.base, target, symlinks=True)
        if patched:
            applied = self.apply()
            if not applied.ok:
                raise ValueError("cannot materialise a patch that did not apply")
            for path, content in applied.overlay.items():
                destination = target / path
                if content is None:
                    destination.unlink(missing_ok=True)
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(content)
                    destination.chmod(0o755 if path in applied.executable else 0o644)
        return target


class SnapshotTree:
    """``TreeView`` over a base snapshot with the applied patch as an in-memory overlay."""

    def __init__(
        self,
        base: Path,
        changes: Sequence[FileChange],
        overlay: Mapping[str, bytes | None],
        base_files: Sequence[str],
    ) -> None:
        self.base = base
        self.changes = changes
        self.overlay = overlay
        self.base_files = base_files

    def read_base(self, path: str) -> bytes | None:
        full = self.base / path
        if full.is_symlink() or not full.is_file():
            return None
        return full.read_bytes()

    def read(self, path: str) -> bytes | None:
        if path in self.overlay:
            return self.overlay[path]
        return self.read_base(path)

    def files(self) -> Iterator[str]:
        yield from (path for path in self.base_files if path not in self.overlay)
        yield from (path for path, content in self.overlay.items() if content is not None)
