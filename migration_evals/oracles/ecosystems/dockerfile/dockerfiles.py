"""Which Dockerfiles a patch touches, and how each one is built.

Every modified Dockerfile (``Dockerfile``, ``Containerfile``, ``*.Dockerfile``,
``Dockerfile.*``, anywhere in the tree) is one build, with its own directory as build
context, unless the changeset's ``recipe_params.builds`` names another context or a target
stage for it::

    "builds": {"docker/Dockerfile": {"context": ".", "target": "runtime"}}

A Dockerfile the patch adds or deletes has no pair of versions to compare and is not
built; the recipe's contract refuses such patches before any build.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.dockerfile.language import DOCKERFILE_LANGUAGE
from migration_evals.oracles.tree import FileChange

__all__ = [
    "DockerBuild",
    "builds_dockerfiles",
    "diff_images",
    "dockerfile_build",
    "is_dockerfile",
    "touched_builds",
]

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_DIFF_FROM = re.compile(r"^[-+ ]\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)


def is_dockerfile(path: str) -> bool:
    return DOCKERFILE_LANGUAGE.claims(path)


def builds_dockerfiles(recipe: Recipe) -> bool:
    """Whether the recipe's sandbox tiers build the repository's Dockerfiles."""
    return recipe.sandbox.build_dockerfile


@dataclass(frozen=True, slots=True)
class DockerBuild:
    """One Dockerfile to build: paths relative to the tree root, POSIX."""

    dockerfile: str
    context: str
    target: str | None = None

    def command(self) -> tuple[str, ...]:
        """The ``docker build`` command line the sandbox reads (and cassettes are keyed by)."""
        target = ("--target", self.target) if self.target else ()
        return ("docker", "build", "-f", self.dockerfile, *target, self.context)

    def describe(self) -> str:
        target = f", target {self.target}" if self.target else ""
        return f"{self.dockerfile} (context {self.context}{target})"

    def to_dict(self) -> dict[str, Any]:
        return {"dockerfile": self.dockerfile, "context": self.context, "target": self.target}


def _own_directory(path: str) -> str:
    return posixpath.dirname(path) or "."


def _build_for(path: str, named: Mapping[str, Any]) -> DockerBuild:
    options: Mapping[str, Any] = named.get(path) or {}
    context = posixpath.normpath(str(options.get("context") or _own_directory(path)))
    target = options.get("target")
    return DockerBuild(path, context, str(target) if target else None)


def dockerfile_build(path: str, params: Mapping[str, Any]) -> DockerBuild:
    """How the Dockerfile at ``path`` is built: the changeset's ``builds`` entry for it, or
    its own directory as context and its last stage as target."""
    return _build_for(path, params.get("builds") or {})


def touched_builds(changes: Sequence[FileChange], params: Mapping[str, Any]) -> list[DockerBuild]:
    """A build for every Dockerfile the patch modifies, in diff order."""
    builds = []
    for change in changes:
        if change.old_path is None or change.new_path is None:
            continue
        if is_dockerfile(change.new_path):
            builds.append(dockerfile_build(change.new_path, params))
    return builds


def diff_images(patch: str) -> list[str]:
    """The images FROM lines of a diff's Dockerfiles name (removed, added or context), as
    written: what a trial depends on, known before any tree is read."""
    images: set[str] = set()
    stages = {"scratch"}
    in_dockerfile = False
    for line in patch.splitlines():
        if header := _DIFF_FILE.match(line):
            in_dockerfile = is_dockerfile(header[2]) or is_dockerfile(header[1])
            continue
        if in_dockerfile and not line.startswith(("+++", "---")):
            found = _DIFF_FROM.match(line)
            if found and "$" not in found[1]:
                images.add(found[1])
            if found and found[2]:
                stages.add(found[2])
    return sorted(images - stages)
