"""Tier 2, compile: the recipe's build over each project the patch touches, in the sandbox.

Anchored on the base commit: each project is built at the base commit first, on the
toolchain its own build declares (``migration_evals.oracles.toolchains``: a Java 8 project on JDK
8), with the same command and limits (cached per repository, commit, image, command and resolved
dependencies); the patched tree then builds on the recipe's target. A base that does not
build here on its own toolchain is the infrastructure's problem (``error``, with the
build's own error lines); the candidate fails only where the base builds and the patched
tree does not. A failure's evidence always carries the build tool's
error lines (file:line where it gave them).

Before any build, no file the patch adds or changes may shadow a package or module of
the dependencies resolution fetched (``migration_evals.oracles.shadowing``, each
ecosystem's rule through the registry).

Recipes with a ``class_files`` rule also need every class file the harness finds after the
patched build to have the required major version. Recipes that build the repository's
Dockerfiles go their own way: ``migration_evals.oracles.ecosystems.dockerfile.compile``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from migration_evals.core.model import Changeset, Evidence, FabricatedMark, Tier, Verdict
from migration_evals.core.ports import UNLISTED_SPECIAL_ENTRIES, Sandbox, SandboxResult
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import BuildPlan, Builds, ProjectBuild
from migration_evals.oracles.compiler_output import (
    BuildOutputReader,
    build_error_lines,
    parse_compiler_output,
)
from migration_evals.oracles.deps import ResolutionStatus
from migration_evals.oracles.ecosystems.registry import (
    OutputCheck,
    check_shadowing,
    ecosystem_of,
)
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.sandboxed import (
    TrialSandbox,
    image_identity,
    sandbox_cost,
    sandbox_details,
)

__all__ = ["CompileOracle", "build_evidence", "limit_failure"]


def limit_failure(
    result: SandboxResult, what: str, *, base: SandboxResult | None = None
) -> str | None:
    """Why a run that hit a sandbox limit failed, or None if it hit none.

    Entries of a special kind (FIFOs, sockets, unreadable files) that ``base``, the base
    commit's run of the same step, left too are the project's own (a suite that tests
    copying a named pipe) and break no limit; only those the run adds beyond the base's
    do. A base run is weighed against itself."""
    if result.timed_out:
        return f"{what} timed out"
    if result.oom_killed:
        return f"{what} ran out of memory"
    if result.workspace_limit and result.special_entries_only:
        added = _added_special_entries(result, base)
        return f"{what} went past a limit of its sandbox: {added[0]}" if added else None
    if result.workspace_limit:
        return f"{what} went past a limit of its sandbox: {result.workspace_limit}"
    if result.workspace_exceeded:
        return f"{what} wrote more than the workspace limit"
    return None


def _added_special_entries(result: SandboxResult, base: SandboxResult | None) -> list[str]:
    """The special entries ``result`` left that ``base`` did not (all of them when there
    were more than the sandbox lists: those cannot be compared)."""
    if UNLISTED_SPECIAL_ENTRIES in result.special_entries:
        return [UNLISTED_SPECIAL_ENTRIES]
    known = set((base or result).special_entries)
    return [entry for entry in result.special_entries if entry not in known]


def build_evidence(
    result: SandboxResult, reader: BuildOutputReader | None, root: str = ""
) -> list[Evidence]:
    """A failed build's evidence, as its ecosystem's ``reader`` reads the output:
    compiler diagnostics at file:line, else the tool's own error lines, the decisive one
    first (never its banners), else the exit status. Never empty; reasons quote its first
    item."""
    found = parse_compiler_output(result.output, reader, root=root)
    if found:
        return found
    lines = build_error_lines(result.output, reader)
    if lines:
        return [Evidence(line, root or None) for line in lines]
    return [Evidence(f"the build exited {result.exit_code} and printed nothing", root or None)]


@dataclass
class _Outcome:
    """What the project builds of one trial add up to."""

    runs: list[SandboxResult] = field(default_factory=list)
    projects: list[dict[str, Any]] = field(default_factory=list)
    class_files: int = 0
    images: dict[str, str] = field(default_factory=dict)  # each image built in, by id

    def record(self, build: ProjectBuild, tree: str, result: SandboxResult, image: str) -> None:
        self.runs.append(result)
        entry = {"project": build.project.label, "tree": tree, **sandbox_details(result)}
        toolchain = build.base_toolchain if tree == "base" else build.patched_toolchain
        if toolchain is not None:
            entry["image"], entry["jdk"] = toolchain.image, toolchain.jdk
        self.projects.append(entry)
        self.images[image] = result.image_id


class CompileOracle:
    tier = Tier.COMPILE

    def __init__(
        self,
        sandbox: Sandbox,
        builds: Builds | None = None,
        baselines: BaselineCache | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.baselines = baselines or BaselineCache()
        self.builds = builds or Builds(sandbox, BaselineCache(), registry="")

    @property
    def identity(self) -> str:
        return f"compile/4 {self.sandbox.identity}"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return f"{self.identity} {image_identity(self.sandbox, recipe, changeset)}"

    def key_material(self, context: TrialContext) -> Mapping[str, Any]:
        plan = self.builds.plan(context)
        return plan.key_material() if plan is not None else {}

    def evaluate(self, context: TrialContext) -> TierOutcome:
        ecosystem = ecosystem_of(context.recipe)
        own = ecosystem.compile_tier(self.sandbox, context) if ecosystem is not None else None
        if own is not None:
            return own
        sandboxed = TrialSandbox(self.sandbox, context)
        plan = self.builds.plan(context)
        if plan is None:
            return TierOutcome(Verdict.ERROR, "the recipe names no build system")
        if plan.blocked is not None:
            return self._with_plan(plan.blocked, plan, [])
        shadows = check_shadowing(
            context.recipe, context.workspace.view(), _dependencies(context.recipe, plan)
        )
        if shadows:
            failed = TierOutcome.failed(f"the patch shadows a dependency: {shadows[0]}", shadows)
            return self._with_plan(failed, plan, [])
        return self._projects(sandboxed, plan)

    # -- projects (Maven, Go) ----------------------------------------------------------

    def _projects(self, sandboxed: TrialSandbox, plan: BuildPlan) -> TierOutcome:
        outcome = _Outcome()
        for build in plan.builds:
            decided = self._project(sandboxed, build, outcome)
            if decided is not None:
                return self._finish(sandboxed, plan, outcome, decided)
        count = outcome.class_files
        reason = "builds"
        check = _output_check(sandboxed.context.recipe)
        if count and check is not None:
            reason = f"builds; {check.summary(count)}"
        if len(plan.builds) > 1:
            reason += f" ({len(plan.builds)} projects)"
        return self._finish(sandboxed, plan, outcome, TierOutcome(Verdict.PASS, reason))

    def _project(
        self, sandboxed: TrialSandbox, build: ProjectBuild, outcome: _Outcome
    ) -> TierOutcome | None:
        """Build one project at base then patched; an outcome if this project decides."""
        label = build.project.label
        if build.patched.status is ResolutionStatus.ABSENT:
            return None  # the patch removed the whole project: nothing to build
        findings_exit = _findings_exit(sandboxed.context)
        reader = _build_output(sandboxed.context.recipe)
        base: SandboxResult | None = None
        if build.base.status is not ResolutionStatus.ABSENT:
            base, image = self._base_build(sandboxed, build)
            outcome.record(build, "base", base, image)
            if limit_failure(base, "", base=base) or base.exit_code not in (0, findings_exit):
                return _base_does_not_build(base, build, reader)
        check = _output_check(sandboxed.context.recipe)
        request = sandboxed.request("compile", inspect=check.paths if check else (), build=build)
        patched = sandboxed.run(request)
        outcome.record(build, "patched", patched, request.image)
        where = f" in {label}" if label != "." else ""
        failure = limit_failure(patched, f"build{where}", base=base)
        if failure:
            return TierOutcome.failed(failure, build_evidence(patched, reader, build.project.root))
        if patched.exit_code == findings_exit and findings_exit is not None:
            return _new_findings(base, patched, build, where, reader)
        if patched.exit_code != 0:
            evidence = build_evidence(patched, reader, build.project.root)
            reason = f"build failed{where} (exit {patched.exit_code}): {evidence[0]}"
            return TierOutcome.failed(reason, evidence)
        if check is not None and not patched.fabricated:
            problem, evidence = check.check(patched.file_heads)
            if problem:
                return TierOutcome.failed(problem, evidence)
            outcome.class_files += len(patched.file_heads)
        return None

    def _base_build(
        self, sandboxed: TrialSandbox, build: ProjectBuild
    ) -> tuple[SandboxResult, str]:
        """The base commit's build of ``build``, on its own toolchain, and the image."""
        context = sandboxed.context
        check = _output_check(context.recipe)
        request = sandboxed.request(
            "compile", patched=False, inspect=check.paths if check else (), build=build
        )
        key = BaselineCache.key(
            context.changeset, request, self.sandbox.identity, context.specs.oracle_stamp
        )
        return sandboxed.reused(self.baselines, key, request), request.image

    def _finish(
        self, sandboxed: TrialSandbox, plan: BuildPlan, outcome: _Outcome, decided: TierOutcome
    ) -> TierOutcome:
        details: dict[str, Any] = {"builds": outcome.projects}
        if outcome.runs:
            details.update(sandbox_details(outcome.runs[-1]))
            details["images"] = dict(outcome.images)
        finished = TierOutcome(
            decided.verdict,
            decided.reason,
            decided.evidence,
            actual_cost_usd=sandbox_cost(sandboxed.context, *outcome.runs),
            details=details,
            fabricated=tuple(sandboxed.fabricated),
        )
        return self._with_plan(finished, plan, outcome.runs)

    @staticmethod
    def _with_plan(outcome: TierOutcome, plan: BuildPlan, runs: list[SandboxResult]) -> TierOutcome:
        """The plan's projects, dependencies and toolchain go into every envelope."""
        details = {**outcome.details, **plan.details(), "toolchain": plan.toolchain}
        marks: tuple[FabricatedMark, ...] = (*outcome.fabricated, *plan.fabricated)
        cost = outcome.actual_cost_usd
        if cost is None and not runs:
            cost = 0.0
        return TierOutcome(
            outcome.verdict,
            outcome.reason,
            outcome.evidence,
            actual_cost_usd=cost,
            details=details,
            fabricated=marks,
        )


