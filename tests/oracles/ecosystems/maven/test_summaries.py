"""Maven's own account of a test run, and every way the Surefire reports can disagree
with it."""

from __future__ import annotations

from migration_evals.oracles.build_summaries import Counts, DisagreementKind, TestTotals
from migration_evals.oracles.ecosystems.maven.summaries import (
    cross_check_surefire,
    parse_maven_log,
    surefire_counts,
)

# As Maven 3.9 and Surefire 3.5 print a reactor of two modules with test executions,
# the second one failing under maven.test.failure.ignore (so the build succeeds).
MAVEN_IGNORED = """\
[INFO] --- surefire:3.5.2:test (default-test) @ ledger-core ---
[INFO] Running com.example.ledger.core.MoneyTest
[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s -- in x.MoneyTest
[INFO]
[INFO] Results:
[INFO]
[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0
[INFO]
[INFO] --- jar:3.4.2:jar (default-jar) @ ledger-core ---
[INFO] --- surefire:3.5.2:test (default-test) @ ledger-app ---
[INFO] Running com.example.ledger.app.LedgerTest
Tests run: 2, Failures: 0, Errors: 0, Skipped: 0
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! -- in x
[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   LedgerTest.balanceSumsEntries:16 expected:<7.50> but was:<-7.50>
[INFO]
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
[INFO]
[ERROR] There are test failures.
[INFO] ------------------------------------------------------------------------
[INFO] Reactor Summary for ledger-parent 1.0.0:
[INFO]
[INFO] ledger-parent ...................................... SUCCESS [  0.020 s]
[INFO] ledger-core ........................................ SUCCESS [  4.315 s]
[INFO] ledger-app ......................................... SUCCESS [  1.431 s]
[INFO] ------------------------------------------------------------------------
[INFO] BUILD SUCCESS
"""


def _xml(classname: str, *cases: str) -> str:
    """A Surefire report; each case is "pass", "fail", "error" or "skip"."""
    inner = {"pass": "", "fail": "<failure/>", "error": "<error/>", "skip": "<skipped/>"}
    body = "".join(
        f'<testcase classname="{classname}" name="t{i}">{inner[case]}</testcase>'
        for i, case in enumerate(cases)
    )
    return f"<testsuite>{body}</testsuite>"


BOTH_MODULES = {
    "core/target/surefire-reports/TEST-x.MoneyTest.xml": _xml("x.MoneyTest", *["pass"] * 3),
    "app/target/surefire-reports/TEST-x.LedgerTest.xml": _xml("x.LedgerTest", "pass", "fail"),
}


def test_maven_totals_are_read_per_test_execution_after_results() -> None:
    """The line a test printed ("Tests run: 2, ... 0") comes before Maven's own block."""
    log = parse_maven_log(MAVEN_IGNORED)
    assert log.modules == {
        "ledger-core (surefire)": Counts(3, 0, 0),
        "ledger-app (surefire)": Counts(2, 1, 0),
    }
    assert log.total() == Counts(5, 1, 0)
    assert log.failures_ignored
    assert not log.build_failed


# A reactor of two modules: core's tests run (one skipped); app's test sources do not
# compile, so it stops before Surefire runs and prints nothing.
MAVEN_STOPPED_BEFORE_TESTS = """\
[INFO] --- surefire:3.5.2:test (default-test) @ core ---
[WARNING] Tests run: 4, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.2 s -- in x.CoreTest
[INFO]
[INFO] Results:
[INFO]
[WARNING] Tests run: 4, Failures: 0, Errors: 0, Skipped: 1
[INFO]
[INFO] --- compiler:3.13.0:testCompile (default-testCompile) @ app ---
[ERROR] COMPILATION ERROR :
[ERROR] /w/app/src/test/java/x/AppTest.java:[7,5] cannot find symbol
[INFO] Reactor Summary for parent 1.0.0:
[INFO] core ............................................... SUCCESS [  2.110 s]
[INFO] app ................................................ FAILURE [  0.410 s]
[INFO] BUILD FAILURE
"""


def test_a_reactors_totals_are_summed_and_a_module_stopped_before_its_tests_adds_none() -> None:
    log = parse_maven_log(MAVEN_STOPPED_BEFORE_TESTS)
    assert log.printed == {"core (surefire)": TestTotals(4, 0, 0, 1)}
    assert log.printed_total().to_dict() == {
        "tests_run": 4,
        "tests_failed": 0,
        "tests_errors": 0,
        "tests_skipped": 1,
    }
    both = parse_maven_log(MAVEN_IGNORED + MAVEN_STOPPED_BEFORE_TESTS)
    assert both.printed_total() == TestTotals(run=9, failures=1, errors=0, skipped=1)
    assert parse_maven_log("[ERROR] BUILD FAILURE\n").printed_total() == TestTotals()


