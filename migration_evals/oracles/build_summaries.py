"""What the build tool itself printed about a test run, and whether the reports agree.

Tier 3 grades from machine reports (Surefire/Failsafe XML, ``go test -json`` events). The
tool prints its own account beside them: Maven's ``Results:`` block per module
(``Tests run: N, Failures: F, Errors: E, Skipped: S``) and its reactor result, ``go test``'s
per-package ``ok``/``FAIL`` lines and ``--- FAIL:`` lines. The candidate's code can write
reports and print lines, but it cannot make every account agree with a lie, nor set the
exit status Maven's or Go's own process returns. So any disagreement between the reports,
the printed summaries and the exit status is never a pass: a report saying all passed
while the build printed a failure, counts that differ, a package with no result, or a run
that exits 0 with a failure logged (``maven.test.failure.ignore``).

A log cut by the output limit cannot be checked against anything, so it is a
disagreement too: padding the output cannot hide the summary.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from migration_evals.oracles.ecosystems.go.framing import GO_FAILED_TEST

__all__ = [
    "Counts",
    "Disagreement",
    "DisagreementKind",
    "GoLog",
    "MavenLog",
    "TestTotals",
    "cross_check_go",
    "cross_check_surefire",
    "parse_go_log",
    "parse_maven_log",
    "surefire_counts",
]


class DisagreementKind(StrEnum):
    """``exit`` (a failure logged, exit status 0) is a setting a base may have itself;
    the others mean the reports cannot be read for sure."""

    COUNTS = "counts"
    MISSING = "missing"
    EXIT = "exit"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Disagreement:
    kind: DisagreementKind
    message: str


@dataclass(frozen=True, slots=True)
class Counts:
    """Tests run (skipped included), failed (failures and errors) and skipped."""

    run: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.run + other.run, self.failed + other.failed, self.skipped + other.skipped
        )

    def describe(self) -> str:
        return f"{self.run} run, {self.failed} failed, {self.skipped} skipped"


@dataclass(frozen=True, slots=True)
class TestTotals:
    """A run's totals as the tool prints them, for people to read (``Counts`` is what the
    cross-checks compare): run (skipped included), failures, errors and skipped apart, as
    Surefire words them. go test has no errors: a test passes, fails or is skipped."""

    __test__ = False  # not a pytest test class, despite the name

    run: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0

    def __add__(self, other: TestTotals) -> TestTotals:
        return TestTotals(
            self.run + other.run,
            self.failures + other.failures,
            self.errors + other.errors,
            self.skipped + other.skipped,
        )

    def counts(self) -> Counts:
        return Counts(self.run, self.failures + self.errors, self.skipped)

    def to_dict(self) -> dict[str, int]:
        return {
            "tests_run": self.run,
            "tests_failed": self.failures,
            "tests_errors": self.errors,
            "tests_skipped": self.skipped,
        }


# -- Maven --------------------------------------------------------------------------------

_LEVEL = r"(?:\[(?:INFO|WARNING|ERROR)\] )?"
# "--- surefire:3.5.2:test (default-test) @ core ---" (Maven 3.9) or the plugin's
# artifactId ("maven-surefire-plugin:2.22.2:test") before it.
_MOJO = re.compile(
    rf"^{_LEVEL}--- (?P<plugin>\S+?):[^:\s]+:(?P<goal>[\w-]+) \([^)]*\) @ (?P<module>\S+) ---$"
)
_RESULTS = re.compile(rf"^{_LEVEL}Results ?:$")
_TOTALS = re.compile(
    rf"^{_LEVEL}Tests run: (?P<run>\d+), Failures: (?P<failures>\d+), Errors: (?P<errors>\d+),"
    r" Skipped: (?P<skipped>\d+)(?:, Flakes: \d+)?$"
)
_IGNORED = re.compile(rf"^{_LEVEL}There (?:are|were) test failures")
_BUILD = re.compile(r"^\[(?:INFO|ERROR)\] BUILD (?P<result>SUCCESS|FAILURE)$")
_REACTOR = re.compile(r"^\[(?:INFO|ERROR)\] (?P<module>\S.*?) \.+ ?(?P<status>FAILURE)\b")


@dataclass(frozen=True, slots=True)
class MavenLog:
    """Maven's own account: each test execution's ``Results:`` totals, keyed
    ``"<module> (<plugin>)"``, whether it said failures were ignored, and its result.
    ``printed`` keeps the same totals with failures and errors apart."""

    modules: Mapping[str, Counts] = field(default_factory=dict)
    failures_ignored: bool = False
    build_failed: bool = False
    printed: Mapping[str, TestTotals] = field(default_factory=dict)

    def total(self) -> Counts:
        return sum(self.modules.values(), Counts())

    def printed_total(self) -> TestTotals:
        """Summed over the reactor's executions; a module that stopped before its tests
        printed none and adds nothing."""
        return sum(self.printed.values(), TestTotals())


def _test_plugin(plugin: str) -> str | None:
    for name in ("surefire", "failsafe"):
        if name in plugin:
            return name
    return None


def parse_maven_log(output: str) -> MavenLog:
    """The totals after each Surefire/Failsafe execution's ``Results:`` line (the last one
    in that execution wins: lines a test printed come before Maven's own block)."""
    printed: dict[str, TestTotals] = {}
    section: str | None = None
    in_results = ignored = failed = False
    for raw in output.splitlines():
        line = raw.rstrip()
        if mojo := _MOJO.match(line):
            plugin = _test_plugin(mojo["plugin"])
            goal_runs = mojo["goal"] in {"test", "integration-test"}
            section = f"{mojo['module']} ({plugin})" if plugin and goal_runs else None
            in_results = False
        elif section and _RESULTS.match(line):
            in_results = True
        elif section and in_results and (totals := _TOTALS.match(line)):
            printed[section] = TestTotals(
                *(int(totals[k]) for k in ("run", "failures", "errors", "skipped"))
            )
        ignored = ignored or bool(_IGNORED.match(line))
        failed = failed or bool(_BUILD.match(line) and "FAILURE" in line)
        failed = failed or bool(_REACTOR.match(line))
    modules = {section: totals.counts() for section, totals in printed.items()}
    return MavenLog(modules, ignored, failed, printed)