def _dependencies(recipe: Recipe, plan: BuildPlan) -> set[str]:
    """What the resolved builds of either tree use, as their ecosystem's shadowing rule
    names it (the Java packages of their jars, the paths of the Go modules they list)."""
    found: set[str] = set()
    ecosystem = ecosystem_of(recipe)
    if ecosystem is None:
        return found
    for build in plan.builds:
        for resolution in (build.base, build.patched):
            found.update(ecosystem.dependency_names(resolution))
    return found


def _output_check(recipe: Recipe) -> OutputCheck | None:
    """The recipe's check of its build outputs, as its ecosystem runs it (if any)."""
    ecosystem = ecosystem_of(recipe)
    return ecosystem.output_check(recipe) if ecosystem is not None else None


def _build_output(recipe: Recipe) -> BuildOutputReader | None:
    """How the recipe's build tool's output reads, as its ecosystem says."""
    ecosystem = ecosystem_of(recipe)
    return ecosystem.build_output if ecosystem is not None else None


def _findings_exit(context: TrialContext) -> int | None:
    """The exit status by which the recipe's build says "built, but its checks (go vet)
    have findings": those are compared with the base's instead of failing outright."""
    return context.recipe.sandbox.compile.findings_exit


def _finding_key(evidence: Evidence) -> tuple[str | None, str]:
    # Lines move when a patch edits a file; a finding is the same by file and message.
    return evidence.path, evidence.message


