"""Harness-owned grading: reports, baselines, regressions, test-file protection."""

from __future__ import annotations

from migration_evals.core.model import Severity, Verdict
from migration_evals.oracles.build_summaries import Disagreement, DisagreementKind
from migration_evals.oracles.compiler_output import describe_build_stop
from migration_evals.oracles.ecosystems.go.test_events import parse_go_test_json
from migration_evals.oracles.ecosystems.maven.build_output import MAVEN_OUTPUT
from migration_evals.oracles.ecosystems.maven.surefire import parse_surefire
from migration_evals.oracles.grading import (
    TestReport,
    TestStatus,
    changed_test_files,
    exit_status_suite,
    grade_test_edits,
    grade_tests,
    parse_exit_code,
    path_matches,
)
from migration_evals.oracles.tree import ChangeKind, FileChange
from tests.oracles.build_outputs import PLUGIN_PLUGIN

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def test_exit_code_pseudo_test() -> None:
    assert parse_exit_code(0).results == {"smoke test": P}
    assert parse_exit_code(2).results == {"smoke test": F}


def test_regressions_fail_and_are_listed() -> None:
    baseline = TestReport({"a": P, "b": P, "c": F})
    patched = TestReport({"a": P, "b": F, "c": F})
    grade = grade_tests(baseline, patched)
    assert grade.verdict is Verdict.FAIL
    assert grade.regressions == ("b",)


def test_tests_failing_at_baseline_do_not_count_against_the_patch() -> None:
    baseline = TestReport({"a": P, "c": F})
    assert grade_tests(baseline, TestReport({"a": P, "c": F})).verdict is Verdict.PASS


def test_fewer_tests_fail_even_if_the_rest_pass() -> None:
    grade = grade_tests(TestReport({"a": P, "b": S}), TestReport({"a": P}))
    assert grade.verdict is Verdict.FAIL
    assert "dropped from 2 to 1" in grade.reason


def test_a_deleted_test_passing_test_goes_missing() -> None:
    grade = grade_tests(TestReport({"a": P, "b": P}), TestReport({"a": P, "z": P}))
    assert grade.regressions == ("b",)


def test_edited_test_files_fail_unless_allowed() -> None:
    same = TestReport({"a": P})
    grade = grade_tests(same, same, edited_tests=["src/test/java/ATest.java"])
    assert grade.verdict is Verdict.FAIL
    assert grade.evidence[0].path == "src/test/java/ATest.java"
    allowed = grade_tests(same, same, edited_tests=["x"], allow_test_changes=True)
    assert allowed.verdict is Verdict.PASS


def test_changed_test_files_ignore_additions() -> None:
    changes = [
        FileChange(ChangeKind.MODIFY, "src/test/java/ATest.java", "src/test/java/ATest.java"),
        FileChange(ChangeKind.ADD, None, "src/test/java/NewTest.java"),
        FileChange(ChangeKind.DELETE, "pkg/a_test.go", None),
        FileChange(ChangeKind.MODIFY, "src/main/java/A.java", "src/main/java/A.java"),
    ]
    patterns = ["src/test/**", "**/*_test.go"]
    assert changed_test_files(changes, patterns) == ["src/test/java/ATest.java", "pkg/a_test.go"]


def test_glob_semantics() -> None:
    assert path_matches("a_test.go", ["**/*_test.go"])
    assert path_matches("x/y/a_test.go", ["**/*_test.go"])
    assert not path_matches("x/a_test.go.orig", ["**/*_test.go"])
    assert not path_matches("src/main/A.java", ["src/test/**"])
    assert not path_matches("a/b.txt", ["*.txt"])


def test_a_failing_package_is_a_regression_even_if_its_tests_look_green() -> None:
    baseline = parse_go_test_json(
        '{"Action":"pass","Package":"m","Test":"TestA"}\n{"Action":"pass","Package":"m"}'
    )
    patched = parse_go_test_json(
        '{"Action":"pass","Package":"m","Test":"TestA"}\n{"Action":"fail","Package":"m"}'
    )
    grade = grade_tests(baseline, patched)
    assert grade.verdict is Verdict.FAIL
    assert grade.regressions == ("package m",)


def test_a_non_zero_exit_with_every_report_green_fails() -> None:
    """Reports a test rewrote after the fact still cannot change the exit status."""
    report = parse_surefire(
        {"TEST-x.xml": '<testsuite><testcase classname="x" name="a"/></testsuite>'}
    )
    grade = grade_tests(exit_status_suite(report, 0), exit_status_suite(report, 1))
    assert grade.verdict is Verdict.FAIL
    assert grade.reason == "the test command now exits non-zero, although no test reports a failure"
    # A suite that already exited non-zero at baseline is not held against the patch.
    assert grade_tests(exit_status_suite(report, 1), exit_status_suite(report, 1)).verdict is (
        Verdict.PASS
    )


