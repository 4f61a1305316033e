"""Tier 3, tests: the base commit's suite on the base commit and on the patched code,
graded by the harness.

Each side runs on its own toolchain (``migration_evals.oracles.toolchains``): the baseline on the
JDK the base's build declares, as its authors ran it, the patched tree on the recipe's target. The
tests that pass in the baseline are the obligations; one that only the new toolchain
breaks is the candidate's to fix (that is the migration).

The tree graded after the patch is the *graded tree* (``Workspace.graded``): the patched
tree with every test file as the base has it and the test files the patch added left out,
so nothing the patch writes under the test paths decides what runs. Each test file the
patch touched is classified first (``migration_evals.oracles.test_edits``); an edit that weakens a
test fails before any run, and the patch's other edits are graded only where the base's tests
do not build against the patched code. The baseline (the suite on the base commit) is
cached per repository, commit, image and command. A failing test is re-run up to the
spec's ``reruns``; a test that flips is inconclusive, never a pass. A baseline that
cannot run is the infrastructure's problem (``error``); a patched tree that cannot run
its suite is the candidate's (``fail``). Each run's reports are cross-checked with the
build tool's own summary and exit status (``migration_evals.oracles.build_summaries``), and a Maven
run's with the harness's own JUnit Platform record where it ran
(``migration_evals.oracles.ecosystems.maven.junit_record``; a pass resting on Surefire's XML alone
says so), before they are graded. A suite that passes must not have lowered the coverage of the main
code by
the base's tests (``migration_evals.oracles.coverage``): the same runs measure it on both trees. The
graded run's coverage also says which of the lines the patch changed in the main code
the tests executed (``migration_evals.oracles.diff_coverage``, kept as ``diff_coverage``); a pass
none of whose changed lines of code ran says "untested change" in its reason. Recipes
that build the repository's Dockerfiles grade the images those build instead:
``migration_evals.oracles.ecosystems.dockerfile.image_tests``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from migration_evals.core.diff_coverage import DETAILS_KEY, DiffCoverage
from migration_evals.core.model import Changeset, Evidence, Severity, Tier, Verdict
from migration_evals.core.ports import Sandbox, SandboxRequest, SandboxResult
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.build_summaries import (
    Disagreement,
    TestTotals,
)
from migration_evals.oracles.builds import BuildPlan, Builds, ProjectBuild
from migration_evals.oracles.compiler_output import BuildOutputReader, describe_build_stop
from migration_evals.oracles.coverage import (
    Coverage,
    CoverageCheck,
    CoverageFormat,
    check_coverage,
    merge_coverage,
    read_coverage,
    report_files,
    tools_in,
    within_scope,
)
from migration_evals.oracles.deps import ResolutionStatus
from migration_evals.oracles.diff_coverage import (
    ProjectCoverage,
    diff_coverage,
    diff_without_coverage,
)
from migration_evals.oracles.ecosystems.registry import (
    Ecosystem,
    coverage_format,
    ecosystem_of,
    read_report,
    report_format,
)
from migration_evals.oracles.grading import (
    EXIT_STATUS,
    TestGrade,
    TestReport,
    TestStatus,
    changed_test_files,
    grade_test_edits,
    grade_tests,
)
from migration_evals.oracles.test_edits import EditKind, TestEdits, TestPolicy, classify_test_edits
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.compile import limit_failure
from migration_evals.oracles.tiers.sandboxed import (
    TrialSandbox,
    image_identity,
    sandbox_cost,
    sandbox_details,
)
from migration_evals.oracles.workspace import GradedTree

__all__ = ["TestsOracle"]


def _readable(request: SandboxRequest, result: SandboxResult) -> bool:
    """Whether a base run's report can be read whole, and so kept for later trials. A cut
    go test event stream cannot (its results are lost with it); it is not kept, so that a
    harness that keeps more of the stream reads the base again rather than the cut copy.
    A Maven run's reports are files, which a cut output leaves whole."""
    return not (result.output_truncated and request.output_events)


