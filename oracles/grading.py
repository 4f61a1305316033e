"""Harness-owned test grading: pure functions over recorded reports.

Results come from machine reports the harness collects (Surefire XML, ``go test -json``
events), never from text lines a patch could print. A patched tree passes only if every
test that passed at the baseline still passes, the number of tests did not drop, and no
test file was modified or deleted (unless the recipe allows it).

Reports are cross-checked with what the engine observed: the suite's exit status is a
"suite" result beside the tests (``(exit status)``), and so is each Go package's own
pass/fail event. Go 1.19's ``test2json`` reads the test binary's text, so code that prints
``--- PASS: TestX`` can fake a pass event; a test therefore keeps its worst status over
all its events, and a faked pass cannot hide the real failure event, the package's failure
or the non-zero exit status.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache

from core.model import Evidence, Verdict
from oracles.tree import ChangeKind, FileChange

__all__ = [
    "TestGrade",
    "TestReport",
    "TestStatus",
    "changed_test_files",
    "exit_status_suite",
    "grade_test_edits",
    "grade_tests",
    "parse_exit_code",
    "parse_go_test_json",
    "parse_surefire",
    "path_matches",
]


class TestStatus(StrEnum):
    __test__ = False  # tells pytest this is not a test class

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


_SEVERITY = {TestStatus.SKIPPED: 0, TestStatus.PASSED: 1, TestStatus.FAILED: 2}
EXIT_STATUS = "(exit status)"


def _worst(current: TestStatus | None, new: TestStatus) -> TestStatus:
    if current is None or _SEVERITY[new] > _SEVERITY[current]:
        return new
    return current


@dataclass(frozen=True, slots=True)
class TestReport:
    """Each test's status, suite-level results (packages, the exit status) and anything
    that made the report unreadable. Only ``results`` count as tests."""

    __test__ = False

    results: Mapping[str, TestStatus] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    suites: Mapping[str, TestStatus] = field(default_factory=dict)

    def with_status(self, status: TestStatus) -> set[str]:
        return {name for name, value in self.results.items() if value is status}

    def passing(self) -> set[str]:
        """Tests and suites that passed."""
        everything = {**self.suites, **self.results}
        return {name for name, value in everything.items() if value is TestStatus.PASSED}

    def to_dict(self) -> dict[str, object]:
        counts = {s.value: len(self.with_status(s)) for s in TestStatus}
        suites = {name: status.value for name, status in sorted(self.suites.items())}
        return {
            "tests": len(self.results),
            **counts,
            "suites": suites,
            "problems": list(self.problems),
        }


def exit_status_suite(report: TestReport, exit_code: int) -> TestReport:
    """``report`` with the run's exit status as a suite result."""
    status = TestStatus.PASSED if exit_code == 0 else TestStatus.FAILED
    return replace(report, suites={**report.suites, EXIT_STATUS: status})


def _surefire_case(case: ET.Element) -> tuple[str, TestStatus]:
    name = f"{case.get('classname', '')}#{case.get('name', '')}"
    children = {child.tag.rsplit("}", 1)[-1] for child in case}
    if children & {"failure", "error", "rerunFailure", "rerunError"}:
        return name, TestStatus.FAILED
    if "skipped" in children:
        return name, TestStatus.SKIPPED
    return name, TestStatus.PASSED


def parse_surefire(artifacts: Mapping[str, str]) -> TestReport:
    """Read Surefire ``TEST-*.xml`` reports; an unparsable report is a problem."""
    results: dict[str, TestStatus] = {}
    problems: list[str] = []
    for path, text in sorted(artifacts.items()):
        if not path.endswith(".xml"):
            continue
        try:
            root = ET.fromstring(text)  # noqa: S314 - stdlib expat refuses entity expansion bombs
        except ET.ParseError as exc:
            problems.append(f"{path}: unreadable test report ({exc})")
            continue
        for case in root.iter("testcase"):
            name, status = _surefire_case(case)
            # A duplicated name (re-runs inside one report) keeps its worst status.
            if results.get(name) is not TestStatus.FAILED:
                results[name] = status
    return TestReport(results, tuple(problems))


_GO_FINAL = {"pass": TestStatus.PASSED, "fail": TestStatus.FAILED, "skip": TestStatus.SKIPPED}


