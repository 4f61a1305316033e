"""Dependency resolution: what a build needs, fetched before the network-less build.

For each project and tree (base and patched), a resolution run executes the recipe's
``resolve`` command in the sandbox with the project's dependency cache mounted writable and
the registry gate as its only way out; builds and tests then mount that cache read-only and
run with no network at all. The run's outcome is read from what went through the gate
(``SandboxResult.fetches``, observed by the harness) together with the tool's own messages:

* ``resolved``: the command succeeded; the resolved set (artifacts fetched, modules in
  the build list) names the dependency tree and goes into cache keys and evidence;
* ``missing``: the registry answered 404 for artifacts the tool says it could not find
  (named as coordinates): the patch's fault when the base did not need them;
* ``unreachable`` / ``offline``: the registry failed or was not asked (offline mode):
  always infrastructure;
* ``incomplete``: the command failed for another reason (a compile error half-way through
  the lifecycle); the build decides.

Maven caches are one local repository per project and tree, filled afresh from the gate's
host store, so the resolved set is exactly what this build asked for; Go shares one module
cache (content-addressed and safe to share). Both resolve once per tree.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import IO, Any

from migration_evals.core.model import FabricatedMark
from migration_evals.core.ports import (
    CacheMount,
    RegistryFetch,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.core.spec_types import CommandStep
from migration_evals.core.stamps import sha256_hex, stamp
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.projects import Project

__all__ = [
    "BUILD_CACHE_ENV",
    "Resolution",
    "ResolutionStatus",
    "classify",
    "go_module_of",
    "maven_coordinates_of",
    "resolution_cache",
]

MODULES_MARKER = "== modules =="
# The build cache a resolution filled with the tree's compiled dependencies, by name; the
# builds and tests of that tree start from a private cache seeded with it (BUILD_CACHE_ENV).
BUILD_CACHE_ENV = "MIGRATION_EVALS_BUILD_CACHE"
_BUILD_CACHE = re.compile(r"^== build cache == ([0-9a-f]{32})$", re.MULTILINE)
_MAVEN_TEXTS = (
    re.compile(r"Could not find artifact (\S+)"),
    re.compile(r"Failure to find (\S+)"),
    # The list ends at ": " (items hold colons but no colon-space), " in " or the line.
    re.compile(r"artifacts could not be resolved: ([^\]\n]+?)(?:: | in |$)", re.MULTILINE),
    re.compile(r"Plugin (\S+) or one of its dependencies could not be resolved"),
    re.compile(r"Non-resolvable (?:parent POM|import POM)[^:]*: .*?(?:artifact|find) (\S+)"),
)
_GO_MAVEN_VERSION = re.compile(r"^Apache Maven (\S+)", re.MULTILINE)
_JAVA_VERSION = re.compile(r"^Java version: ([^,\s]+)", re.MULTILINE)
_GO_VERSION = re.compile(r"^go version (go\S+)", re.MULTILINE)
_SKIPPED_SUFFIXES = (".sha1", ".md5", ".sha256", ".sha512", ".asc", ".lastUpdated")


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
        return stamp({"resolved": list(self.resolved), "toolchain": dict(self.toolchain)})

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


# -- reading what the gate saw -----------------------------------------------------------


def maven_coordinates_of(path: str) -> str | None:
    """``group:artifact:version`` of a repository path to a POM or artifact file."""
    if path.endswith(_SKIPPED_SUFFIXES) or "maven-metadata" in path:
        return None
    parts = path.split("/")
    if len(parts) < 4:
        return None
    *group, artifact, version, filename = parts
    if not filename.startswith(f"{artifact}-{version}"):
        return None
    return f"{'.'.join(group)}:{artifact}:{version}"


def _decode_module(escaped: str) -> str:
    """Undo the module proxy's case encoding (``!a`` for ``A``)."""
    return re.sub(r"!([a-z])", lambda m: m.group(1).upper(), escaped)


def go_module_of(path: str) -> str | None:
    """``module@version`` of a module proxy path (``…/@v/v1.2.3.info|mod|zip``)."""
    if path.startswith("sumdb/") or "/@v/" not in path:
        return None
    module, _, rest = path.partition("/@v/")
    version, extension = posixpath.splitext(rest)
    if extension not in (".info", ".mod", ".zip"):
        return None
    return f"{_decode_module(module)}@{_decode_module(version)}"


def _maven_mentions(output: str) -> set[str]:
    """``g:a:v`` of every artifact Maven's error messages say it could not get."""
    mentioned: set[str] = set()
    for pattern in _MAVEN_TEXTS:
        for match in pattern.finditer(output):
            for item in re.split(r",\s*", match.group(1)):
                # Maven 3.9 follows each item with a state: "g:a:jar:1.0 (absent)".
                parts = item.strip().partition(" ")[0].strip("'\"").split(":")
                if len(parts) >= 3:
                    # g:a:v, g:a:type:v or g:a:type:classifier:v
                    mentioned.add(f"{parts[0]}:{parts[1]}:{parts[-1]}")
    return mentioned