def _prefixed(report: TestReport, label: str | None) -> TestReport:
    """One project's report with its names scoped to the project (several projects)."""
    if label is None:
        return report

    def scope(names: Mapping[str, TestStatus]) -> dict[str, TestStatus]:
        return {f"{label}: {name}": status for name, status in names.items()}

    problems = tuple(f"{label}: {problem}" for problem in report.problems)
    disagreements = tuple(
        Disagreement(d.kind, f"{label}: {d.message}") for d in report.disagreements
    )
    messages = {f"{label}: {name}": text for name, text in report.messages.items()}
    self_execs = {f"{label}: {name}": count for name, count in report.self_execs.items()}
    offline = frozenset(f"{label}: {name}" for name in report.needs_network)
    channels = {
        label if module == "." else f"{label}: {module}": said
        for module, said in report.channels.items()
    }
    return TestReport(
        scope(report.results),
        problems,
        scope(report.suites),
        disagreements,
        messages,
        self_execs,
        offline,
        channels,
    )


def merge_reports(reports: Sequence[TestReport]) -> TestReport:
    results: dict[str, TestStatus] = {}
    suites: dict[str, TestStatus] = {}
    problems: list[str] = []
    disagreements: list[Disagreement] = []
    messages: dict[str, str] = {}
    self_execs: dict[str, int] = {}
    offline: set[str] = set()
    channels: dict[str, str] = {}
    for report in reports:
        offline.update(report.needs_network)
        channels.update(report.channels)
        results.update(report.results)
        suites.update(report.suites)
        messages.update(report.messages)
        self_execs.update(report.self_execs)
        problems += report.problems
        disagreements += report.disagreements
    return TestReport(
        results,
        tuple(problems),
        suites,
        tuple(disagreements),
        messages,
        self_execs,
        frozenset(offline),
        channels,
    )


@dataclass
class _Suite:
    """One project's suite: its baseline run and the patched tree's request and runs."""

    build: ProjectBuild | None
    label: str | None
    baseline: SandboxResult | None
    request: SandboxRequest | None  # None: the patch removed the project, and its tests
    patched: SandboxResult | None


def _removed(baseline: TestReport, suite: _Suite) -> TestReport:
    """A project the patch removed: its tests still count (they are gone), its command's
    exit status does not (there is no command to run any more)."""
    if suite.patched is not None:
        return baseline
    kept = {
        name: status for name, status in baseline.suites.items() if not name.endswith(EXIT_STATUS)
    }
    return replace(baseline, suites=kept)


def _stopped(suites: Sequence[_Suite]) -> TestGrade | None:
    """A limit hit: at baseline the infrastructure's problem, patched the candidate's."""
    for suite in suites:
        base = suite.baseline
        if base is not None:
            stopped = limit_failure(base, "baseline test run", base=base)
            if stopped:
                return TestGrade(Verdict.ERROR, stopped)
        stopped = limit_failure(suite.patched, "test suite", base=base) if suite.patched else None
        if stopped:
            return TestGrade(Verdict.FAIL, stopped)
    return None


def _build_stop(
    suites: Sequence[_Suite], reader: BuildOutputReader | None, *, at_base: bool = False
) -> str | None:
    """Where the graded run (or the base commit's, ``at_base``) of the first project whose
    suite exited non-zero stopped, as ``reader`` reads its output (``None`` when none
    did, or its output does not say): with fewer tests than at the base, that is the
    cause, not the count."""
    for suite in suites:
        run = suite.baseline if at_base else suite.patched
        if run is None or run.exit_code == 0:
            continue
        if stop := describe_build_stop(run.output, reader):
            return f"{suite.label}: {stop}" if suite.label else stop
    return None


def _test_paths(context: TrialContext) -> tuple[str, ...]:
    """The recipe's test paths: what the graded tree takes from the base commit."""
    return context.recipe.test_policy.test_paths


