"""Maven's report format: a run that stopped in test-compile is told apart."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.maven.reports import stopped_in_test_compile

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
