"""Go's test reports: the ``go test -json`` event stream, cross-checked against the lines
cmd/go prints and its exit status."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.ecosystems.go.capture import GO_TEST_EVENTS, GoTestEvents
from migration_evals.oracles.ecosystems.go.summaries import cross_check_go
from migration_evals.oracles.ecosystems.go.test_events import (
    more_self_executions,
    parse_go_test_json,
)
from migration_evals.oracles.ecosystems.interface import ReportFormat
from migration_evals.oracles.grading import TestReport, exit_status_suite

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


# go test's line for a package whose test binary did not build (as text, or in -json
# output as a package's own output event, which a running test cannot write).
_GO_BUILD_FAILED = re.compile(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]$")


def _go_build_failures(output: str) -> set[str]:
    failed: set[str] = set()
    tested: set[str] = set()
    for line in output.splitlines():
        text, package = line, ""
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("Test"):
                tested.add(str(event.get("Package", "")))
                continue
            text, package = str(event.get("Output", "")), str(event.get("Package", ""))
        found = _GO_BUILD_FAILED.match(text.strip())
        if found and (not package or package == found[1]):
            failed.add(found[1])
    return failed - tested


def stopped_in_a_package_build(exit_code: int, output: str) -> bool:
    """Whether a failed run has a package whose test binary did not build, so none of its
    tests ran."""
    return exit_code != 0 and bool(_go_build_failures(output))


GO_TEST_JSON = ReportFormat(
    GO_TEST_EVENTS,
    read_go_test_json,
    did_not_build=stopped_in_a_package_build,
    comparisons=(more_self_executions,),
    # Kept by test, so that a suite that logs a lot is still read whole.
    output_events=GO_TEST_EVENTS,
    capture=GoTestEvents,
)
