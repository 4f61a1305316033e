"""A trial's workspace: the base snapshot plus the patch, applied strictly by git.

``apply`` screens the diff, copies only the files it declares from the read-only base
snapshot into a temporary directory, runs ``git apply`` there (no fuzz, no ``--reject``, no
``--unsafe-paths``, no fallback to ``patch``), then checks that git touched nothing it did
not declare and created no symbolic link. The patched files are kept in memory as an
overlay; ``archive`` streams the tree as a tar only when a live sandbox needs it.
"""

from __future__ import annotations

import glob
import io
import logging
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO

from migration_evals.core.git import git
from migration_evals.core.model import Changeset, Evidence, first_non_utf8_offset
from migration_evals.core.stamps import sha256_hex
from migration_evals.oracles.diffscreen import ScreenLimits, screen_diff
from migration_evals.oracles.folders import Entry, Walk, remove_small_tree, remove_tree
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.tree import FileChange

__all__ = [
    "ApplyResult",
    "GradedTree",
    "SnapshotTree",
    "TreeArchive",
    "Workspace",
    "remove_run_workspaces",
    "tree_hash",
    "with_files",
    "workspace_prefix",
]

log = logging.getLogger(__name__)

_PATCH_FAILED = re.compile(r"^error: patch failed: (.+):(\d+)$")
_PATH_ERROR = re.compile(r"^error: (.+?): (.+)$")


_APPLY_PREFIX = "me-apply-"
_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]")


def workspace_prefix(run_id: str) -> str:
    """How the apply trees of ``run_id``'s trials are named (``me-apply-<run>-<random>``)."""
    if not run_id:
        return _APPLY_PREFIX
    return f"{_APPLY_PREFIX}{_UNSAFE_IN_NAME.sub('_', run_id)}-"


def remove_run_workspaces(run_id: str, scratch: Path | None) -> list[Path]:
    """Delete the apply trees a run left behind (killed mid-trial); returns them.

    ``scratch`` is the folder the run's workspaces were made in (None: the system's temp
    folder). Only folders named after this run are touched."""
    folder = scratch if scratch is not None else Path(tempfile.gettempdir())
    pattern = glob.escape(workspace_prefix(run_id)) + "*"
    removed = []
    for leftover in sorted(folder.glob(pattern)):
        if leftover.is_dir() and not leftover.is_symlink():
            remove_tree(leftover)
            removed.append(leftover)
    return removed


def tree_hash(base_commit: str, patch_sha256: str | None) -> str:
    """Identifies a tree by its base commit and the patch on top (none for the baseline)."""
    return sha256_hex(f"tree\n{base_commit}\n{patch_sha256 or ''}")


def with_files(hashed: str, extra: Mapping[str, bytes]) -> str:
    """The hash of tree ``hashed`` with harness-made files laid over it (``hashed`` itself
    when there are none), so a run over them is never taken for a run without."""
    if not extra:
        return hashed
    listing = "".join(f"{path}\n{sha256_hex(content)}\n" for path, content in sorted(extra.items()))
    return sha256_hex(f"tree+files\n{hashed}\n{listing}")


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


def _plain(path: str) -> bool:
    """A relative path without empty, ``.`` or ``..`` parts: one a listing spells alike."""
    return not path.startswith("/") and all(part not in ("", ".", "..") for part in path.split("/"))


def _unlisted_base_file(base: Path, path: str) -> Evidence | None:
    """Why a declared path that the snapshot's listing lacks cannot be staged, if it
    cannot: it is or goes through a symbolic link, or it is a directory."""
    source = base / path
    if _inside_symlink(base, path) or source.is_symlink():
        return Evidence("path is or goes through a symbolic link in the base tree", path)
    if source.is_dir():
        return Evidence("path is a directory in the base tree", path)
    return None


def _make_folders(path: str, made: set[str]) -> None:
    """``os.makedirs`` without its recursion (one call per level): a base file may lie
    deeper than Python recurses. ``made``: the folders of the (new, empty) tree that exist,
    its root first; no other does, so none is looked for on disk."""
    missing = []
    while path not in made:
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            raise ValueError(f"{path} is not inside the apply tree")
        path = parent
    for folder in reversed(missing):
        os.mkdir(folder)
        made.add(folder)