def _case_counts(case: ET.Element) -> Counts:
    children = {child.tag.rsplit("}", 1)[-1] for child in case}
    failed = bool(children & {"failure", "error"})
    return Counts(1, int(failed), int(not failed and "skipped" in children))


def surefire_counts(artifacts: Mapping[str, str]) -> Counts:
    """Test cases in the collected XML reports, as Surefire counts them (unreadable
    reports are the report parser's problem and count nothing here)."""
    total = Counts()
    for path, text in sorted(artifacts.items()):
        if not path.endswith(".xml"):
            continue
        try:
            root = ET.fromstring(text)  # noqa: S314 - stdlib expat refuses entity expansion bombs
        except ET.ParseError:
            continue
        for case in root.iter("testcase"):
            total += _case_counts(case)
    return total


def _listing(log: MavenLog) -> str:
    return "; ".join(f"{name}: {counts.describe()}" for name, counts in sorted(log.modules.items()))


def cross_check_surefire(
    artifacts: Mapping[str, str], output: str, exit_code: int, *, truncated: bool = False
) -> tuple[Disagreement, ...]:
    """The XML reports against Maven's printed totals and its exit status."""
    if truncated:
        message = "the build's output exceeded the output limit; its summary cannot be checked"
        return (Disagreement(DisagreementKind.UNREADABLE, message),)
    log = parse_maven_log(output)
    reports, printed = surefire_counts(artifacts), log.total()
    found: list[Disagreement] = []
    if reports != printed:
        message = f"reports: {reports.describe()}; the build printed: {printed.describe()}" + (
            f" ({_listing(log)})" if log.modules else ""
        )
        kind = DisagreementKind.COUNTS if reports.run and printed.run else DisagreementKind.MISSING
        found.append(Disagreement(kind, message))
    failures = max(reports.failed, printed.failed)
    if exit_code == 0 and (failures or log.failures_ignored or log.build_failed):
        what = f"{failures} test failure(s)" if failures else "a failure"
        message = f"the build exited 0 although it logged {what}"
        found.append(Disagreement(DisagreementKind.EXIT, message))
    return tuple(found)


# -- Go -----------------------------------------------------------------------------------

# cmd/go's line per package: "ok  \tpkg\t0.01s", "FAIL\tpkg [build failed]", "?   \tpkg\t[...]".
_GO_SUMMARY = re.compile(r"^(?P<word>ok|FAIL|\?)\s+(?P<package>\S+)(?:\s|$)")
_GO_ACTIONS = {"pass", "fail", "skip"}