def _weakened(policy: TestPolicy, edits: TestEdits, context: TrialContext) -> TestGrade | None:
    """A fail for test edits the recipe does not allow, decided before any run."""
    if policy.forbids_edits:
        changes = context.workspace.apply().changes
        return grade_test_edits(changed_test_files(changes, policy.test_paths))
    offending = edits.offending
    if offending is None:
        return None
    reason = f"the patch weakens the tests: {offending.reason}"
    return TestGrade(Verdict.FAIL, reason, (offending.evidence(),))


def _unbuilt(suites: Sequence[_Suite], format_name: str) -> bool:
    """Whether the base's tests did not build against the patched code in some project."""
    return any(
        suite.patched is not None
        and report_format(format_name).did_not_build(suite.patched.exit_code, suite.patched.output)
        for suite in suites
    )


@dataclass(frozen=True, slots=True)
class _CoverageSpec:
    """The recipe's coverage guard: where its runs write the report (a path, or a pattern
    matching one report per module), in which format, the tools its resolutions must
    fetch, and how far coverage may fall."""

    format: CoverageFormat
    report: str
    tools: tuple[str, ...]
    max_drop: float

    @classmethod
    def of(cls, recipe: Recipe) -> _CoverageSpec | None:
        spec = recipe.sandbox.tests.coverage
        if spec is None:
            return None
        return cls(
            coverage_format(spec.format),
            spec.report,
            spec.tools,
            recipe.test_policy.max_coverage_drop,
        )


def _not_tests(recipe: Recipe) -> tuple[str, ...]:
    spec = _CoverageSpec.of(recipe)
    return report_files(spec.report) if spec else ()


def _module(context: TrialContext, build: ProjectBuild | None) -> str | None:
    """What of a project's coverage is its own code, as its ecosystem reads it at the base
    commit, with the files the harness made for it (a GOPATH-era go.mod) first."""
    ecosystem = ecosystem_of(context.recipe)
    if build is None or ecosystem is None:
        return None
    base = context.workspace.view().read_base

    def read(path: str) -> bytes | None:
        made = build.files.get(path)
        return made if made is not None else base(path)

    return ecosystem.coverage_scope(build.project.root, read)


# Each graded project's coverage, with its label (several projects) for what it says.
_Graded = list[tuple[str | None, ProjectCoverage]]


def _coverage(
    context: TrialContext, spec: _CoverageSpec, suites: Sequence[_Suite]
) -> tuple[CoverageCheck, _Graded]:
    """Base and patched coverage over the projects both trees have, and the drop rule;
    beside it each graded project's coverage (one the patch added too), for diff
    coverage. Whether a run had the tools comes from its resolution (the gate's log); a
    suite without a project (no dependency plan) has nothing to fetch them into."""
    base: list[tuple[str | None, Coverage]] = []
    patched: list[tuple[str | None, Coverage]] = []
    graded: _Graded = []
    patched_tools = True
    for suite in suites:
        if suite.patched is None:
            continue  # a project removed: nothing of it ran
        build = suite.build
        tools = build is None or tools_in(build.patched.resolved, spec.tools)
        scope = _module(context, suite.build)
        measured = within_scope(_read(spec, suite.patched, tools), scope)
        root = build.project.root if build is not None else ""
        graded.append((suite.label, ProjectCoverage(root, scope, measured)))
        if suite.baseline is None:
            continue  # a project added: no coverage to compare
        base_tools = build is None or tools_in(build.base.resolved, spec.tools)
        patched_tools = patched_tools and tools
        base.append((suite.label, within_scope(_read(spec, suite.baseline, base_tools), scope)))
        patched.append((suite.label, measured))
    check = check_coverage(
        merge_coverage(base), merge_coverage(patched), spec.max_drop, patched_tools=patched_tools
    )
    return check, graded


