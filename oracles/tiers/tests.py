"""Tier 3, tests: the suite on the base commit and on the patched tree, graded by the harness.

The baseline (the suite on the base commit) is cached per repository, commit, image and
command. A failing test is re-run up to the spec's ``reruns``; a test that flips is
inconclusive, never a pass. A baseline that cannot run is the infrastructure's problem
(``error``); a patched tree that cannot run its suite is the candidate's (``fail``).
"""

from __future__ import annotations

from dataclasses import replace

from core.model import Changeset, Tier, Verdict
from core.ports import Sandbox, SandboxRequest, SandboxResult
from core.specs import Recipe
from oracles.baselines import BaselineCache
from oracles.grading import (
    TestGrade,
    TestReport,
    changed_test_files,
    exit_status_suite,
    grade_test_edits,
    grade_tests,
    parse_exit_code,
    parse_go_test_json,
    parse_surefire,
)
from oracles.tiers.base import TierOutcome, TrialContext
from oracles.tiers.compile import limit_failure
from oracles.tiers.sandboxed import (
    TrialSandbox,
    image_identity,
    sandbox_cost,
    sandbox_details,
)

__all__ = ["TestsOracle", "read_report"]


def read_report(report_format: str, result: SandboxResult) -> TestReport:
    """Parse the harness-collected report of one run in the recipe's format, with the
    run's exit status beside it."""
    if report_format == "exit-code":
        return parse_exit_code(result.exit_code)
    if report_format == "surefire":
        report = parse_surefire(result.artifacts)
    else:
        report = parse_go_test_json(result.output)
        if result.output_truncated:
            report = replace(report, problems=("go test output exceeded the output limit",))
    return exit_status_suite(report, result.exit_code)


def _built(result: SandboxResult) -> bool:
    return result.exit_code == 0 and bool(result.image_id) and not result.timed_out


class TestsOracle:
    __test__ = False  # not a pytest test class, despite the name
    tier = Tier.TESTS

    def __init__(self, sandbox: Sandbox, baselines: BaselineCache | None = None) -> None:
        self.sandbox = sandbox
        self.baselines = baselines or BaselineCache()

    @property
    def identity(self) -> str:
        return f"tests/2 {self.sandbox.identity}"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return f"{self.identity} {image_identity(self.sandbox, recipe, changeset)}"

    def evaluate(self, context: TrialContext) -> TierOutcome:
        sandboxed = TrialSandbox(self.sandbox, context)
        # Edited tests fail whatever the suite says: decided before paying for any run.
        edits = grade_test_edits(self._edited(context), allow_test_changes=self._allowed(context))
        if edits is not None:
            return self._outcome(sandboxed, [], edits)
        images = self._images(sandboxed)
        if isinstance(images, TierOutcome):
            return images
        return self._suite(sandboxed, *images)

    def _images(self, sandboxed: TrialSandbox) -> tuple[str | None, str | None] | TierOutcome:
        """The images the baseline and patched suites run in: the recipe's (None), or for
        Dockerfile recipes those built from the base and patched trees."""
        if not sandboxed.context.recipe.sandbox.get("build_dockerfile"):
            return None, None
        base_build = sandboxed.run(sandboxed.build_request(patched=False))
        if not _built(base_build):
            reason = "the base commit's image does not build in this sandbox"
            return self._outcome(sandboxed, [base_build], TestGrade(Verdict.ERROR, reason))
        patched_build = sandboxed.run(sandboxed.build_request(patched=True))
        if not _built(patched_build):
            grade = TestGrade(Verdict.FAIL, "the patched image does not build")
            return self._outcome(sandboxed, [patched_build], grade)
        return base_build.image_id, patched_build.image_id

    def _suite(
        self, sandboxed: TrialSandbox, base_image: str | None, patched_image: str | None
    ) -> TierOutcome:
        """Baseline and patched runs, graded; failing tests re-run."""
        baseline = self._baseline(sandboxed, base_image)
        request = sandboxed.request("tests", image=patched_image)
        runs = [baseline, sandboxed.run(request)]
        stopped = limit_failure(baseline, "baseline test run")
        if stopped:
            return self._outcome(sandboxed, runs, TestGrade(Verdict.ERROR, stopped))
        stopped = limit_failure(runs[1], "test suite")
        if stopped:
            return self._outcome(sandboxed, runs, TestGrade(Verdict.FAIL, stopped))
        context = sandboxed.context
        report_format = str(context.recipe.sandbox["tests"].get("report_format", "exit-code"))
        grade = self._grade(
            context, read_report(report_format, baseline), read_report(report_format, runs[1])
        )
        if grade.regressions:
            grade = self._rerun(sandboxed, request, report_format, grade, runs)
        return self._outcome(sandboxed, runs, grade)

    def _baseline(self, sandboxed: TrialSandbox, image: str | None) -> SandboxResult:
        request = sandboxed.request("tests", patched=False, image=image)
        context = sandboxed.context
        key = BaselineCache.key(
            context.changeset, request, self.sandbox.identity, context.specs.oracle_stamp
        )
        return self.baselines.get_or_run(key, lambda: sandboxed.run(request))

    @staticmethod
    def _edited(context: TrialContext) -> list[str]:
        paths = context.recipe.raw["test_policy"]["test_paths"]
        return changed_test_files(context.workspace.apply().changes, paths)

    @staticmethod
    def _allowed(context: TrialContext) -> bool:
        return bool(context.recipe.raw["test_policy"]["allow_test_changes"])

    def _grade(self, context: TrialContext, baseline: TestReport, patched: TestReport) -> TestGrade:
        return grade_tests(
            baseline,
            patched,
            edited_tests=self._edited(context),
            allow_test_changes=self._allowed(context),
        )

    def _rerun(
        self,
        sandboxed: TrialSandbox,
        request: SandboxRequest,
        report_format: str,
        grade: TestGrade,
        runs: list[SandboxResult],
    ) -> TestGrade:
        """Re-run a failing suite; any regression that passes on a re-run is flaky."""
        for attempt in range(1, sandboxed.context.tier_spec(Tier.TESTS).reruns + 1):
            result = sandboxed.run(replace(request, attempt=attempt))
            runs.append(result)
            passing = read_report(report_format, result).passing()
            flipped = [name for name in grade.regressions if name in passing]
            if flipped:
                reason = f"flaky: {len(flipped)} test(s) failed, then passed on re-run {attempt}"
                return TestGrade(Verdict.INCONCLUSIVE, reason, grade.evidence, grade.regressions)
        return grade

    def _outcome(
        self, sandboxed: TrialSandbox, runs: list[SandboxResult], grade: TestGrade
    ) -> TierOutcome:
        names = ["baseline", "patched"] if len(runs) > 1 else ["build"][: len(runs)]
        details: dict[str, object] = {
            name: sandbox_details(run, tail=1000 if name == "baseline" else 4000)
            for name, run in zip(names, runs, strict=False)
        }
        details["reruns"] = max(len(runs) - 2, 0)
        return TierOutcome(
            verdict=grade.verdict,
            reason=grade.reason,
            evidence=grade.evidence,
            actual_cost_usd=sandbox_cost(sandboxed.context, *runs),
            details=details,
            fabricated=tuple(sandboxed.fabricated),
        )
