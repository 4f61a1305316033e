"""A trial's build plan: the projects tiers 2-3 build, and their resolved dependencies.

Made once per trial, the first time a sandboxed tier needs it (and for its cache key):
the build roots that own the touched files (``Ecosystem.find_projects``), each side's
toolchain (``migration_evals.oracles.toolchains``), then dependency resolution
(``migration_evals.oracles.deps``) for each project in the base and the patched tree, at
the same time where its ecosystem's resolutions share nothing they make
(``Ecosystem.resolves_sides_together``), else the base first. A
project its ecosystem makes files for first gets them at the base commit
(``migration_evals.oracles.harness_files``; a GOPATH-era Go tree's go.mod), laid over both
trees for every run of it. Some trials are decided here, before any build:

* a layout the recipe cannot build, or a base whose own dependencies cannot be fetched
  (registry down, offline and not cached, artifacts the registry does not have), or files
  the harness could not make: ``error``;
* the patched tree needs artifacts or modules the registry does not have, and the base
  did not: ``fail``, naming them (a hallucinated version, a misspelt module).

What each tree's build adds to the recipe step's environment is its ecosystem's
(``Ecosystem.build_env``: a Go module of before 1.16 builds with ``-mod=mod``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from migration_evals.core.model import Evidence, FabricatedMark, Tier, Verdict
from migration_evals.core.ports import (
    CacheMount,
    ImageRef,
    Sandbox,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.deps import (
    BUILD_CACHE_ENV,
    Resolution,
    ResolutionStatus,
    Resolver,
    resolution_request,
)
from migration_evals.oracles.ecosystems.registry import Ecosystem, ecosystem_of
from migration_evals.oracles.harness_files import (
    BuildServices,
    MadeFiles,
    files_digest,
    noting,
    resolve_step,
)
from migration_evals.oracles.projects import Project, ProjectSet
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.toolchains import SideToolchain, patched_toolchain
from migration_evals.oracles.workspace import with_files

__all__ = ["BuildPlan", "Builds", "ProjectBuild"]

_MEMO = "build-plan"
_BESIDE_THREADS = 8


def _ecosystem(context: TrialContext) -> Ecosystem | None:
    """The recipe's ecosystem if it builds projects; None for recipes that build none of
    their own (Dockerfiles)."""
    ecosystem = ecosystem_of(context.recipe)
    return ecosystem if ecosystem is not None and ecosystem.build_system else None


@dataclass(frozen=True, slots=True)
class ProjectBuild:
    """One project and its dependencies in both trees."""

    project: Project
    base: Resolution
    patched: Resolution
    # What each tree's build adds to the recipe step's environment (its own Go's habits).
    base_env: Mapping[str, str] = field(default_factory=dict)
    patched_env: Mapping[str, str] = field(default_factory=dict)
    # The image each tree builds in (``migration_evals.oracles.toolchains``); None: the recipe's
    # image.
    base_toolchain: SideToolchain | None = None
    patched_toolchain: SideToolchain | None = None
    # The files the harness made for the project (``migration_evals.oracles.harness_files``:
    # a GOPATH-era project's go.mod), if any.
    synthesized: MadeFiles | None = None

    @property
    def files(self) -> Mapping[str, bytes]:
        """Files the harness lays over both trees for every run of this project (paths
        from the repository root) that its ecosystem made for it, or none."""
        return self.synthesized.files if self.synthesized is not None else {}

    def image(self, *, patched: bool) -> str | None:
        """The image this project's ``patched`` or base tree builds and tests in."""
        toolchain = self.patched_toolchain if patched else self.base_toolchain
        return toolchain.image if toolchain is not None else None

    def toolchains(self) -> dict[str, Any]:
        """What an envelope keeps of each side's toolchain: image, JDK and why, with the
        versions its resolution run reported (``mvn -V``, ``go version``)."""
        sides = {}
        for tree, chosen, resolution in (
            ("base", self.base_toolchain, self.base),
            ("patched", self.patched_toolchain, self.patched),
        ):
            sides[tree] = {
                **(chosen.to_dict() if chosen is not None else {}),
                "reported": dict(resolution.toolchain),
            }
        return {"project": self.project.label, **sides}