def _changed_code(
    context: TrialContext, spec: _CoverageSpec | None, graded: _Graded
) -> DiffCoverage:
    """Which changed lines of main code the graded runs executed (``spec`` None: the
    recipe measures no coverage)."""
    patch, test_paths = context.changeset.patch, _test_paths(context)
    if spec is None:
        return diff_without_coverage(
            patch, test_paths, lambda _path: False, "the recipe measures no coverage"
        )
    unmeasured = [(label, p.coverage.problem) for label, p in graded if not p.coverage.measured]
    problem = None
    if unmeasured:  # the first project's reason, as the guard says it
        label, said = unmeasured[0]
        problem = f"{label}: {said}" if label else said
    projects = [p for _, p in graded if p.coverage.measured]
    read = context.workspace.view().read
    return diff_coverage(patch, test_paths, projects, spec.format, read, problem=problem)


def _read(spec: _CoverageSpec, result: SandboxResult, tools: bool) -> Coverage:
    return read_coverage(spec.format, result.artifacts, spec.report, tools_available=tools)


_NOTICED_FILES = 10  # files whose unexecuted changed lines a pass lists as notices


def _untested_mark(grade: TestGrade, changed: DiffCoverage) -> TestGrade:
    """A pass says what the base's tests left unexecuted of the changed code: "untested
    change" in its reason when they ran none of it, and as notices, the lines they did
    not run in each file."""
    if grade.verdict is not Verdict.PASS:
        return grade
    notices = tuple(
        Evidence(f"diff coverage: {f.describe()}", f.path, f.uncovered[0], severity=Severity.NOTICE)
        for f in changed.files[:_NOTICED_FILES]
        if f.uncovered
    )
    reason = f"{grade.reason}; {changed.describe()}" if changed.untested else grade.reason
    return replace(grade, reason=reason, evidence=(*grade.evidence, *notices))


def _guarded(grade: TestGrade, check: CoverageCheck | None) -> TestGrade:
    """A passing suite that lowered coverage (or switched its measurement off) fails; one
    whose coverage could not be compared says why, so that a pass without the guard
    never reads like a guarded one."""
    if check is None or grade.verdict is not Verdict.PASS:
        return grade
    if check.verdict is not Verdict.PASS:
        return TestGrade(Verdict.FAIL, check.reason, check.evidence)
    if not check.compared:
        return replace(grade, reason=f"{grade.reason}; {check.reason}")
    return grade


_NOTICED_MODULES = 10  # modules whose XML-only channel a grade lists as notices


def _channels_said(grade: TestGrade, patched: TestReport, cross_checked: str) -> TestGrade:
    """Where a pass rests on the reports alone in some module (the harness's own record,
    such as Maven's JUnit Platform listener, did not cover it), its evidence says so: such
    a pass never reads like a cross-checked one."""
    alone = sorted((m, said) for m, said in patched.channels.items() if said != cross_checked)
    if not alone or grade.verdict is not Verdict.PASS:
        return grade
    notices = [
        Evidence(f"results rest on {said} (module {module})", severity=Severity.NOTICE)
        for module, said in alone[:_NOTICED_MODULES]
    ]
    if len(alone) > _NOTICED_MODULES:
        more = f"and {len(alone) - _NOTICED_MODULES} more module(s) on their reports alone"
        notices.append(Evidence(more, severity=Severity.NOTICE))
    return replace(grade, evidence=(*grade.evidence, *notices))


def _channel_details(baseline: TestReport, patched: TestReport) -> dict[str, object]:
    """Per side and module, what the results rest on (formats that keep a second record
    only)."""
    sides = {"baseline": baseline.channels, "patched": patched.channels}
    return {name: dict(sorted(said.items())) for name, said in sides.items() if said}


