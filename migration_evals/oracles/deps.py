"""Dependency resolution: what a build needs, fetched before the network-less build.

For each project and tree (base and patched), a resolution run executes the recipe's
``resolve`` command in the sandbox with the project's dependency cache mounted writable and
the registry gate as its only way out; builds and tests then mount that cache read-only and
run with no network at all. The run's outcome is read from what went through the gate
(``SandboxResult.fetches``, observed by the harness) together with the tool's own messages:

* ``resolved``: the command succeeded; the resolved set (artifacts fetched, modules in
  the build list) names the dependency tree and goes into cache keys and evidence;
* ``missing``: the registry answered 404 for what the tool says it could not find: the
  patch's fault when the base did not need them;
* ``unreachable`` / ``offline``: the registry failed or was not asked (offline mode):
  always infrastructure;
* ``incomplete``: the command failed for another reason (a compile error half-way through
  the lifecycle); the build decides.

This module holds that algorithm; what a run of one build tool means (which paths name
what, how the tool says something is missing, its versions, the cache its builds share)
is the ecosystem's ``ResolutionRules`` (``Ecosystem.resolution``). Every project resolves
once per tree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import IO, Any, Protocol

from migration_evals.core.model import FabricatedMark
from migration_evals.core.ports import (
    CacheMount,
    RegistryFetch,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.core.spec_types import CommandStep
from migration_evals.core.stamps import stamp
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.projects import Project

__all__ = [
    "BUILD_CACHE_ENV",
    "NOTHING_TO_RESOLVE",
    "NothingToResolve",
    "Resolution",
    "ResolutionRules",
    "ResolutionStatus",
    "Resolver",
    "classify",
    "resolution_request",
]

# The build cache a resolution filled with the tree's compiled dependencies, by name; the
# builds and tests of that tree start from a private cache seeded with it (BUILD_CACHE_ENV).
BUILD_CACHE_ENV = "MIGRATION_EVALS_BUILD_CACHE"
_BUILD_CACHE = re.compile(r"^== build cache == ([0-9a-f]{32})$", re.MULTILINE)


class ResolutionStatus(StrEnum):
    RESOLVED = "resolved"
    MISSING = "missing"
    UNREACHABLE = "unreachable"
    OFFLINE = "offline"
    INCOMPLETE = "incomplete"
    ABSENT = "absent"  # the tree has no such project (a base before the patch made it)


@dataclass(frozen=True, slots=True)
class Resolution:
    """One project's dependencies in one tree, as the resolution run left them."""

    project: Project
    status: ResolutionStatus
    cache: str = ""  # the cache builds and tests mount
    resolved: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    toolchain: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""
    fabricated: tuple[FabricatedMark, ...] = ()
    duration_s: float = 0.0
    # Java packages the resolved jars provide (read by the harness), for shadowing checks.
    packages: tuple[str, ...] = ()
    # What the tool said last, when it did not resolve everything (for the envelope).
    output_tail: str = ""
    # The compiled dependencies' build cache, by name ("" when the resolution made none).
    build_cache: str = ""
    # The moment whose registry it saw (ISO 8601; "" for today's).
    as_of: str = ""

    @property
    def digest(self) -> str:
        """Names the resolved set (and toolchain): a changed dependency tree re-grades."""
        return _digest(self.resolved, tuple(self.toolchain.items()))

    @property
    def blocked(self) -> bool:
        return self.status in (ResolutionStatus.UNREACHABLE, ResolutionStatus.OFFLINE)

    def summary(self) -> dict[str, Any]:
        """What an envelope keeps of it."""
        return {
            "project": self.project.label,
            "status": self.status.value,
            "resolved": len(self.resolved),
            "digest": self.digest if self.resolved or self.toolchain else "",
            "missing": list(self.missing),
            "toolchain": dict(self.toolchain),
            "detail": self.detail,
            **({"output_tail": self.output_tail} if self.output_tail else {}),
            **({"registry_as_of": self.as_of} if self.as_of else {}),
        }


# A trial's plan, cache keys, build requests and envelope each ask a resolution for its
# digest: worked out once per resolved set and toolchain (the whole of what it names).
@functools.lru_cache(maxsize=1024)
def _digest(resolved: tuple[str, ...], toolchain: tuple[tuple[str, str], ...]) -> str:
    return stamp({"resolved": list(resolved), "toolchain": dict(toolchain)})


class ResolutionRules(Hashable, Protocol):
    """What one build tool's resolution runs mean, as its ecosystem reads them (hashable:
    a run's versions are read once per rules and log)."""

    @property
    def fresh_cache(self) -> bool:
        """Whether each resolution starts from an empty cache, so the gate's log names
        everything in it (Maven's local repository), or shares one (Go's module cache)."""

    def cache(self, project: Project, tree_hash: str) -> str:
        """The cache a project's resolution writes and its builds read."""

    def resolved(self, result: SandboxResult) -> list[str]:
        """The resolved set of a run: what names its dependency tree."""

    def missing(self, result: SandboxResult) -> list[str]:
        """What the registry itself said it does not have, and the tool could not do
        without."""

    def toolchain(self, output: str) -> tuple[tuple[str, str], ...]:
        """The tool's versions a run printed (``output`` without terminal colours)."""


@dataclass(frozen=True, slots=True)
class NothingToResolve:
    """The rules of an ecosystem whose recipes resolve nothing of their own."""

    fresh_cache: bool = False

    def cache(self, project: Project, tree_hash: str) -> str:
        return ""

    def resolved(self, result: SandboxResult) -> list[str]:
        return []

    def missing(self, result: SandboxResult) -> list[str]:
        return []

    def toolchain(self, output: str) -> tuple[tuple[str, str], ...]:
        return ()


