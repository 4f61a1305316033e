"""The recipes' report globs reach every module's reports, wherever the module lives."""

from __future__ import annotations

import io
import tarfile

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.build_summaries import DisagreementKind
from migration_evals.oracles.ecosystems.maven.summaries import cross_check_surefire
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.sandbox.archives import read_workspace

REPORT = b"<testsuite><testcase classname='x.T' name='a'/></testsuite>"
MODULE_REPORTS = [
    "target/surefire-reports/TEST-x.Root.xml",
    "core/target/surefire-reports/TEST-x.Core.xml",
    "services/api/impl/target/surefire-reports/TEST-x.Impl.xml",
    "a/b/c/d/e/f/target/surefire-reports/TEST-x.Deep.xml",
]


def _workspace(names: list[str]) -> list[bytes]:
    """The engine's archive stream of a run's folder holding ``names``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(f"tree/{name}")
            info.size = len(REPORT)
            tar.addfile(info, io.BytesIO(REPORT))
    return [buffer.getvalue()]


def test_every_modules_surefire_reports_are_collected_at_any_depth(specs: SpecSet) -> None:
    collect = specs.recipe("java8-to-17").sandbox.tests.collect
    noise = ["core/target/surefire-reports/x.Core.txt", "core/src/test/TEST-x.xml"]
    reading = read_workspace(
        _workspace([*MODULE_REPORTS, *noise]),
        collect=collect,
        inspect=(),
        per_file=1000,
        total=10_000,
    )
    assert sorted(reading.artifacts) == sorted(MODULE_REPORTS)
    assert all(path_matches(name, collect) for name in MODULE_REPORTS)


def test_failsafe_reports_are_not_collected_by_the_java_recipe(specs: SpecSet) -> None:
    """Its test command (``mvn test``) stops before Failsafe's phases; a build that binds
    Failsafe to the test phase prints Failsafe totals no collected report matches, and
    the cross-check refuses that run rather than grading it on Surefire's alone."""
    collect = specs.recipe("java8-to-17").sandbox.tests.collect
    assert not path_matches("it/target/failsafe-reports/TEST-x.IT.xml", collect)
    log = (
        "[INFO] --- surefire:3.5.2:test (default-test) @ it ---\n[INFO] Results:\n"
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n"
        "[INFO] --- failsafe:3.5.2:integration-test (default) @ it ---\n[INFO] Results:\n"
        "[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0\n"
    )
    surefire_only = {"it/target/surefire-reports/TEST-x.T.xml": REPORT.decode()}
    [found] = cross_check_surefire(surefire_only, log, exit_code=0)
    assert found.kind is DisagreementKind.COUNTS
    assert "it (failsafe): 2 run" in found.message
