"""Tier 3, tests: the suite on the base commit and on the patched tree, graded by the harness.

A failing test is re-run up to the spec's ``reruns``; a test that flips is inconclusive,
never a pass.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from core.model import Tier, Verdict
from core.ports import Sandbox, SandboxAction, SandboxRequest, SandboxResult
from oracles.grading import (
    TestGrade,
    TestReport,
    changed_test_files,
    grade_tests,
    parse_exit_code,
    parse_go_test_json,
    parse_surefire,
)
from oracles.tiers.base import TierOutcome, TrialContext
from oracles.tiers.sandboxed import sandbox_cost, sandbox_details, sandbox_request

__all__ = ["TestsOracle", "read_report"]


def read_report(report_format: str, result: SandboxResult) -> TestReport:
    """Parse the harness-collected report of one run in the recipe's format."""
    if report_format == "surefire":
        return parse_surefire(result.artifacts)
    if report_format == "go-test-json":
        report = parse_go_test_json(result.output)
        if result.output_truncated:
            return replace(report, problems=("go test output was truncated",))
        return report
    return parse_exit_code(result.exit_code)


class TestsOracle:
    __test__ = False  # not a pytest test class, despite the name
    tier = Tier.TESTS

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._baselines: dict[str, SandboxResult] = {}
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"tests/1 {self.sandbox.identity}"

    def _image(self, context: TrialContext, *, patched: bool) -> str | None:
        """For Dockerfile recipes the suite runs in the image built from the tree."""
        if not context.recipe.sandbox.get("build_dockerfile"):
            return None
        build = sandbox_request(context, "compile", patched=patched, action=SandboxAction.BUILD)
        return self.sandbox.run(build).image_id

    def _baseline(self, context: TrialContext) -> SandboxResult:
        request = sandbox_request(
            context, "tests", patched=False, image=self._image(context, patched=False)
        )
        key = repr(sorted(request.key_data().items()))
        with self._lock:
            cached = self._baselines.get(key)
        if cached is None:
            cached = self.sandbox.run(request)
            with self._lock:
                self._baselines[key] = cached
        return cached

    def evaluate(self, context: TrialContext) -> TierOutcome:
        report_format = str(context.recipe.sandbox["tests"].get("report_format", "exit-code"))
        baseline = self._baseline(context)
        request = sandbox_request(context, "tests", image=self._image(context, patched=True))
        patched = self.sandbox.run(request)
        runs = [baseline, patched]
        if baseline.timed_out:
            return self._outcome(
                context, runs, TestGrade(Verdict.ERROR, "baseline test run timed out")
            )
        if patched.timed_out:
            return self._outcome(context, runs, TestGrade(Verdict.FAIL, "test suite timed out"))
        grade = self._grade(
            context, read_report(report_format, baseline), read_report(report_format, patched)
        )
        if grade.regressions:
            grade = self._rerun(context, request, report_format, grade, runs)
        return self._outcome(context, runs, grade)

    def _grade(self, context: TrialContext, baseline: TestReport, patched: TestReport) -> TestGrade:
        policy = context.recipe.raw["test_policy"]
        edited = changed_test_files(context.workspace.apply().changes, policy["test_paths"])
        return grade_tests(
            baseline, patched, edited_tests=edited, allow_test_changes=policy["allow_test_changes"]
        )

    def _rerun(
        self,
        context: TrialContext,
        request: SandboxRequest,
        report_format: str,
        grade: TestGrade,
        runs: list[SandboxResult],
    ) -> TestGrade:
        """Re-run a failing suite; any regression that passes on a re-run is flaky."""
        for attempt in range(1, context.tier_spec(Tier.TESTS).reruns + 1):
            result = self.sandbox.run(replace(request, attempt=attempt))
            runs.append(result)
            passed = read_report(report_format, result).results
            flipped = [name for name in grade.regressions if passed.get(name) == "passed"]
            if flipped:
                reason = f"flaky: {len(flipped)} test(s) failed, then passed on re-run {attempt}"
                return TestGrade(Verdict.INCONCLUSIVE, reason, grade.evidence, grade.regressions)
        return grade

    def _outcome(
        self, context: TrialContext, runs: list[SandboxResult], grade: TestGrade
    ) -> TierOutcome:
        details = {
            "baseline": sandbox_details(runs[0], tail=1000),
            "patched": sandbox_details(runs[1], tail=4000),
            "reruns": len(runs) - 2,
        }
        return TierOutcome(
            verdict=grade.verdict,
            reason=grade.reason,
            evidence=grade.evidence,
            actual_cost_usd=sandbox_cost(context, *runs),
            details=details,
            fabricated=tuple(mark for run in runs for mark in run.fabricated),
        )