def test_suite_regressions_scoped_to_a_project_are_not_counted_as_tests() -> None:
    """With several projects every name carries its project ("b: ..."), suites too."""
    test = {"b: x#a": TestStatus.PASSED}
    exited = TestReport(test, suites={"b: (exit status)": TestStatus.PASSED})
    grade = grade_tests(exited, TestReport(test, suites={"b: (exit status)": TestStatus.FAILED}))
    assert grade.reason == "the test command now exits non-zero, although no test reports a failure"
    package = TestReport(test, suites={"b: package m": TestStatus.PASSED})
    grade = grade_tests(package, TestReport(test, suites={"b: package m": TestStatus.FAILED}))
    assert grade.reason == "1 package(s) that passed at the base commit now fail"


def test_edits_to_protected_tests_fail_before_any_run() -> None:
    assert grade_test_edits([]) is None
    assert grade_test_edits(["a_test.go"], allow_test_changes=True) is None
    grade = grade_test_edits(["a_test.go"])
    assert grade is not None and grade.verdict is Verdict.FAIL


# -- the graded set: the base's passing tests; nothing to compare is never a pass ---------

EXIT = "(exit status)"


def test_a_base_where_no_test_ran_is_inconclusive() -> None:
    nothing = TestReport(suites={EXIT: P})
    grade = grade_tests(nothing, TestReport({"a": P}, suites={EXIT: P}))
    assert grade.verdict is Verdict.INCONCLUSIVE
    assert grade.reason == "no tests to compare: no test ran at the base commit"


def test_a_base_whose_suite_cannot_run_is_an_error() -> None:
    broken = TestReport(suites={EXIT: F})
    grade = grade_tests(broken, TestReport({"a": P}, suites={EXIT: P}))
    assert grade.verdict is Verdict.ERROR
    assert grade.reason == "the base commit's test suite does not run here"


def test_a_base_where_every_test_fails_is_inconclusive_and_lists_them() -> None:
    grade = grade_tests(TestReport({"a": F}), TestReport({"a": P}))
    assert grade.verdict is Verdict.INCONCLUSIVE
    assert grade.reason == "no tests to compare: none of the 1 test(s) passes at the base commit"
    assert [e.message for e in grade.evidence] == ["fails at the base commit, left out: a"]


def test_tests_failing_at_the_base_are_left_out_and_listed() -> None:
    grade = grade_tests(TestReport({"a": P, "c": F}), TestReport({"a": P, "c": P}))
    assert grade.verdict is Verdict.PASS
    [listed] = grade.evidence
    assert listed.message == "fails at the base commit, left out: c"
    assert listed.severity is Severity.NOTICE
    regressed = grade_tests(TestReport({"a": P, "c": F}), TestReport({"a": F, "c": F}))
    assert [e.message for e in regressed.evidence] == [
        "no longer passes: a",
        "fails at the base commit, left out: c",
    ]


def test_missing_and_newly_skipped_tests_are_named_as_such() -> None:
    grade = grade_tests(TestReport({"a": P, "b": P, "c": P}), TestReport({"a": S, "c": F, "d": P}))
    assert grade.verdict is Verdict.FAIL
    assert [e.message for e in grade.evidence] == [
        "no longer passes: a (now skipped)",
        "no longer passes: b (missing)",
        "no longer passes: c",
    ]


def _disagreeing(kind: DisagreementKind, results: dict[str, TestStatus]) -> TestReport:
    return TestReport(results, disagreements=(Disagreement(kind, f"{kind.value} differ"),))


def test_reports_disagreeing_with_the_build_fail_the_patch_and_error_the_base() -> None:
    green = TestReport({"a": P})
    for kind in (DisagreementKind.COUNTS, DisagreementKind.MISSING, DisagreementKind.EXIT):
        grade = grade_tests(green, _disagreeing(kind, {"a": P}))
        assert grade.verdict is Verdict.FAIL
        assert grade.reason == f"reports disagree with the build's own summary: {kind} differ"
        assert [e.message for e in grade.evidence] == [f"{kind} differ"]
    grade = grade_tests(_disagreeing(DisagreementKind.COUNTS, {"a": P}), green)
    assert grade.verdict is Verdict.ERROR
    assert grade.reason == "baseline reports disagree with the build's own summary: counts differ"


def test_a_base_that_ignores_its_own_failures_is_compared_not_refused() -> None:
    """The base's own POM sets testFailureIgnore and a test fails there: Maven exits 0
    at the base too, so the same in the patched run is not the patch's doing."""
    base = _disagreeing(DisagreementKind.EXIT, {"a": P, "c": F})
    grade = grade_tests(base, _disagreeing(DisagreementKind.EXIT, {"a": P, "c": F}))
    assert grade.verdict is Verdict.PASS
    assert grade.evidence[0].message == "fails at the base commit, left out: c"
    counts = _disagreeing(DisagreementKind.COUNTS, {"a": P, "c": F})
    assert grade_tests(base, counts).verdict is Verdict.FAIL


