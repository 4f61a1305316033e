"""Harness-owned test grading: pure functions over recorded reports.

Results come from machine reports the harness collects (Surefire XML, ``go test -json``
events), never from text lines a patch could print. A patched tree passes only if every
test that passed at the baseline still passes, the number of tests did not drop, and no
test file was modified or deleted (unless the recipe allows it).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from core.model import Evidence, Verdict
from oracles.tree import ChangeKind, FileChange

__all__ = [
    "TestGrade",
    "TestReport",
    "TestStatus",
    "changed_test_files",
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


@dataclass(frozen=True, slots=True)
class TestReport:
    """Each test's final status, plus anything that made the report unreadable."""

    __test__ = False

    results: Mapping[str, TestStatus] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def with_status(self, status: TestStatus) -> set[str]:
        return {name for name, value in self.results.items() if value is status}

    def to_dict(self) -> dict[str, object]:
        counts = {s.value: len(self.with_status(s)) for s in TestStatus}
        return {"tests": len(self.results), **counts, "problems": list(self.problems)}


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
    """Read ``go test -json`` events; lines that are not events (build output) are ignored."""
    results: dict[str, TestStatus] = {}
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict) or not event.get("Test"):
            continue
        status = _GO_FINAL.get(str(event.get("Action")))
        if status is not None:
            results[f"{event.get('Package', '')}.{event['Test']}"] = status
    return TestReport(results)


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
    return [Evidence(f"test no longer passes: {name}") for name in sorted(names)[:limit]]


def grade_tests(
    baseline: TestReport,
    patched: TestReport,
    *,
    edited_tests: Sequence[str] = (),
    allow_test_changes: bool = False,
) -> TestGrade:
    """Compare the patched run against the baseline run (both harness-parsed)."""
    problems = baseline.problems + patched.problems
    if problems:
        return TestGrade(Verdict.ERROR, f"test reports unreadable: {problems[0]}")
    if edited_tests and not allow_test_changes:
        evidence = tuple(Evidence("test file modified or deleted", path) for path in edited_tests)
        return TestGrade(
            Verdict.FAIL, f"the patch edits {len(edited_tests)} test file(s)", evidence
        )
    before, after = len(baseline.results), len(patched.results)
    if after < before:
        return TestGrade(Verdict.FAIL, f"number of tests dropped from {before} to {after}")
    regressions = baseline.with_status(TestStatus.PASSED) - patched.with_status(TestStatus.PASSED)
    if regressions:
        reason = f"{len(regressions)} test(s) that passed at the base commit no longer pass"
        return TestGrade(
            Verdict.FAIL, reason, tuple(_listed(regressions)), tuple(sorted(regressions))
        )
    passed = len(patched.with_status(TestStatus.PASSED))
    return TestGrade(Verdict.PASS, f"{passed} of {after} tests pass; none regressed")
