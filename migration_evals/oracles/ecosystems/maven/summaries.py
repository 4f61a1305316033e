"""Maven's own account of a test run (each Surefire/Failsafe execution's ``Results:``
totals, ``maven.test.failure.ignore``, its reactor result) and its cross-check with the XML
reports and the exit status (``migration_evals.oracles.build_summaries``)."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from migration_evals.oracles.build_summaries import (
    Counts,
    Disagreement,
    DisagreementKind,
    TestTotals,
    unreadable,
)

__all__ = ["MavenLog", "cross_check_surefire", "parse_maven_log", "surefire_counts"]

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


# A base's test run is read again by every trial on it (its totals, its cross-check):
# read once per output (the log is shared, read-only).
@functools.lru_cache(maxsize=64)
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
    return MavenLog(MappingProxyType(modules), ignored, failed, MappingProxyType(printed))


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
        return unreadable("the build's")
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
