"""Maven's test reports: Surefire and Failsafe XML, cross-checked against the totals
Maven prints and the record the harness's JUnit Platform listener keeps."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.ecosystems.interface import ReportFormat
from migration_evals.oracles.ecosystems.maven.junit_record import (
    LISTENED,
    RECORD_FILES,
    cross_check_record,
    listener_lost,
    record_files,
)
from migration_evals.oracles.ecosystems.maven.summaries import cross_check_surefire
from migration_evals.oracles.ecosystems.maven.surefire import parse_surefire
from migration_evals.oracles.grading import TestReport, exit_status_suite, path_matches

__all__ = ["SUREFIRE"]


def read_surefire(result: SandboxResult, not_tests: Sequence[str]) -> TestReport:
    """The Surefire XML reports of one run (``not_tests``: collected files that are no
    test reports), with the run's exit status beside them."""
    return _read_surefire(
        tuple(result.artifacts.items()),
        result.output,
        result.exit_code,
        result.output_truncated,
        tuple(not_tests),
    )


# Every trial on a base commit reads the base's run, and a trial's two sides often report
# alike: a run is read once per content (all of it is the key), and the report shared (a
# TestReport is never changed, only replaced). Few are kept: a run's output can be large.
@functools.lru_cache(maxsize=16)
def _read_surefire(
    artifacts: tuple[tuple[str, str], ...],
    output: str,
    exit_code: int,
    truncated: bool,
    not_tests: tuple[str, ...],
) -> TestReport:
    skipped = (*not_tests, *RECORD_FILES)
    reports = {p: t for p, t in artifacts if not path_matches(p, skipped)}
    report = parse_surefire(reports)
    found = cross_check_surefire(reports, output, exit_code, truncated=truncated)
    # The harness's listener's record, where it ran, must agree with the reports.
    record = cross_check_record(reports, record_files(dict(artifacts)), output)
    found = (*found, *record.disagreements)
    report = replace(report, channels=record.channels, disagreements=found)
    return exit_status_suite(report, exit_code)


# Maven stops in test-compile: the test sources do not compile against the main code.
_MAVEN_TEST_COMPILE = re.compile(
    r"^\[ERROR\] Failed to execute goal \S+:maven-compiler-plugin:\S+:testCompile .*"
    r"(Compilation failure|COMPILATION ERROR)",
    re.MULTILINE,
)


def stopped_in_test_compile(exit_code: int, output: str) -> bool:
    """Whether a failed run stopped in test-compile, so no test of the base's ran."""
    return exit_code != 0 and _MAVEN_TEST_COMPILE.search(output) is not None


SUREFIRE = ReportFormat(
    "surefire",
    read_surefire,
    did_not_build=stopped_in_test_compile,
    comparisons=(listener_lost,),
    cross_checked=LISTENED,
)