@dataclass
class GoLog:
    """Per package: its final actions, the summary words cmd/go printed for it, the tests
    that started, the final actions of each test, and the tests ``--- FAIL:`` lines name."""

    actions: dict[str, set[str]] = field(default_factory=dict)
    printed: dict[str, set[str]] = field(default_factory=dict)
    started: dict[str, set[str]] = field(default_factory=dict)
    tests: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    failed_lines: dict[str, set[str]] = field(default_factory=dict)
    build_failed: set[str] = field(default_factory=set)

    def packages(self) -> set[str]:
        return {*self.actions, *self.printed, *self.tests}

    def totals(self) -> TestTotals:
        """Tests and subtests by their worst final action, as the graded report reads
        them (``migration_evals.oracles.grading.parse_go_test_json``); a parent counts beside its
        subtests."""
        totals = TestTotals()
        for tests in self.tests.values():
            for seen in tests.values():
                totals += TestTotals(1, int("fail" in seen), 0, int(seen == {"skip"}))
        return totals


def _events(output: str) -> Iterable[dict[str, object]]:
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("Package"):
            yield event


def _read_output(log: GoLog, package: str, test: str, text: str) -> None:
    if failed := GO_FAILED_TEST.match(text):
        log.failed_lines.setdefault(package, set()).add(failed["test"])
    summary = _GO_SUMMARY.match(text)
    if not test and summary and summary["package"] == package:
        log.printed.setdefault(package, set()).add(summary["word"])
        if "[build failed]" in text or "[setup failed]" in text:
            log.build_failed.add(package)


def parse_go_log(output: str) -> GoLog:
    log = GoLog()
    for event in _events(output):
        package, action = str(event["Package"]), str(event.get("Action"))
        test = str(event.get("Test") or "")
        if action == "output":
            _read_output(log, package, test, str(event.get("Output", "")))
        elif action == "run" and test:
            log.started.setdefault(package, set()).add(test)
        elif action in _GO_ACTIONS and test:
            log.tests.setdefault(package, {}).setdefault(test, set()).add(action)
        elif action in _GO_ACTIONS:
            log.actions.setdefault(package, set()).add(action)
    return log


def _go_package_problems(log: GoLog, package: str) -> list[str]:
    actions, printed = log.actions.get(package, set()), log.printed.get(package, set())
    tests = log.tests.get(package, {})
    failing = sorted(name for name, seen in tests.items() if "fail" in seen)
    problems = []
    if not actions and package not in log.build_failed:
        problems.append(f"package {package} has no result in the JSON report")
    if "pass" in actions and ("fail" in actions or failing):
        problems.append(f"package {package} passed although {failing or 'it'} failed")
    if {"ok", "FAIL"} <= printed or ("ok" in printed and "fail" in actions):
        problems.append(f"go test printed ok for package {package}, which failed")
    if "FAIL" in printed and "pass" in actions:
        problems.append(f"go test printed FAIL for package {package}, reported as passed")
    every_test_passed = tests and all(seen == {"pass"} for seen in tests.values())
    unfinished = log.started.get(package, set()) - set(tests)
    if (
        "fail" in actions
        and every_test_passed
        and not unfinished
        and package not in log.build_failed
    ):
        problems.append(
            f"package {package} failed although each of its {len(tests)} test(s) passed"
        )
    for name in sorted(log.failed_lines.get(package, set())):
        if tests.get(name) == {"pass"}:
            problems.append(f"go test printed --- FAIL: {name} in {package}, reported as passed")
    return problems


def cross_check_go(
    output: str, exit_code: int, *, truncated: bool = False
) -> tuple[Disagreement, ...]:
    """The JSON's test and package actions against cmd/go's printed lines and exit status."""
    if truncated:
        message = "go test output exceeded the output limit; its summary cannot be checked"
        return (Disagreement(DisagreementKind.UNREADABLE, message),)
    log = parse_go_log(output)
    found = [
        Disagreement(DisagreementKind.COUNTS, problem)
        for package in sorted(log.packages())
        for problem in _go_package_problems(log, package)
    ]
    failed = sorted(p for p in log.packages() if "fail" in log.actions.get(p, set()))
    if exit_code == 0 and failed:
        message = f"go test exited 0 although package(s) {', '.join(failed)} failed"
        found.append(Disagreement(DisagreementKind.EXIT, message))
    return tuple(found)