@dataclass(frozen=True, slots=True)
class BuildPlan:
    builds: tuple[ProjectBuild, ...] = ()
    blocked: TierOutcome | None = None

    @property
    def fabricated(self) -> tuple[FabricatedMark, ...]:
        marks: list[FabricatedMark] = []
        for build in self.builds:
            marks += [*build.base.fabricated, *build.patched.fabricated]
            marks += build.synthesized.fabricated if build.synthesized else ()
        return tuple(marks)

    def key_material(self) -> dict[str, Any]:
        """What tiers 2-4 also depend on: the projects and their resolved sets."""
        return {
            "projects": [build.project.label for build in self.builds],
            "dependencies": {
                build.project.label: [build.base.digest, build.patched.digest]
                for build in self.builds
            },
            "blocked": self.blocked.reason if self.blocked else None,
            **self._synthesized(lambda made: files_digest(made.files)),
        }

    def details(self) -> dict[str, Any]:
        """What an envelope keeps of the plan."""
        return {
            "projects": [build.project.label for build in self.builds],
            "dependencies": [
                {"tree": tree, **resolution.summary()}
                for build in self.builds
                for tree, resolution in (("base", build.base), ("patched", build.patched))
            ],
            "toolchains": [build.toolchains() for build in self.builds],
            **self._synthesized(lambda made: made.details()),
        }

    def _synthesized(self, show: Callable[[MadeFiles], Any]) -> dict[str, Any]:
        """``{"synthesized": {project: show(made)}}`` for the projects whose files the
        harness made; nothing otherwise, so other plans keep their keys and details."""
        made = {b.project.label: show(b.synthesized) for b in self.builds if b.synthesized}
        return {"synthesized": made} if made else {}

    @property
    def toolchain(self) -> dict[str, str]:
        for build in self.builds:
            if build.patched.toolchain:
                return dict(build.patched.toolchain)
        return {}


def _blocked(builds: list[ProjectBuild]) -> TierOutcome | None:
    """An outcome decided by resolution alone, if any."""
    for build in builds:
        base, label = build.base, build.project.label
        if base.blocked:
            return _error(f"cannot fetch the base commit's dependencies for {label}: {base.detail}")
        if base.status is ResolutionStatus.MISSING:
            listed = ", ".join(base.missing[:5])
            return _error(f"the base commit's own dependencies are not in the registry: {listed}")
    for build in builds:
        patched, label = build.patched, build.project.label
        if patched.blocked:
            return _error(
                f"cannot fetch the patched tree's dependencies for {label}: {patched.detail}"
            )
        introduced = [c for c in patched.missing if c not in build.base.missing]
        if introduced:
            evidence = [Evidence(f"not in the registry: {c}", None) for c in introduced]
            reason = "the patch needs dependencies the registry does not have: "
            return TierOutcome.failed(reason + ", ".join(introduced[:5]), evidence)
    return None


def _error(reason: str) -> TierOutcome:
    return TierOutcome(Verdict.ERROR, reason)


def _not_synthesized(made: MadeFiles) -> TierOutcome:
    """A project whose files could not be made: ``error`` either way (the registry's
    fault, or a tree the tool cannot complete: go mod tidy), with the tool's lines."""
    evidence = tuple(Evidence(line, None) for line in made.lines)
    details = {"synthesized": {made.project.label: made.details()}}
    return TierOutcome(
        Verdict.ERROR, made.failure, evidence, details=details, fabricated=made.fabricated
    )


