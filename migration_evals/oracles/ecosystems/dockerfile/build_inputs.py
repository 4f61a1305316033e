"""What the builds of a tree's Dockerfiles read, and which of the patch's files they read.

The base-image recipe explains FROM lines (and the ARG defaults they use); whatever else a
build reads is outside it. For every Dockerfile of the tree, built as the harness builds it
(its own directory as context, or the changeset's ``builds`` entry), a file the patch adds,
changes or deletes is a **build input** when it is

* the ignore file that decides what the build sends (``<Dockerfile>.dockerignore``, or the
  context's ``.dockerignore``), whatever it says; or
* inside the context, sent there by the base's ignore file or the patch's, and taken in by
  a source the Dockerfile reads
  (``migration_evals.oracles.ecosystems.dockerfile.model.ContextRead``: ``COPY``, ``ADD``, a ``RUN``
  bind mount; in either version of the file): a config file the image
  copies in.

Each such file is a failure, naming the file and the instruction that reads it. Every other
file the patch touches (outside every build context, left out by the ignore file, or sent
but read by no instruction) cannot change an image: it is a notice, named, for the judge,
who reviews the whole diff. Dockerfiles themselves are checked line by line apart.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Evidence, Severity
from migration_evals.oracles.dockerignore import (
    BuildContext,
    IgnoreFileError,
    build_context,
    ignore_file_paths,
    source_covers,
)
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import (
    DockerBuild,
    dockerfile_build,
    is_dockerfile,
)
from migration_evals.oracles.ecosystems.dockerfile.model import ContextRead, read_dockerfile
from migration_evals.oracles.tree import TreeView

__all__ = ["check_build_inputs"]

_ALLOWED = "the recipe changes FROM lines only"


@dataclass(frozen=True, slots=True)
class _Build:
    """One Dockerfile's build: where it reads from and what it reads."""

    build: DockerBuild
    reads: tuple[ContextRead, ...]
    contexts: tuple[BuildContext | None, ...]  # base and patched; None: the file is refused

    @property
    def folder(self) -> str:
        context = posixpath.normpath(self.build.context)
        return "." if context.startswith(("/", "..")) else context

    def inside(self, path: str) -> str | None:
        """``path`` relative to the context, None when outside it."""
        if self.folder == ".":
            return path
        relative = posixpath.relpath(path, self.folder)
        return None if relative.startswith("..") else relative

    def sent(self, relative: str) -> bool:
        return any(c is None or c.sends(relative) for c in self.contexts)

    def reader(self, relative: str) -> ContextRead | None:
        return next((r for r in self.reads if source_covers(r.source, relative)), None)


def _context(build: DockerBuild, read: Callable[[str], bytes | None]) -> BuildContext | None:
    try:
        return build_context(build.dockerfile, build.context, read)
    except IgnoreFileError:
        return None  # Docker refuses it; its build sends nothing, but assume it sends all


def _reads(tree: TreeView, path: str) -> tuple[ContextRead, ...]:
    reads: dict[ContextRead, None] = {}
    for data in (tree.read_base(path), tree.read(path)):
        if data is not None:
            reads.update(dict.fromkeys(read_dockerfile(data).context_reads))
    return tuple(reads)


def _builds(tree: TreeView, params: Mapping[str, Any]) -> list[_Build]:
    """Every Dockerfile of either tree, as the harness builds it."""
    paths = {path for path in tree.files() if is_dockerfile(path)}
    paths.update(p for c in tree.changes for p in c.paths() if is_dockerfile(p))
    builds = []
    for path in sorted(paths):
        build = dockerfile_build(path, params)
        contexts = (_context(build, tree.read_base), _context(build, tree.read))
        builds.append(_Build(build, _reads(tree, path), contexts))
    return builds


def _why_input(path: str, build: _Build) -> str | None:
    """Why ``path`` is an input of ``build``, if it is."""
    if path in ignore_file_paths(build.build.dockerfile, build.folder):
        return f"decides what the build of {build.build.dockerfile} sends"
    relative = build.inside(path)
    if relative is None or not build.sent(relative):
        return None
    read = build.reader(relative)
    if read is None:
        return None
    return f"{read.instruction} at {build.build.dockerfile}:{read.line} reads it into the image"


def _touched(tree: TreeView) -> Iterator[str]:
    seen: set[str] = set()
    for change in tree.changes:
        for path in change.paths():
            if path not in seen and not is_dockerfile(path):
                seen.add(path)
                yield path


def check_build_inputs(tree: TreeView, params: Mapping[str, Any]) -> list[Evidence]:
    """A failure for each file the patch touches that a Docker build reads; a notice for
    each other file it touches (no build reads it: the judge weighs it)."""
    builds = _builds(tree, params)
    evidence = []
    for path in _touched(tree):
        why = next((w for b in builds if (w := _why_input(path, b)) is not None), None)
        if why is not None:
            message = f"a build input changed: {why}; {_ALLOWED}"
            evidence.append(Evidence(message, path, severity=Severity.FAILURE))
        else:
            message = "changed, but no Docker build reads it; left to the judge"
            evidence.append(Evidence(message, path, severity=Severity.NOTICE))
    return evidence