def _new_findings(
    base: SandboxResult | None,
    patched: SandboxResult,
    build: ProjectBuild,
    where: str,
    reader: BuildOutputReader | None,
) -> TierOutcome | None:
    """Checks' findings the base commit did not have are the patch's; the rest were there
    before it (``None``: this project passes)."""
    root = build.project.root
    said = parse_compiler_output(base.output, reader, root=root) if base else []
    before = {_finding_key(e) for e in said}
    found = parse_compiler_output(patched.output, reader, root=root)
    new = [e for e in found if _finding_key(e) not in before]
    if new:
        reason = f"new findings of the build's checks{where}: {new[0]}"
        return TierOutcome.failed(reason, new)
    if not found:  # the checks failed without saying where: nothing to compare
        evidence = build_evidence(patched, reader, root)
        return TierOutcome.failed(f"build checks failed{where}: {evidence[0]}", evidence)
    return None


def _base_does_not_build(
    result: SandboxResult, build: ProjectBuild, reader: BuildOutputReader | None
) -> TierOutcome:
    """The base commit's own build failed here: infrastructure, with its error lines."""
    label = build.project.label
    toolchain = build.base_toolchain
    on = f" on JDK {toolchain.jdk}" if toolchain is not None and toolchain.jdk else ""
    limit = limit_failure(result, "the base commit's build", base=result)
    evidence = build_evidence(result, reader, build.project.root)
    if limit:
        reason = f"{limit} ({label}{',' if on else ''}{on})"
    else:
        reason = f"the base commit does not build here{on} ({label}, exit {result.exit_code}): "
        reason += evidence[0].message
    return TierOutcome(Verdict.ERROR, reason, tuple(evidence))