def test_maven_2_style_lines_and_failsafe_executions_are_read() -> None:
    output = (
        "[INFO] --- maven-failsafe-plugin:2.22.2:integration-test (default) @ web ---\n"
        "Results :\n\nTests run: 4, Failures: 0, Errors: 1, Skipped: 2, Flakes: 1\n"
        "[INFO] --- maven-failsafe-plugin:2.22.2:verify (default) @ web ---\n"
        "Tests run: 9, Failures: 9, Errors: 0, Skipped: 0\n"
        "[ERROR] BUILD FAILURE\n"
    )
    log = parse_maven_log(output)
    assert log.modules == {"web (failsafe)": Counts(4, 1, 2)}
    # What people read keeps Surefire's words: an error is not a failure.
    assert log.printed_total() == TestTotals(run=4, failures=0, errors=1, skipped=2)
    assert log.build_failed


def test_report_counts_follow_surefire() -> None:
    counts = surefire_counts(
        {"a/TEST-x.xml": _xml("x", "pass", "fail", "error", "skip"), "a/x.txt": "Tests run: 9"}
    )
    assert counts == Counts(4, 2, 1)


def test_reports_agreeing_with_the_build_raise_nothing() -> None:
    ignored = MAVEN_IGNORED.replace("[ERROR] There are test failures.\n", "")
    assert cross_check_surefire(BOTH_MODULES, ignored, exit_code=1) == ()


def test_exit_zero_with_failures_logged_disagrees() -> None:
    """maven.test.failure.ignore: the reports and the printed summary agree on a failure,
    and Maven exits 0."""
    [found] = cross_check_surefire(BOTH_MODULES, MAVEN_IGNORED, exit_code=0)
    assert found.kind is DisagreementKind.EXIT
    assert found.message == "the build exited 0 although it logged 1 test failure(s)"


def test_a_module_whose_reports_were_not_collected_disagrees() -> None:
    """The issue's multi-module case: only the exit status was seen, "0 of 0 tests"."""
    found = cross_check_surefire({}, MAVEN_IGNORED, exit_code=0)
    assert [d.kind for d in found] == [DisagreementKind.MISSING, DisagreementKind.EXIT]
    assert found[0].message == (
        "reports: 0 run, 0 failed, 0 skipped; the build printed: 5 run, 1 failed, 0 skipped"
        " (ledger-app (surefire): 2 run, 1 failed, 0 skipped;"
        " ledger-core (surefire): 3 run, 0 failed, 0 skipped)"
    )
    only_core = {k: v for k, v in BOTH_MODULES.items() if k.startswith("core/")}
    [counts, _exit] = cross_check_surefire(only_core, MAVEN_IGNORED, exit_code=0)
    assert counts.kind is DisagreementKind.COUNTS
    assert counts.message.startswith("reports: 3 run, 0 failed")


def test_a_report_saying_all_passed_while_the_build_printed_a_failure_disagrees() -> None:
    ledger = "app/target/surefire-reports/TEST-x.LedgerTest.xml"
    forged = {**BOTH_MODULES, ledger: _xml("x.LedgerTest", "pass", "pass")}
    output = MAVEN_IGNORED.replace("[INFO] BUILD SUCCESS", "[ERROR] BUILD FAILURE")
    [found] = cross_check_surefire(forged, output, exit_code=1)
    assert found.kind is DisagreementKind.COUNTS
    assert "reports: 5 run, 0 failed" in found.message
    assert "printed: 5 run, 1 failed" in found.message


def test_reports_without_any_printed_summary_disagree() -> None:
    [found] = cross_check_surefire(BOTH_MODULES, "[INFO] BUILD SUCCESS\n", exit_code=1)
    assert found.kind is DisagreementKind.MISSING
    assert "the build printed: 0 run" in found.message


def test_a_build_failure_with_exit_zero_disagrees() -> None:
    [found] = cross_check_surefire({}, "[ERROR] BUILD FAILURE\n", exit_code=0)
    assert found.kind is DisagreementKind.EXIT
    assert found.message == "the build exited 0 although it logged a failure"


def test_a_cut_log_cannot_be_checked() -> None:
    [found] = cross_check_surefire(BOTH_MODULES, MAVEN_IGNORED, exit_code=1, truncated=True)
    assert found.kind is DisagreementKind.UNREADABLE