def _with_edits(
    grade: TestGrade, edits: TestEdits, graded: GradedTree | None, details: dict[str, object]
) -> TestGrade:
    """The grade with what the patch did to the tests: in the details always; in the
    reason when its preserving edits were graded ("tests changed", for the judge); in the
    evidence of a failure, the test files left out of grading that could have mattered."""
    used = sorted(graded.from_patch) if graded is not None else []
    changed = edits.changes_tests(used)
    details["test_edits"] = edits.to_dict()
    details["tests_from_patch"] = used
    details["tests_changed"] = changed
    if changed and grade.verdict is Verdict.PASS:
        reason = f"{grade.reason}; tests changed: the patch's edits of {len(used)} test file(s)"
        reason += " were graded, as the base's tests do not build against the patched code"
        grade = replace(grade, reason=reason)
    left_out = [e for e in edits.of_kind(EditKind.ADDED) if "defines" in e.reason]
    if left_out and grade.verdict is not Verdict.PASS:
        evidence = tuple(Evidence(e.reason, e.path) for e in left_out)
        grade = replace(grade, evidence=(*grade.evidence, *evidence))
    return grade


# One side's first run of each project, with the versions its resolution run reported.
_SideRuns = list[tuple[SandboxResult, Mapping[str, str]]]


def _sides(suites: Sequence[_Suite]) -> dict[str, _SideRuns]:
    """Each side's run of every project that has one, with the toolchain its own
    resolution reported: the baseline, and the patched run that was graded (the patch's
    usable test edits' run where the base's tests did not build against it). Re-runs of
    failing tests are not counted."""
    sides: dict[str, _SideRuns] = {"baseline": [], "patched": []}
    for suite in suites:
        build = suite.build
        for name, run, resolution in (
            ("baseline", suite.baseline, build.base if build else None),
            ("patched", suite.patched, build.patched if build else None),
        ):
            if run is not None:
                sides[name].append((run, resolution.toolchain if resolution else {}))
    return sides


def _side_details(side: _SideRuns, ecosystem: Ecosystem | None) -> dict[str, object]:
    """A side as the envelope keeps it: its first project's run (the baseline's tail as
    long as the patched one's, so that its summary is in it), the tool's totals summed
    over the projects and the toolchain it ran on, from its own resolution (the base may
    run on an older JDK than the patched tree)."""
    details: dict[str, object] = sandbox_details(side[0][0])
    toolchain = next((dict(found) for _, found in side if found), {})
    details["toolchain"] = toolchain
    if ecosystem is not None:
        details.update(ecosystem.toolchain_details(toolchain))
    # The build tool's own totals of each run (a module that failed before its tests
    # printed none; a cut output may have lost some).
    printed = (ecosystem.printed_totals(run.output) for run, _ in side) if ecosystem else ()
    totals = [found for found in printed if found is not None]
    if totals:
        details.update(sum(totals, TestTotals()).to_dict())
    return details


def _run_details(context: TrialContext, suites: Sequence[_Suite]) -> dict[str, object]:
    """The ``baseline`` and ``patched`` objects of the details, each side that ran."""
    ecosystem = ecosystem_of(context.recipe)
    sides = _sides(suites)
    return {name: _side_details(side, ecosystem) for name, side in sides.items() if side}