class Builds:
    """Makes (once per trial) and hands out build plans; shared by tiers 2 and 3."""

    def __init__(self, sandbox: Sandbox, cache: BaselineCache, *, registry: str) -> None:
        self.sandbox = sandbox
        self.services = BuildServices(sandbox, cache, registry)
        self.resolver = Resolver(sandbox.run, cache, registry=registry, has_cache=sandbox.has_cache)
        # Where patched trees resolve beside their base's resolution: threads kept between
        # trials (made as needed), since starting one per trial cost a replayed trial a
        # tenth of its time. A patched resolution waiting for a free thread runs after its
        # base's, as it would without them.
        self._beside = ThreadPoolExecutor(max_workers=_BESIDE_THREADS, thread_name_prefix="resolve")

    def plan(self, context: TrialContext) -> BuildPlan | None:
        ecosystem = _ecosystem(context)
        if ecosystem is None:
            return None
        found = context.memo.get(_MEMO)
        if not isinstance(found, BuildPlan):
            found = self._make(context, ecosystem)
            context.memo[_MEMO] = found
        return found

    def _make(self, context: TrialContext, ecosystem: Ecosystem) -> BuildPlan:
        projects: ProjectSet = ecosystem.find_projects(context.workspace.view())
        if projects.unsupported:
            return BuildPlan(blocked=_error(projects.unsupported))
        builds = []
        view = context.workspace.view()
        for project in projects.projects:
            sides = (
                ecosystem.base_toolchain(context.recipe, view, project),
                patched_toolchain(context.recipe),
            )
            made = ecosystem.made_files(self.services, context, project, sides[0].image)
            if made is not None and made.failure:
                return BuildPlan(blocked=_not_synthesized(made))
            where = _Resolving(context, ecosystem, project, made)
            # The base's run is described once: it decides whether the patched tree's
            # resolves beside it, then it is the one resolved.
            base_run = self._request(where, sides[0].image, patched=False)
            beside = self._beside if self._resolves_beside(where, base_run) else None
            resolve = functools.partial(self._side, where, base_run, sides[1].image)
            base, patched = _both_sides(context, resolve, beside=beside)
            envs = (
                ecosystem.build_env(project, view.read_base),
                ecosystem.build_env(project, view.read),
            )
            if made is not None:  # the same files on both sides: the same habits
                envs = (dict(made.env), dict(made.env))
            builds.append(ProjectBuild(project, base, patched, *envs, *sides, synthesized=made))
        return BuildPlan(tuple(builds), _blocked(builds))

    def _resolves_beside(
        self, where: _Resolving, base_run: tuple[SandboxRequest, ImageRef] | None
    ) -> bool:
        """Whether the patched tree resolves beside its base's resolution: where the
        ecosystem allows it, and only when the base's has to run, for real. One kept from
        an earlier trial on the same base, or replayed, takes no time, and a thread's
        hand-over would cost more: a replayed trial lost a twentieth of its time to it."""
        if not (self.sandbox.runs_live and where.ecosystem.resolves_sides_together):
            return False
        stamp = where.context.specs.oracle_stamp
        return base_run is not None and not self.resolver.kept(base_run[0], stamp)

    def _side(
        self,
        where: _Resolving,
        base_run: tuple[SandboxRequest, ImageRef] | None,
        patched_image: str,
        *,
        patched: bool,
        note: _Note | None = None,
    ) -> Resolution:
        """The base's resolution of ``base_run``, or the patched tree's in its image."""
        run = self._request(where, patched_image, patched=True) if patched else base_run
        return self._resolve(where, run, patched=patched, note=note)

    def _resolve(
        self,
        where: _Resolving,
        run: tuple[SandboxRequest, ImageRef] | None,
        *,
        patched: bool,
        note: _Note | None = None,
    ) -> Resolution:
        """One side's resolution of ``run`` (from ``_request``): run now or reused."""
        if run is None:
            return Resolution(where.project, ResolutionStatus.ABSENT)
        request, found = run
        side = "patched" if patched else "base"
        resolution = self.resolver.resolve(
            where.project,
            where.ecosystem.resolution,
            request,
            where.context.specs.oracle_stamp,
            note=note or noting(where.context, side),
        )
        if found.fabricated:
            marks = (*resolution.fabricated, *found.fabricated)
            return replace(resolution, fabricated=marks)
        return resolution

    def _request(
        self, where: _Resolving, image: str, *, patched: bool
    ) -> tuple[SandboxRequest, ImageRef] | None:
        """One side's resolution run of the project and the image it runs in; None when
        the project is not in that side's tree."""
        context, ecosystem, project, made = (
            where.context,
            where.ecosystem,
            where.project,
            where.made,
        )
        view = context.workspace.view()
        marker = ecosystem.project_file
        path = f"{project.root}/{marker}" if project.root else marker
        files = made.files if made is not None else {}
        if path not in files and (view.read(path) if patched else view.read_base(path)) is None:
            return None
        tree_hash = with_files(context.workspace.tree_hash(patched=patched), files)
        rules = ecosystem.resolution
        cache = rules.cache(project, tree_hash)
        found = self.sandbox.resolve(image)
        request = resolution_request(
            project,
            rules,
            resolve_step(context.recipe),
            image=image,
            pinned=((image, found.id),),
            cache=cache,
            tree_hash=tree_hash,
            timeout_s=context.tier_spec(Tier.COMPILE).timeout_s,
            tree=lambda uid, gid, subdir: context.workspace.archive(
                uid, gid, patched=patched, subdir=subdir, extra=files
            ),
        )
        if ecosystem.resolves_base_as_of_its_day and not patched:
            # The base resolves against the registry of its day: a plugin version its
            # build leaves open is the one its authors got, not today's newest.
            request = replace(request, registry_as_of=context.workspace.base_committed_at())
        if made is not None and made.env:  # its builds' settings, for resolution too
            environment = {**dict(request.environment), **made.env}
            request = replace(request, environment=tuple(sorted(environment.items())))
        return request, found