def test_a_disagreement_lists_what_regressed_but_asks_for_no_rerun() -> None:
    grade = grade_tests(TestReport({"a": P}), _disagreeing(DisagreementKind.COUNTS, {"a": F}))
    assert grade.verdict is Verdict.FAIL
    assert [e.message for e in grade.evidence] == ["counts differ", "no longer passes: a"]
    assert grade.regressions == ()


def test_a_disagreement_fails_even_where_nothing_else_would() -> None:
    """Every test green, every count equal: the disagreement alone decides."""
    same = {"a": P}
    grade = grade_tests(TestReport(same), _disagreeing(DisagreementKind.MISSING, same))
    assert grade.verdict is Verdict.FAIL
    assert grade_tests(TestReport(same), TestReport(same)).verdict is Verdict.PASS


PLUGIN_STOP = describe_build_stop(PLUGIN_PLUGIN, MAVEN_OUTPUT)


def test_tests_dropped_to_none_say_where_the_build_stopped() -> None:
    """maven-plugin-plugin 3.6.0 cannot read Java 17 class files: the build stops before
    Surefire, and the reason says so rather than only counting the missing reports."""
    baseline = exit_status_suite(TestReport({f"x.ATest#t{i}": P for i in range(89)}), 0)
    patched = exit_status_suite(parse_surefire({}), 1)
    grade = grade_tests(baseline, patched, stopped=PLUGIN_STOP)
    assert grade.verdict is Verdict.FAIL
    assert grade.reason == (
        "number of tests dropped from 89 to 0: the build stopped at "
        "maven-plugin-plugin:3.6.0:descriptor (Unsupported class file major version 61) "
        "before any test ran"
    )


def test_tests_dropped_to_some_say_where_the_build_stopped_without_claiming_none_ran() -> None:
    stop = "the build stopped at package m/kv (kv/kv.go:3:2: undefined: x)"
    grade = grade_tests(TestReport({"a": P, "b": P}), TestReport({"a": P}), stopped=stop)
    assert grade.reason == f"number of tests dropped from 2 to 1: {stop}"
    assert grade_tests(TestReport({"a": P, "b": P}), TestReport({"a": P})).reason == (
        "number of tests dropped from 2 to 1"
    )


def test_a_suite_that_regressed_alone_says_where_the_build_stopped() -> None:
    report = TestReport({"a": P})
    grade = grade_tests(
        exit_status_suite(report, 0), exit_status_suite(report, 1), stopped=PLUGIN_STOP
    )
    assert grade.reason == (
        f"the test command now exits non-zero, although no test reports a failure: {PLUGIN_STOP}"
    )
    # A failing test names the failure itself.
    failing = grade_tests(report, TestReport({"a": F}), stopped=PLUGIN_STOP)
    assert failing.reason == "1 test(s) that passed at the base commit no longer pass: a"


def test_a_regression_reason_names_the_first_test_and_how_it_fails_now() -> None:
    base = TestReport({"x.ATest#a": P, "x.ATest#b": P, "x.ATest#c": P})
    patched = TestReport(
        {"x.ATest#a": F, "x.ATest#b": F, "x.ATest#c": P},
        messages={"x.ATest#a": "Unable to make field private final byte[] value accessible"},
    )
    grade = grade_tests(base, patched)
    assert grade.reason == (
        "2 test(s) that passed at the base commit no longer pass: x.ATest#a: Unable to make "
        "field private final byte[] value accessible (and 1 more)"
    )


def test_a_pass_that_left_out_tests_failing_at_the_base_says_so_in_its_reason() -> None:
    base = TestReport({"x.ATest#a": P, "x.ATest#offline": F})
    patched = TestReport({"x.ATest#a": P, "x.ATest#offline": F})
    grade = grade_tests(base, patched)
    assert grade.verdict is Verdict.PASS
    assert grade.reason == (
        "1 of 2 tests pass; none regressed; 1 failing at the base commit here left out, unchecked"
    )
    assert [e.message for e in grade.evidence] == [
        "fails at the base commit, left out: x.ATest#offline"
    ]


def test_a_base_suite_that_cannot_run_says_where_its_build_stopped() -> None:
    stop = (
        "the build stopped at maven-surefire-plugin:3.6.1:test "
        "(TestNG support requires version 6.14.3 or above. You have declared version 6.5.2)"
    )
    baseline = exit_status_suite(TestReport(), 1)
    grade = grade_tests(baseline, baseline, base_stopped=stop)
    assert grade.verdict is Verdict.ERROR
    assert grade.reason == f"the base commit's test suite does not run here: {stop}"