class TestsOracle:
    __test__ = False  # not a pytest test class, despite the name
    tier = Tier.TESTS

    def __init__(
        self,
        sandbox: Sandbox,
        baselines: BaselineCache | None = None,
        builds: Builds | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.baselines = baselines or BaselineCache()
        self.builds = builds or Builds(sandbox, BaselineCache(), registry="")

    @property
    def identity(self) -> str:
        return f"tests/5 {self.sandbox.identity}"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return f"{self.identity} {image_identity(self.sandbox, recipe, changeset)}"

    def key_material(self, context: TrialContext) -> Mapping[str, Any]:
        plan = self.builds.plan(context)
        return plan.key_material() if plan is not None else {}

    def evaluate(self, context: TrialContext) -> TierOutcome:
        sandboxed = TrialSandbox(self.sandbox, context)
        policy = TestPolicy.of(context.recipe.test_policy)
        # Edits that weaken the tests fail whatever the suite says: decided before paying
        # for any run.
        edits = self._edits(context, policy)
        weakened = _weakened(policy, edits, context)
        if weakened is not None:
            return self._outcome(sandboxed, [], weakened, edits=edits)
        ecosystem = ecosystem_of(context.recipe)
        own = (
            ecosystem.tests_tier(self.sandbox, self.baselines, context, policy.test_paths)
            if ecosystem is not None
            else None
        )
        if own is not None:
            return own
        plan = self.builds.plan(context)
        if plan is not None and plan.blocked is not None:
            blocked = plan.blocked
            return replace(blocked, actual_cost_usd=0.0, fabricated=plan.fabricated)
        graded = context.workspace.graded(policy.test_paths)
        return self._suite(sandboxed, None, None, plan=plan, graded=graded, edits=edits)

    @staticmethod
    def _edits(context: TrialContext, policy: TestPolicy) -> TestEdits:
        if policy.forbids_edits:
            return TestEdits()
        return classify_test_edits(context.workspace.view(), policy)

    def _suite(
        self,
        sandboxed: TrialSandbox,
        base_image: str | None,
        patched_image: str | None,
        *,
        plan: BuildPlan | None = None,
        graded: GradedTree | None = None,
        edits: TestEdits | None = None,
    ) -> TierOutcome:
        """Baseline and graded runs of each project's suite, graded; failing tests re-run.

        The graded tree is the patched code with the base commit's tests; only if those do
        not build against it are the patch's usable test edits (``TestEdits.usable``)
        taken instead, and the suites run again.
        """
        edits = edits or TestEdits()
        suites = self._run_suites(sandboxed, base_image, patched_image, plan, graded)
        runs = [run for suite in suites for run in (suite.baseline, suite.patched) if run]
        context = sandboxed.context
        format_name = context.recipe.sandbox.tests.report_format
        if graded is not None and edits.usable and _unbuilt(suites, format_name):
            graded = context.workspace.graded(_test_paths(context), edits.usable)
            runs += self._rerun_graded(sandboxed, suites, patched_image, graded)
        stopped = _stopped(suites)
        if stopped is not None:
            return self._outcome(
                sandboxed, runs, stopped, plan, edits=edits, graded=graded, suites=suites
            )

        not_tests = _not_tests(context.recipe)

        def report(result: SandboxResult | None, label: str | None) -> TestReport:
            if result is None:
                return TestReport()
            return _prefixed(read_report(format_name, result, not_tests=not_tests), label)

        at_base = merge_reports([_removed(report(s.baseline, s.label), s) for s in suites])
        patched = merge_reports([report(s.patched, s.label) for s in suites])
        ecosystem = ecosystem_of(context.recipe)
        reader = ecosystem.build_output if ecosystem is not None else None
        reports = report_format(format_name)
        grade = grade_tests(
            at_base,
            patched,
            comparisons=reports.comparisons,
            stopped=_build_stop(suites, reader),
            base_stopped=_build_stop(suites, reader, at_base=True),
        )
        if grade.regressions:
            grade = self._rerun(sandboxed, suites, format_name, grade, runs)
        spec = _CoverageSpec.of(context.recipe)
        coverage, measured = _coverage(context, spec, suites) if spec is not None else (None, [])
        changed = _changed_code(context, spec, measured)
        grade = _guarded(_untested_mark(grade, changed), coverage)
        grade = _channels_said(grade, patched, reports.cross_checked)
        return self._outcome(
            sandboxed,
            runs,
            grade,
            plan,
            edits=edits,
            graded=graded,
            coverage=coverage,
            suites=suites,
            changed=changed,
            channels=_channel_details(at_base, patched),
        )

    def _rerun_graded(
        self,
        sandboxed: TrialSandbox,
        suites: Sequence[_Suite],
        image: str | None,
        graded: GradedTree,
    ) -> list[SandboxResult]:
        """Each suite's graded run again, over ``graded``; the new runs replace the old."""
        runs = []
        for suite in suites:
            if suite.request is None:
                continue
            suite.request = sandboxed.request(
                "tests", image=image, build=suite.build, graded=graded
            )
            suite.patched = sandboxed.run(suite.request)
            runs.append(suite.patched)
        return runs

    def _run_suites(
        self,
        sandboxed: TrialSandbox,
        base_image: str | None,
        patched_image: str | None,
        plan: BuildPlan | None,
        graded: GradedTree | None = None,
    ) -> list[_Suite]:
        builds: Sequence[ProjectBuild | None] = plan.builds if plan else (None,)
        suites = []
        for build in builds:
            label = build.project.label if build and len(builds) > 1 else None
            baseline = None
            if build is None or build.base.status is not ResolutionStatus.ABSENT:
                baseline = self._baseline(sandboxed, base_image, build)
            if build is not None and build.patched.status is ResolutionStatus.ABSENT:
                suites.append(_Suite(build, label, baseline, None, None))
                continue
            request = sandboxed.request("tests", image=patched_image, build=build, graded=graded)
            suites.append(_Suite(build, label, baseline, request, sandboxed.run(request)))
        return suites

    def _baseline(
        self, sandboxed: TrialSandbox, image: str | None, build: ProjectBuild | None
    ) -> SandboxResult:
        request = sandboxed.request("tests", patched=False, image=image, build=build)
        context = sandboxed.context
        key = BaselineCache.key(
            context.changeset, request, self.sandbox.identity, context.specs.oracle_stamp
        )
        return sandboxed.reused(
            self.baselines, key, request, keep=lambda result: _readable(request, result)
        )

    def _rerun(
        self,
        sandboxed: TrialSandbox,
        suites: Sequence[_Suite],
        format_name: str,
        grade: TestGrade,
        runs: list[SandboxResult],
    ) -> TestGrade:
        """Re-run the failing suites; any regression that passes on a re-run is flaky."""
        for attempt in range(1, sandboxed.context.tier_spec(Tier.TESTS).reruns + 1):
            passing: set[str] = set()
            for suite in suites:
                if suite.request is None:
                    continue
                result = sandboxed.run(replace(suite.request, attempt=attempt))
                runs.append(result)
                report = read_report(
                    format_name, result, not_tests=_not_tests(sandboxed.context.recipe)
                )
                passing |= _prefixed(report, suite.label).passing()
            flipped = [name for name in grade.regressions if name in passing]
            if flipped:
                reason = f"flaky: {len(flipped)} test(s) failed, then passed on re-run {attempt}"
                return TestGrade(Verdict.INCONCLUSIVE, reason, grade.evidence, grade.regressions)
        return grade

    def _outcome(
        self,
        sandboxed: TrialSandbox,
        runs: list[SandboxResult],
        grade: TestGrade,
        plan: BuildPlan | None = None,
        *,
        edits: TestEdits | None = None,
        graded: GradedTree | None = None,
        coverage: CoverageCheck | None = None,
        suites: Sequence[_Suite] = (),
        changed: DiffCoverage | None = None,
        channels: Mapping[str, object] | None = None,
    ) -> TierOutcome:
        details = _run_details(sandboxed.context, suites)
        if channels:
            details["results_channels"] = dict(channels)
        details["reruns"] = max(len(runs) - 2, 0)
        marks = tuple(sandboxed.fabricated)
        if plan is not None:
            details.update(plan.details())
            marks = (*marks, *plan.fabricated)
        if coverage is not None:
            details["coverage"] = coverage.to_dict()
        if changed is not None:
            details[DETAILS_KEY] = changed.to_dict()
        if edits is not None and edits.edits:
            grade = _with_edits(grade, edits, graded, details)
        return TierOutcome(
            verdict=grade.verdict,
            reason=grade.reason,
            evidence=grade.evidence,
            actual_cost_usd=sandbox_cost(sandboxed.context, *runs),
            details=details,
            fabricated=marks,
        )
