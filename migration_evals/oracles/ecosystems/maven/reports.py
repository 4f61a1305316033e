"""Maven's test reports: Surefire and Failsafe XML, cross-checked against the totals
Maven prints and the record the harness's JUnit Platform listener keeps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.ecosystems.interface import ReportFormat
from migration_evals.oracles.ecosystems.maven.junit_record import (
    RECORD_FILES,
    cross_check_record,
    record_files,
)
from migration_evals.oracles.ecosystems.maven.summaries import cross_check_surefire
from migration_evals.oracles.grading import (
    TestReport,
    exit_status_suite,
    parse_surefire,
    path_matches,
    suite_did_not_build,
)

__all__ = ["SUREFIRE"]


def read_surefire(result: SandboxResult, not_tests: Sequence[str]) -> TestReport:
    """The Surefire XML reports of one run (``not_tests``: collected files that are no
    test reports), with the run's exit status beside them."""
    skipped = (*not_tests, *RECORD_FILES)
    reports = {p: t for p, t in result.artifacts.items() if not path_matches(p, skipped)}
    report = parse_surefire(reports)
    found = cross_check_surefire(
        reports, result.output, result.exit_code, truncated=result.output_truncated
    )
    # The harness's listener's record, where it ran, must agree with the reports.
    record = cross_check_record(reports, record_files(result.artifacts), result.output)
    found = (*found, *record.disagreements)
    report = replace(report, channels=record.channels, disagreements=found)
    return exit_status_suite(report, result.exit_code)


SUREFIRE = ReportFormat(
    "surefire",
    read_surefire,
    did_not_build=lambda exit_code, output: suite_did_not_build("surefire", exit_code, output),
)