_Note = Callable[[SandboxRequest, SandboxResult], None]


@dataclass(frozen=True, slots=True)
class _Resolving:
    """A project being resolved in a trial: the same for both of its sides."""

    context: TrialContext
    ecosystem: Ecosystem
    project: Project
    made: MadeFiles | None


def _both_sides(
    context: TrialContext, resolve: Callable[..., Resolution], *, beside: ThreadPoolExecutor | None
) -> tuple[Resolution, Resolution]:
    """A project's base and patched resolutions (``resolve(patched=...)``): one after the
    other, or the patched one on a thread ``beside`` the base's (a resolution mostly waits
    on the registry and on one JVM, so the two overlap well). Either way the trial's log
    notes the base's run first."""
    if beside is None:
        return resolve(patched=False), resolve(patched=True)
    runs: dict[str, list[tuple[SandboxRequest, SandboxResult]]] = {"base": [], "patched": []}

    def keep(side: str) -> _Note:
        return lambda request, result: runs[side].append((request, result))

    later = beside.submit(resolve, patched=True, note=keep("patched"))
    try:
        base = resolve(patched=False, note=keep("base"))
    except BaseException:
        later.cancel()  # not started: it never runs; started: it ends before this does
        wait([later])
        raise
    patched = later.result()
    for side, noted in runs.items():
        for request, result in noted:
            noting(context, side)(request, result)
    return base, patched


def build_request(
    base: SandboxRequest, build: ProjectBuild, *, patched: bool, environment: Mapping[str, str]
) -> SandboxRequest:
    """``base`` (a recipe step's request) run in ``build``'s project with its dependencies."""
    resolution = build.patched if patched else build.base
    environment = {**(build.patched_env if patched else build.base_env), **environment}
    if resolution.build_cache:
        environment[BUILD_CACHE_ENV] = resolution.build_cache
    return replace(
        base,
        workdir=build.project.root,
        mounts=(CacheMount(resolution.cache),) if resolution.cache else (),
        environment=tuple(sorted(environment.items())),
        dependencies=resolution.digest,
    )
