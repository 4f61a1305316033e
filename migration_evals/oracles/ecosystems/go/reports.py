"""Go's test reports: the ``go test -json`` event stream, cross-checked against the lines
cmd/go prints and its exit status."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.ecosystems.go.summaries import cross_check_go
from migration_evals.oracles.ecosystems.interface import ReportFormat
from migration_evals.oracles.grading import (
    TestReport,
    exit_status_suite,
    parse_go_test_json,
    suite_did_not_build,
)
from migration_evals.oracles.sandbox.capture import GO_TEST_EVENTS

__all__ = ["GO_TEST_JSON"]


def read_go_test_json(result: SandboxResult, not_tests: Sequence[str]) -> TestReport:
    """The ``go test -json`` stream of one run, with the run's exit status beside it
    (``not_tests`` is unused: the report is the output, not collected files)."""
    truncated = result.output_truncated
    report = parse_go_test_json(result.output)
    if truncated:
        report = replace(report, problems=("go test output exceeded the output limit",))
    found = cross_check_go(result.output, result.exit_code, truncated=truncated)
    return exit_status_suite(replace(report, disagreements=found), result.exit_code)


GO_TEST_JSON = ReportFormat(
    GO_TEST_EVENTS,
    read_go_test_json,
    did_not_build=lambda exit_code, output: suite_did_not_build(GO_TEST_EVENTS, exit_code, output),
    # Kept by test, so that a suite that logs a lot is still read whole.
    output_events=GO_TEST_EVENTS,
)
