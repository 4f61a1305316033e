"""Maven's report format: a run that stopped in test-compile is told apart; a run is read
once per content."""

from __future__ import annotations

from dataclasses import replace

from migration_evals.oracles.ecosystems.maven.reports import read_surefire, stopped_in_test_compile
from migration_evals.oracles.grading import TestStatus
from tests.fakes import surefire_run

MAVEN_TEST_COMPILE_FAILED = (
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /w/src/test/java/x/ATest.java:[5,24] cannot find symbol\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0"
    ":testCompile (default-testCompile) on project calc: Compilation failure\n"
)


def test_a_run_whose_tests_did_not_compile_is_told_apart() -> None:
    assert stopped_in_test_compile(1, MAVEN_TEST_COMPILE_FAILED)
    main_failed = MAVEN_TEST_COMPILE_FAILED.replace(
        ":testCompile (default-testCompile)", ":compile"
    )
    assert not stopped_in_test_compile(1, main_failed)
    assert not stopped_in_test_compile(0, MAVEN_TEST_COMPILE_FAILED)


def test_a_run_read_again_is_the_same_report_and_any_change_reads_anew() -> None:
    passing = surefire_run({"a": True, "b": True})
    first = read_surefire(passing, ())
    assert read_surefire(replace(passing, duration_s=9.0), ()) is first  # same content
    assert set(first.results.values()) == {TestStatus.PASSED}
    failing = surefire_run({"a": True, "b": False})
    assert read_surefire(failing, ()).results["x.ATest#b"] is TestStatus.FAILED
    # The exit status, the output and the files left out are part of what is read.
    assert read_surefire(replace(passing, exit_code=1), ()).suites != first.suites
    assert read_surefire(replace(passing, output=""), ()).disagreements != first.disagreements
    assert read_surefire(passing, ("target/surefire-reports/*",)).results == {}