def _missing(system: str, result: SandboxResult) -> list[str]:
    """What the registry itself said it does not have, and the tool could not do without."""
    refused = [f for f in result.fetches if f.source == "upstream" and f.status in (404, 410)]
    if system == "maven":
        said = _maven_mentions(result.output)
        found = {maven_coordinates_of(f.path) for f in refused}
        return sorted(c for c in found if c is not None and c in said)
    modules = {go_module_of(f.path) for f in refused}
    return sorted(m for m in modules if m is not None and m.split("@")[0] in result.output)


def _resolved(system: str, result: SandboxResult) -> list[str]:
    if system == "maven":
        served = (f for f in result.fetches if f.status == 200)
        found = {maven_coordinates_of(f.path) for f in served}
        return sorted(c for c in found if c is not None)
    _, marker, listing = result.output.partition(MODULES_MARKER)
    if not marker:
        return []
    return sorted({line.strip() for line in listing.splitlines() if line.strip()})


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TAIL = 2000


def _toolchain(system: str, output: str) -> dict[str, str]:
    return dict(_versions(system, output))


# A replayed resolution is classified on every trial of its base, and searching its whole
# log costs a trial more than hashing the log does.
@functools.lru_cache(maxsize=256)
def _versions(system: str, output: str) -> tuple[tuple[str, str], ...]:
    output = _ANSI.sub("", output)
    if system == "go":
        found = _GO_VERSION.search(output)
        return (("go", found.group(1)),) if found else ()
    versions = []
    if found := _GO_MAVEN_VERSION.search(output):
        versions.append(("maven", found.group(1)))
    if found := _JAVA_VERSION.search(output):
        versions.append(("java", found.group(1)))
    return tuple(versions)


def _first(fetches: Iterable[RegistryFetch], source: str) -> RegistryFetch | None:
    return next((f for f in fetches if f.source == source), None)


def classify(project: Project, result: SandboxResult, cache: str) -> Resolution:
    """A resolution run's outcome, read from the gate's log and the tool's messages."""
    system = project.system
    common: dict[str, Any] = {
        "project": project,
        "cache": cache,
        "toolchain": _toolchain(system, result.output),
        "resolved": tuple(_resolved(system, result)),
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
    missing = _missing(system, result)
    if missing:
        detail = "the registry does not have " + ", ".join(missing[:5])
        status = ResolutionStatus.MISSING
        return Resolution(status=status, missing=tuple(missing), detail=detail, **common)
    why = "timed out" if result.timed_out else f"exit {result.exit_code}"
    return Resolution(status=ResolutionStatus.INCOMPLETE, detail=f"resolution {why}", **common)


# -- keys and caches ---------------------------------------------------------------------


def resolution_cache(project: Project, tree_hash: str) -> str:
    """The cache a project's resolution writes and its builds read.

    Maven: one local repository per project and tree. What a Maven resolution fetches
    depends on the tree's sources too (a module that does not compile stops its
    lifecycle before Surefire fetches its provider), so keying it by anything less
    would make the resolved set depend on which tree happened to resolve first. The
    repository's files come from the gate's store and are linked to it afterwards, so a
    repository per tree costs little room. Go shares one module cache, safe to share.
    """
    if project.system == "maven":
        return "maven/" + sha256_hex(tree_hash + "\n" + project.root)[:32]
    return "go"


def resolution_request(
    project: Project,
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
        # A Maven repository starts empty, so the gate's log names everything in it (its
        # artifacts come from the gate's host store once fetched); Go's cache is shared.
        mounts=(CacheMount(cache, writable=True, fresh=project.system == "maven"),),
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
        request: SandboxRequest,
        oracle_stamp: str,
        *,
        note: Callable[[SandboxRequest, SandboxResult], None] | None = None,
    ) -> Resolution:
        """The project's resolution, run now or reused; ``note`` is told the run either way
        (the trial's log of its sandboxed commands)."""
        cache = request.mounts[0].cache
        key = stamp(
            {"request": request.key_data(), "registry": self.registry, "oracle": oracle_stamp}
        )

        def run() -> SandboxResult:
            return self._run(request)

        def settled(result: SandboxResult) -> bool:
            status = classify(project, result, cache).status
            return status in _SETTLED or (
                status is ResolutionStatus.INCOMPLETE and _stopped_by_the_tree(result)
            )

        result = self._cache.get_or_run(
            key, run, keep=settled, valid=lambda _result: self._has_cache(cache)
        )
        if note is not None:
            note(request, result)
        return replace(classify(project, result, cache), as_of=request.registry_as_of)