def parse_go_test_json(output: str) -> TestReport:
    """Read ``go test -json`` events; lines that are not events (build output) are ignored.

    Every test and every package keeps the worst status any of its events gave it.
    """
    results: dict[str, TestStatus] = {}
    packages: dict[str, TestStatus] = {}
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        status = _GO_FINAL.get(str(event.get("Action")))
        if status is None:
            continue
        package = str(event.get("Package", ""))
        if event.get("Test"):
            name = f"{package}.{event['Test']}"
            results[name] = _worst(results.get(name), status)
        elif package:
            name = f"package {package}"
            packages[name] = _worst(packages.get(name), status)
    return TestReport(results, suites=packages)


def parse_exit_code(exit_code: int, name: str = "smoke test") -> TestReport:
    """For suites with no machine report: one pseudo-test that passes on exit code 0."""
    return TestReport({name: TestStatus.PASSED if exit_code == 0 else TestStatus.FAILED})


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def path_matches(path: str, patterns: Iterable[str]) -> bool:
    """Glob match where ``*`` stays inside one directory and ``**`` spans several."""
    return any(_glob_regex(pattern).match(path) for pattern in patterns)


def changed_test_files(changes: Sequence[FileChange], test_paths: Sequence[str]) -> list[str]:
    """Existing test files the patch modified, deleted or renamed away (additions are fine)."""
    touched = []
    for change in changes:
        if change.kind is ChangeKind.ADD or change.old_path is None:
            continue
        if path_matches(change.old_path, test_paths):
            touched.append(change.old_path)
    return touched


@dataclass(frozen=True, slots=True)
class TestGrade:
    __test__ = False

    verdict: Verdict
    reason: str
    evidence: tuple[Evidence, ...] = ()
    regressions: tuple[str, ...] = ()


def _listed(names: Iterable[str], limit: int = 20) -> list[Evidence]:
    return [Evidence(f"no longer passes: {name}") for name in sorted(names)[:limit]]


def _regression_reason(regressions: set[str]) -> str:
    suites = {name for name in regressions if name == EXIT_STATUS or name.startswith("package ")}
    tests = len(regressions - suites)
    if tests:
        return f"{tests} test(s) that passed at the base commit no longer pass"
    if EXIT_STATUS in suites:
        return "the test command now exits non-zero, although no test reports a failure"
    return f"{len(suites)} package(s) that passed at the base commit now fail"


def grade_test_edits(
    edited_tests: Sequence[str], *, allow_test_changes: bool = False
) -> TestGrade | None:
    """A failure when the patch modified or deleted test files the recipe protects."""
    if not edited_tests or allow_test_changes:
        return None
    evidence = tuple(Evidence("test file modified or deleted", path) for path in edited_tests)
    return TestGrade(Verdict.FAIL, f"the patch edits {len(edited_tests)} test file(s)", evidence)


def grade_tests(
    baseline: TestReport,
    patched: TestReport,
    *,
    edited_tests: Sequence[str] = (),
    allow_test_changes: bool = False,
) -> TestGrade:
    """Compare the patched run against the baseline run (both harness-parsed).

    An unusable baseline report is the harness's problem (``error``); an unusable report
    from the patched tree, which the same harness read fine at baseline, is the
    candidate's (its code writes the reports and the output).
    """
    if baseline.problems:
        return TestGrade(Verdict.ERROR, f"baseline test report unusable: {baseline.problems[0]}")
    if patched.problems:
        return TestGrade(Verdict.FAIL, f"test report unusable: {patched.problems[0]}")
    edits = grade_test_edits(edited_tests, allow_test_changes=allow_test_changes)
    if edits is not None:
        return edits
    before, after = len(baseline.results), len(patched.results)
    if after < before:
        return TestGrade(Verdict.FAIL, f"number of tests dropped from {before} to {after}")
    regressions = baseline.passing() - patched.passing()
    if regressions:
        reason = _regression_reason(regressions)
        return TestGrade(
            Verdict.FAIL, reason, tuple(_listed(regressions)), tuple(sorted(regressions))
        )
    passed = len(patched.with_status(TestStatus.PASSED))
    return TestGrade(Verdict.PASS, f"{passed} of {after} tests pass; none regressed")