def _stage_base_files(
    base: Path,
    tree: Path,
    paths: Iterable[str],
    listed: Container[str],
    reads: dict[str, bytes | None],
) -> list[Evidence]:
    """Copy the declared paths that exist at base into ``tree``; refuse symlinked ones.

    ``listed`` holds the snapshot's regular files, found by a walk that never follows a
    symbolic link, so a listed path needs no further checks; only the rest are examined.
    A small listed file is read once: its bytes also go into ``reads``, the base files the
    trial's checks read (``SnapshotTree``).
    """
    problems = []
    base_dir, tree_dir = str(base), str(tree)
    made = {tree_dir}
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
        _make_folders(os.path.dirname(target), made)
        content, mode = _copy(source, target)
        if content is not None and path in listed and _keeps(reads, content):
            reads[path] = content
        if mode & _EXECUTABLE:
            os.chmod(target, stat.S_IMODE(mode))  # as ``shutil.copymode``
    return problems


_EXECUTABLE = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def _copy(source: str, target: str) -> tuple[bytes | None, int]:
    """Copy a file; its bytes when it is small enough to be kept (``_KEPT_BYTES``), and
    its mode (read from the open file: no second look-up of its path)."""
    with open(source, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        content = handle.read(_KEPT_BYTES + 1)
        if len(content) > _KEPT_BYTES:
            shutil.copyfile(source, target)
            return None, mode
    with open(target, "wb") as out:
        out.write(content)
    return content, mode


def _apply_errors(stderr: str) -> list[Evidence]:
    problems = []
    for line in stderr.splitlines():
        if match := _PATCH_FAILED.match(line):
            problems.append(Evidence("patch does not apply", match[1], int(match[2])))
        elif match := _PATH_ERROR.match(line):
            problems.append(Evidence(match[2], match[1]))
    return problems or [Evidence(f"git apply failed: {stderr.strip() or 'no message'}")]


def _drain(
    tree: Path, declared: set[str]
) -> tuple[ApplyResult, list[Evidence], list[Entry] | None]:
    """Read the patched files back and refuse anything undeclared.

    The walk is iterative (a patch's paths may nest deeper than Python recurses) and
    bounded; the caller removes the tree, given the walk's entries when it read them all.
    """
    problems: list[Evidence] = []
    overlay: dict[str, bytes | None] = dict.fromkeys(declared)
    executable: set[str] = set()
    walk = Walk(tree)
    entries = list(walk)
    for entry in entries:
        if entry.kind == "link":
            problems.append(Evidence("the patch created a symbolic link", entry.relative))
        elif entry.kind == "other":
            problems.append(Evidence("the patch created a special file", entry.relative))
        elif entry.kind == "file" and entry.relative not in declared:
            problems.append(
                Evidence("git changed a path the diff headers do not declare", entry.relative)
            )
        elif entry.kind == "file":
            with open(entry.path, "rb") as handle:
                overlay[entry.relative] = handle.read()
                mode = os.fstat(handle.fileno()).st_mode
            if mode & _EXECUTABLE:
                executable.add(entry.relative)
    walked: list[Entry] | None = entries
    if walk.cut or walk.unreadable:
        where = walk.cut or f"cannot list {walk.unreadable[0] or '.'}"
        problems.append(Evidence(f"the patched tree could not be read to the end ({where})"))
        walked = None
    return ApplyResult((), (), overlay, frozenset(executable)), problems, walked


@dataclass(frozen=True, slots=True)
class GradedTree:
    """The tree the tests tier grades: the patched tree with every test file as the base
    commit has it (test files the patch added left out), except the ``from_patch`` files.

    When that is the patched tree itself (the patch touched no test file), it keeps the
    patched tree's hash, so its runs are the patched tree's runs.
    """

    overlay: Mapping[str, bytes | None]
    executable: frozenset[str]
    tree_hash: str
    from_patch: frozenset[str] = frozenset()


class Workspace:
    """Everything one trial needs from its repository; close it to delete temporary files."""

    def __init__(
        self,
        repos: RepoCache,
        changeset: Changeset,
        limits: ScreenLimits,
        *,
        scratch: Path | None = None,
        run_id: str = "",
    ) -> None:
        self.repos = repos
        self.changeset = changeset
        self.limits = limits
        # Where the small, short-lived apply trees go (a RAM-backed folder keeps the many
        # mkdir/unlink calls of each trial off the disk); None: the system's temp folder.
        self.scratch = scratch
        # Named after the run, so that a run killed mid-trial leaves folders that the
        # next command can find and remove (``remove_run_workspaces``).
        self.prefix = workspace_prefix(run_id)
        self._applied: ApplyResult | None = None
        self._view: SnapshotTree | None = None
        self._base_reads: dict[str, bytes | None] = {}
        self._temporary: list[Path] = []

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete every temporary folder, however deep (a small one, such as the apply tree
        of a patch that did not apply, without starting ``rm``). One that still cannot be
        deleted is logged, never raised: closing runs on every way out of a trial, and must
        not hide why the trial ended."""
        for path in self._temporary:
            try:
                remove_small_tree(path)
            except OSError as exc:
                log.warning("could not remove a trial's temporary folder: %s", exc)
        self._temporary.clear()

    def _forget(self, path: Path, walked: Sequence[Entry] | None = None) -> None:
        remove_small_tree(path, walked)
        self._temporary.remove(path)

    def _mkdtemp(self, prefix: str, folder: Path | None = None) -> Path:
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
        self._temporary.append(path)
        return path

    @property
    def base(self) -> Path:
        """The base commit's snapshot (clones the repository on first use)."""
        return self.repos.snapshot(self.changeset.repo, self.changeset.base_commit)

    def base_committed_at(self) -> str:
        """The base commit's committer date (ISO 8601)."""
        return self.repos.committed_at(self.changeset.repo, self.changeset.base_commit)

    def tree_hash(self, *, patched: bool = True) -> str:
        patch = self.changeset.patch_sha256 if patched else None
        return tree_hash(self.changeset.base_commit, patch)

    def apply(self) -> ApplyResult:
        """Screen and apply the patch once; later calls return the same result."""
        if self._applied is None:
            self._applied = self._screen_and_apply()
        return self._applied

    def _screen_and_apply(self) -> ApplyResult:
        offset = first_non_utf8_offset(self.changeset.patch)
        if offset is not None:
            problem = Evidence(
                f"the patch is not UTF-8 text: an undecodable byte at offset {offset}"
            )
            return ApplyResult((problem,), ())
        patch = self.changeset.patch.encode("utf-8")
        parsed = screen_diff(patch, self.limits)
        if parsed.problems:
            return ApplyResult(tuple(parsed.problems), tuple(parsed.changes))
        base = self.base
        tree = self._mkdtemp(self.prefix, self.scratch)
        paths = {p for change in parsed.changes for p in change.paths()}
        listed = self.repos.listed(base)
        problems = _stage_base_files(base, tree, sorted(paths), listed, self._base_reads)
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
        drained, problems, walked = _drain(tree, paths)
        self._forget(tree, walked)
        return replace(drained, problems=tuple(problems), changes=tuple(parsed.changes))

    def graded(self, test_paths: Sequence[str], from_patch: Iterable[str] = ()) -> GradedTree:
        """The tree the tests tier grades (see ``GradedTree``); the patch must apply."""
        applied = self.apply()
        if not applied.ok:
            raise ValueError("cannot grade a patch that did not apply")
        used = frozenset(from_patch)
        overlay = {
            path: content
            for path, content in applied.overlay.items()
            if path in used or not path_matches(path, test_paths)
        }
        if overlay.keys() == applied.overlay.keys():
            return GradedTree(applied.overlay, applied.executable, self.tree_hash(), used)
        kept = sorted(path for path in applied.overlay if path in overlay)
        digest = sha256_hex("graded\n" + self.tree_hash() + "\n" + "\n".join(kept))
        return GradedTree(overlay, applied.executable & overlay.keys(), digest, used)

    def view(self) -> SnapshotTree:
        """The base snapshot with the patch on top; one for the trial, whichever tier or
        check asks (both never change)."""
        if self._view is None:
            applied = self.apply()
            base = self.base
            self._view = SnapshotTree(
                base,
                applied.changes,
                applied.overlay,
                self.repos.files(base),
                listed=self.repos.listed(base),
                reads=self._base_reads,
            )
        return self._view

    def archive(
        self,
        uid: int,
        gid: int,
        *,
        patched: bool = True,
        subdir: str = "",
        graded: GradedTree | None = None,
        extra: Mapping[str, bytes] | None = None,
        sends: Callable[[str], bool] | None = None,
    ) -> IO[bytes]:
        """The tree (with the patch on top if ``patched``; ``graded`` instead, if given)
        as an uncompressed tar stream, every entry owned by ``uid``:``gid``; only
        ``subdir`` when given, as the root. ``extra`` files (paths from the repository
        root) are the harness's own, laid over the tree
        (``migration_evals.oracles.harness_files``): they win over the tree's files of the
        same path. ``sends``, if given, says which entries
        (paths below ``subdir``) go into the stream: a Docker build's context.

        The tree is never copied on disk: entries come from the read-only snapshot and
        the patch's in-memory overlay (a large stream spills to a temporary file). Every
        entry carries the base commit's date, as ``git archive`` gives a commit's tree: a
        test that copies a file of the tree and checks that the copy's time differs
        (otiai10/copy's does) must not fail because the run began within the second the
        stream was made.
        """
        overlay: Mapping[str, bytes | None] = {}
        executable: frozenset[str] = frozenset()
        if graded is not None:
            overlay, executable = graded.overlay, graded.executable
        elif patched:
            applied = self.apply()
            if not applied.ok:
                raise ValueError("cannot archive a patch that did not apply")
            overlay, executable = applied.overlay, applied.executable
        if extra:
            overlay = {**overlay, **extra}
            executable = executable.difference(extra)
        committed = int(datetime.fromisoformat(self.base_committed_at()).timestamp())
        archive = TreeArchive(uid, gid, subdir, sends, mtime=committed)
        return archive.build(self.base, overlay, executable)


_SPOOL_BYTES = 64 * 1024 * 1024


class TreeArchive:
    """Writes a snapshot plus an overlay as a tar stream with one owner and one
    modification time (``mtime``, seconds since the epoch) for every entry."""

    def __init__(
        self,
        uid: int,
        gid: int,
        subdir: str = "",
        sends: Callable[[str], bool] | None = None,
        *,
        mtime: int,
    ) -> None:
        self.uid = uid
        self.gid = gid
        folder = subdir.strip("/")
        self.prefix = "" if folder in ("", ".") else f"{folder}/"
        self.sends = sends
        self.mtime = mtime
        self._folders: set[str] = set()

    def build(
        self, base: Path, overlay: Mapping[str, bytes | None], executable: Container[str]
    ) -> IO[bytes]:
        spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - returned
        with tarfile.open(fileobj=spool, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for relative, full, kind in _snapshot_entries(base):
                if relative in overlay or not self._inside(relative):
                    continue
                self._add(tar, relative, kind, full=full)
            for relative, content in sorted(overlay.items()):
                if content is not None and self._inside(relative):
                    mode = 0o755 if relative in executable else 0o644
                    self._add(tar, relative, "file", data=content, mode=mode)
        spool.seek(0)
        return spool

    def _inside(self, relative: str) -> bool:
        if self.prefix and not relative.startswith(self.prefix):
            return False
        return self.sends is None or self.sends(relative[len(self.prefix) :])

    def _info(self, name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.mode = mode
        info.uid, info.gid = self.uid, self.gid
        info.mtime = self.mtime
        return info

    def _parents(self, tar: tarfile.TarFile, name: str) -> None:
        """Every folder above ``name``, once and first, so each is owned like the files."""
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in self._folders:
                self._folders.add(folder)
                tar.addfile(self._info(folder, tarfile.DIRTYPE, 0o755))

    def _add(
        self,
        tar: tarfile.TarFile,
        relative: str,
        kind: str,
        *,
        full: str = "",
        data: bytes | None = None,
        mode: int = 0o644,
    ) -> None:
        name = relative[len(self.prefix) :]
        if not name:
            return
        self._parents(tar, name)
        if kind == "dir":
            if name not in self._folders:
                self._folders.add(name)
                tar.addfile(self._info(name, tarfile.DIRTYPE, 0o755))
        elif kind == "link":
            info = self._info(name, tarfile.SYMTYPE, 0o777)
            info.linkname = os.readlink(full)
            tar.addfile(info)
        elif data is not None:
            info = self._info(name, tarfile.REGTYPE, mode)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        else:
            info = self._info(name, tarfile.REGTYPE, 0o755 if os.access(full, os.X_OK) else 0o644)
            info.size = os.lstat(full).st_size
            with open(full, "rb") as handle:
                tar.addfile(info, handle)


def _snapshot_entries(root: Path) -> Iterator[tuple[str, str, str]]:
    """(relative path, full path, "dir" | "file" | "link") of a snapshot, parents first,
    iteratively and without following links."""
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
        for entry in entries:
            relative = prefix + entry.name
            if entry.is_symlink():
                yield relative, entry.path, "link"
            elif entry.is_dir():
                yield relative, entry.path, "dir"
                stack.append((entry.path, relative + "/"))
            elif entry.is_file():
                yield relative, entry.path, "file"


# What one workspace keeps of the base files it has read (``SnapshotTree.reads``).
_KEPT_READS = 256
_KEPT_BYTES = 256 * 1024


def _keeps(reads: Mapping[str, bytes | None], found: bytes | None) -> bool:
    """Whether a base file read is kept for the trial's later reads."""
    return len(reads) < _KEPT_READS and (found is None or len(found) <= _KEPT_BYTES)


class SnapshotTree:
    """``TreeView`` over a base snapshot with the applied patch as an in-memory overlay.

    ``reads`` keeps base files already read (the snapshot never changes): the views of
    one workspace share it."""

    def __init__(
        self,
        base: Path,
        changes: Sequence[FileChange],
        overlay: Mapping[str, bytes | None],
        base_files: Sequence[str],
        *,
        listed: Container[str] | None = None,
        reads: dict[str, bytes | None] | None = None,
    ) -> None:
        self.base = base
        self.changes = changes
        self.overlay = overlay
        self.base_files = base_files
        # ``base_files`` for membership tests (the repository cache keeps one per snapshot).
        self.listed = frozenset(base_files) if listed is None else listed
        self.reads = reads if reads is not None else {}
        # What the checks work out from this tree more than once (``remembered``).
        self.answers: dict[str, object] = {}

    def read_base(self, path: str) -> bytes | None:
        if path in self.reads:
            return self.reads[path]
        found = self._read_base(path)
        # The checks of one trial read the same few build files many times over.
        if _keeps(self.reads, found):
            self.reads[path] = found
        return found

    def _read_base(self, path: str) -> bytes | None:
        full = self.base / path
        # The listing holds every regular file of the snapshot that no link leads to (its
        # walk never follows one), so a plain relative path answers from it alone: the
        # checks below cost a system call per folder, and a trial reads dozens of paths.
        if path in self.listed:
            return full.read_bytes()
        if _plain(path):
            return None
        # A link anywhere on the way could lead out of the snapshot.
        if _inside_symlink(self.base, path) or full.is_symlink() or not full.is_file():
            return None
        return full.read_bytes()

    def read(self, path: str) -> bytes | None:
        if path in self.overlay:
            return self.overlay[path]
        return self.read_base(path)

    def files(self) -> Iterator[str]:
        yield from (path for path in self.base_files if path not in self.overlay)
        yield from (path for path, content in self.overlay.items() if content is not None)