NOTHING_TO_RESOLVE = NothingToResolve()

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TAIL = 2000


# A replayed resolution is classified on every trial of its base, and searching its whole
# log costs a trial more than hashing the log does.
@functools.lru_cache(maxsize=256)
def _versions(rules: ResolutionRules, output: str) -> tuple[tuple[str, str], ...]:
    return rules.toolchain(_ANSI.sub("", output))


def _first(fetches: Iterable[RegistryFetch], source: str) -> RegistryFetch | None:
    return next((f for f in fetches if f.source == source), None)


def classify(
    project: Project, result: SandboxResult, cache: str, rules: ResolutionRules
) -> Resolution:
    """A resolution run's outcome, read from the gate's log and the tool's messages."""
    common: dict[str, Any] = {
        "project": project,
        "cache": cache,
        "toolchain": dict(_versions(rules, result.output)),
        "resolved": tuple(rules.resolved(result)),
        "fabricated": result.fabricated,
        "duration_s": result.duration_s,
        "packages": result.packages,
    }
    if result.exit_code == 0 and not result.timed_out:
        found = _BUILD_CACHE.search(result.output)
        built = found.group(1) if found else ""
        return Resolution(status=ResolutionStatus.RESOLVED, build_cache=built, **common)
    common["output_tail"] = _ANSI.sub("", result.output)[-_TAIL:]
    if failed := _first(result.fetches, "upstream-error"):
        detail = f"the registry did not answer for {failed.route} {failed.path} ({failed.status})"
        return Resolution(status=ResolutionStatus.UNREACHABLE, detail=detail, **common)
    if offline := _first(result.fetches, "offline"):
        detail = f"offline, and not in the dependency cache: {offline.route} {offline.path}"
        return Resolution(status=ResolutionStatus.OFFLINE, detail=detail, **common)
    missing = rules.missing(result)
    if missing:
        detail = "the registry does not have " + ", ".join(missing[:5])
        status = ResolutionStatus.MISSING
        return Resolution(status=status, missing=tuple(missing), detail=detail, **common)
    why = "timed out" if result.timed_out else f"exit {result.exit_code}"
    return Resolution(status=ResolutionStatus.INCOMPLETE, detail=f"resolution {why}", **common)


# -- runs ---------------------------------------------------------------------------------


def resolution_request(
    project: Project,
    rules: ResolutionRules,
    recipe_resolve: CommandStep,
    *,
    image: str,
    pinned: tuple[tuple[str, str], ...],
    cache: str,
    tree_hash: str,
    timeout_s: float,
    tree: Callable[[int, int, str], IO[bytes]] | None,
) -> SandboxRequest:
    return SandboxRequest(
        action=SandboxAction.RESOLVE,
        image=image,
        command=recipe_resolve.command,
        tree_hash=tree_hash,
        timeout_s=timeout_s,
        pinned=pinned,
        workdir=project.root,
        mounts=(CacheMount(cache, writable=True, fresh=rules.fresh_cache),),
        environment=tuple(sorted(recipe_resolve.env.items())),
        tree=tree,
    )


_SETTLED = (ResolutionStatus.RESOLVED, ResolutionStatus.MISSING)


def _stopped_by_the_tree(result: SandboxResult) -> bool:
    """Whether an incomplete run ended on its own, with every fetch answered: it stopped
    where the tree's own build stops (a module that does not compile), and a run of the
    same tree, keyed by its hash, would stop there again. A run cut short (the time
    limit, memory, the workspace's size, a signal) is asked again next time, as is one
    the registry failed (classified apart)."""
    cut_short = result.timed_out or result.oom_killed or result.workspace_exceeded
    return not cut_short and 0 < result.exit_code < 128


class Resolver:
    """Runs (or reuses) resolution for a project's base and patched trees."""

    def __init__(
        self,
        run: Callable[[SandboxRequest], SandboxResult],
        cache: BaselineCache,
        *,
        registry: str,
        has_cache: Callable[[str], bool],
    ) -> None:
        self._run = run
        self._cache = cache
        self.registry = registry
        self._has_cache = has_cache

    def resolve(
        self,
        project: Project,
        rules: ResolutionRules,
        request: SandboxRequest,
        oracle_stamp: str,
        *,
        note: Callable[[SandboxRequest, SandboxResult], None] | None = None,
    ) -> Resolution:
        """The project's resolution, run now or reused; ``note`` is told the run either way
        (the trial's log of its sandboxed commands)."""
        cache = request.mounts[0].cache
        key = self._key(request, oracle_stamp)

        def run() -> SandboxResult:
            return self._run(request)

        def settled(result: SandboxResult) -> bool:
            status = classify(project, result, cache, rules).status
            return status in _SETTLED or (
                status is ResolutionStatus.INCOMPLETE and _stopped_by_the_tree(result)
            )

        result = self._cache.get_or_run(
            key, run, keep=settled, valid=lambda _result: self._has_cache(cache)
        )
        if note is not None:
            note(request, result)
        return replace(classify(project, result, cache, rules), as_of=request.registry_as_of)

    def kept(self, request: SandboxRequest, oracle_stamp: str) -> bool:
        """Whether ``request``'s resolution is kept from an earlier run, its dependency
        cache still there: resolving it again would take no time."""
        cache = request.mounts[0].cache
        key = self._key(request, oracle_stamp)
        return self._cache.holds(key, valid=lambda _result: self._has_cache(cache))

    def _key(self, request: SandboxRequest, oracle_stamp: str) -> str:
        return stamp(
            {"request": request.key_data(), "registry": self.registry, "oracle": oracle_stamp}
        )
