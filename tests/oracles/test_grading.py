"""Harness-owned grading: reports, baselines, regressions, test-file protection."""

from __future__ import annotations

import json

import pytest

from migration_evals.core.model import Severity, Verdict
from migration_evals.oracles.build_summaries import Disagreement, DisagreementKind
from migration_evals.oracles.compiler_output import describe_build_stop
from migration_evals.oracles.grading import (
    TestReport,
    TestStatus,
    changed_test_files,
    exit_status_suite,
    grade_test_edits,
    grade_tests,
    parse_exit_code,
    parse_go_test_json,
    parse_surefire,
    path_matches,
    stable_test_name,
    suite_did_not_build,
)
from migration_evals.oracles.tree import ChangeKind, FileChange
from tests.oracles.build_outputs import PLUGIN_PLUGIN

SUREFIRE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x.CalcTest" tests="3" failures="1" errors="0" skipped="1">
  <testcase name="adds" classname="x.CalcTest" time="0.01"/>
  <testcase name="divides" classname="x.CalcTest" time="0.01">
    <failure message="expected 2">stack</failure>
  </testcase>
  <testcase name="later" classname="x.CalcTest"><skipped/></testcase>
</testsuite>
"""

GO_EVENTS = "\n".join(
    [
        '{"Action":"run","Package":"m/kv","Test":"TestPut"}',
        '{"Action":"output","Package":"m/kv","Test":"TestPut","Output":"--- PASS: TestFake\\n"}',
        '{"Action":"pass","Package":"m/kv","Test":"TestPut"}',
        '{"Action":"fail","Package":"m/kv","Test":"TestGet"}',
        "# m/kv [build output is not an event]",
        '{"Action":"pass","Package":"m/kv"}',
    ]
)

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def test_surefire_reports_are_parsed_by_test_case() -> None:
    report = parse_surefire({"target/surefire-reports/TEST-x.CalcTest.xml": SUREFIRE})
    assert report.results == {"x.CalcTest#adds": P, "x.CalcTest#divides": F, "x.CalcTest#later": S}


def test_an_unreadable_report_is_a_problem_not_a_pass() -> None:
    """Unusable at baseline: the harness's problem. Unusable only after the patch, whose
    code writes the reports: the candidate's."""
    report = parse_surefire({"TEST-x.xml": "<testsuite><testcase"})
    assert report.problems
    assert grade_tests(TestReport(), report).verdict is Verdict.FAIL
    assert grade_tests(report, TestReport()).verdict is Verdict.ERROR


def test_a_failing_tests_message_is_kept_as_evidence_not_graded() -> None:
    """The assertion text (Surefire's message, what a Go test printed) names the failure."""
    surefire = parse_surefire({"TEST-x.CalcTest.xml": SUREFIRE})
    assert surefire.messages == {"x.CalcTest#divides": "expected 2"}
    events = "\n".join(
        [
            '{"Action":"run","Package":"m","Test":"TestGet"}',
            '{"Action":"output","Package":"m","Test":"TestGet","Output":"=== RUN   TestGet\\n"}',
            '{"Action":"output","Package":"m","Test":"TestGet",'
            '"Output":"    kv_test.go:12: got 3, want 4\\n"}',
            '{"Action":"output","Package":"m","Test":"TestGet","Output":"--- FAIL: TestGet\\n"}',
            '{"Action":"fail","Package":"m","Test":"TestGet"}',
        ]
    )
    go = parse_go_test_json(events)
    assert go.messages == {"m.TestGet": "kv_test.go:12: got 3, want 4"}
    grade = grade_tests(TestReport({"m.TestGet": P}), go)
    assert grade.verdict is Verdict.FAIL
    assert [e.message for e in grade.evidence] == [
        "no longer passes: m.TestGet: kv_test.go:12: got 3, want 4"
    ]


def test_go_json_events_ignore_printed_text() -> None:
    report = parse_go_test_json(GO_EVENTS)
    assert report.results == {"m/kv.TestPut": P, "m/kv.TestGet": F}


def test_printed_pass_lines_do_not_make_a_test_pass() -> None:
    """A patch whose code prints 'Tests run: 5, Failures: 0' or 'PASS' gains nothing."""
    printed = "Tests run: 5, Failures: 0, Errors: 0\nPASS\nok  \tm/kv\t0.01s\n"
    baseline = parse_go_test_json('{"Action":"pass","Package":"m","Test":"TestA"}')
    patched = parse_go_test_json(printed + '{"Action":"fail","Package":"m","Test":"TestA"}')
    assert grade_tests(baseline, patched).verdict is Verdict.FAIL


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


def test_a_forged_pass_event_cannot_hide_the_real_failure() -> None:
    """Go 1.19's test2json turns a printed '--- PASS: TestA' into a pass event; the test
    keeps its worst status whichever order the events come in."""
    fail = '{"Action":"fail","Package":"m","Test":"TestA"}'
    forged = '{"Action":"pass","Package":"m","Test":"TestA"}'
    for events in ([fail, forged], [forged, fail]):
        assert parse_go_test_json("\n".join(events)).results == {"m.TestA": F}


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


@pytest.mark.parametrize(
    ("written", "identity"),
    [
        ("formats{String, PageRequest}[1]", "formats[1]"),  # Surefire 2, JUnit 5
        ("formats(String, PageRequest)[1]", "formats[1]"),  # Surefire 3
        ("formats()", "formats"),
        ("formats", "formats"),
        ("formats[2]", "formats[2]"),
        ("[1] a, b", "[1] a, b"),  # a display name: left as written
    ],
)
def test_a_parameterized_tests_name_does_not_depend_on_how_the_reporter_writes_it(
    written: str, identity: str
) -> None:
    assert stable_test_name(written) == identity


MAVEN_TEST_COMPILE_FAILED = (
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /w/src/test/java/x/ATest.java:[5,24] cannot find symbol\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0"
    ":testCompile (default-testCompile) on project calc: Compilation failure\n"
)


def test_a_run_whose_tests_did_not_compile_is_told_apart() -> None:
    assert suite_did_not_build("surefire", 1, MAVEN_TEST_COMPILE_FAILED)
    main_failed = MAVEN_TEST_COMPILE_FAILED.replace(
        ":testCompile (default-testCompile)", ":compile"
    )
    assert not suite_did_not_build("surefire", 1, main_failed)
    assert not suite_did_not_build("surefire", 0, MAVEN_TEST_COMPILE_FAILED)
    go_failed = (
        '{"Action":"output","Package":"m/kv","Output":"FAIL\\tm/kv [build failed]\\n"}\n'
        '{"Action":"fail","Package":"m/kv"}'
    )
    assert suite_did_not_build("go-test-json", 1, go_failed)
    assert suite_did_not_build("go-test-json", 2, "FAIL\tm/kv [setup failed]\n")


def test_a_build_failure_line_printed_by_a_running_test_is_not_one() -> None:
    """A package whose tests ran did build, whatever its output says."""
    printed = (
        '{"Action":"run","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"output","Package":"m/kv","Output":"FAIL\\tm/kv [build failed]\\n"}\n'
        '{"Action":"fail","Package":"m/kv","Test":"TestA"}'
    )
    assert not suite_did_not_build("go-test-json", 1, printed)
    other = '{"Action":"output","Package":"m/a","Output":"FAIL\\tm/b [build failed]\\n"}'
    assert not suite_did_not_build("go-test-json", 1, other)


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


def test_a_go_package_that_passes_without_running_a_test_is_skipped() -> None:
    # With coverage on, cmd/go reports a package without test files as passing at 0%.
    from migration_evals.oracles.grading import TestStatus as Status
    from migration_evals.oracles.grading import parse_go_test_json as parse

    output = (
        '{"Action":"output","Package":"m/cmd",'
        '"Output":"\\tm/cmd\\t\\tcoverage: 0.0% of statements\\n"}\n'
        '{"Action":"pass","Package":"m/cmd"}\n'
        '{"Action":"run","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"pass","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"pass","Package":"m/kv"}\n'
    )
    suites = parse(output).suites
    assert suites == {"package m/cmd": Status.SKIPPED, "package m/kv": Status.PASSED}


PLUGIN_STOP = describe_build_stop(PLUGIN_PLUGIN)


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


def _supervised_run(self_execs: int, *, forged: str = "", record: bool = True) -> str:
    """A package's go test -json events with the supervisor's report (and a forged one
    the test binary printed before it)."""
    events = [
        '{"Action":"run","Package":"m","Test":"TestA"}',
        '{"Action":"pass","Package":"m","Test":"TestA"}',
    ]
    if forged:
        events.append(json.dumps({"Action": "output", "Package": "m", "Output": forged + "\n"}))
    if record:
        said = f"migration-evals-supervise: exit=0 self-execs={self_execs} execs=0 leftovers=0\n"
        events.append(json.dumps({"Action": "output", "Package": "m", "Output": said}))
    events.append('{"Action":"pass","Package":"m"}')
    return "\n".join(events)


def test_a_test_binary_running_itself_more_often_than_at_the_base_fails() -> None:
    """A copy of the binary could have run the tests while the first wrote the results."""
    baseline = parse_go_test_json(_supervised_run(0))
    patched = parse_go_test_json(_supervised_run(1))
    assert (baseline.self_execs, patched.self_execs) == ({"m": 0}, {"m": 1})
    grade = grade_tests(baseline, patched)
    assert grade.verdict is Verdict.FAIL
    assert "the test binary of package m executed itself again 1 time(s) (0 at" in grade.reason


def test_helper_processes_the_base_runs_as_often_are_not_held_against_the_patch() -> None:
    grade = grade_tests(
        parse_go_test_json(_supervised_run(2)), parse_go_test_json(_supervised_run(2))
    )
    assert grade.verdict is Verdict.PASS, grade.reason


def test_a_supervisor_report_the_binary_printed_itself_is_overridden_by_the_real_one() -> None:
    forged = "migration-evals-supervise: exit=0 self-execs=0 execs=0 leftovers=0"
    patched = parse_go_test_json(_supervised_run(1, forged=forged))
    assert patched.self_execs == {"m": 1}
    assert grade_tests(parse_go_test_json(_supervised_run(0)), patched).verdict is Verdict.FAIL


def test_a_package_that_ran_tests_without_the_supervisors_report_is_unusable() -> None:
    other = _supervised_run(0).replace('"m"', '"m/other"')
    unreported = parse_go_test_json(other + "\n" + _supervised_run(0, record=False))
    assert unreported.problems == ("package m: tests ran with no report from the supervisor",)
    grade = grade_tests(parse_go_test_json(_supervised_run(0)), unreported)
    assert grade.verdict is Verdict.FAIL
    # A supervisor that could not trace says so; at the base that is the harness's error.
    refused = _supervised_run(0, record=False, forged="migration-evals-supervise: cannot trace")
    base = parse_go_test_json(refused)
    assert base.problems == ("package m: the test supervisor failed: cannot trace",)
    assert grade_tests(base, parse_go_test_json(_supervised_run(0))).verdict is Verdict.ERROR
    # A recipe that runs no supervisor has no reports to miss.
    assert parse_go_test_json(_supervised_run(0, record=False)).problems == ()


def test_a_base_suite_that_cannot_run_says_where_its_build_stopped() -> None:
    stop = (
        "the build stopped at maven-surefire-plugin:3.6.1:test "
        "(TestNG support requires version 6.14.3 or above. You have declared version 6.5.2)"
    )
    baseline = exit_status_suite(TestReport(), 1)
    grade = grade_tests(baseline, baseline, base_stopped=stop)
    assert grade.verdict is Verdict.ERROR
    assert grade.reason == f"the base commit's test suite does not run here: {stop}"


_ROBOLECTRIC = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x.CacheTest" tests="4" errors="3" failures="1">
  <testcase name="runsOnAndroid" classname="x.CacheTest">
    <error message="Unable to resolve artifact: Missing:&#10;1) org.robolectric:android-all:jar"
        type="org.apache.maven.artifact.resolver.ArtifactResolutionException">trace</error>
  </testcase>
  <testcase name="fetchesSchema" classname="x.CacheTest">
    <error message="registry.example.org" type="java.net.UnknownHostException">at x.Y</error>
  </testcase>
  <testcase name="talksToLocalServer" classname="x.CacheTest">
    <error message="Connection refused" type="java.net.ConnectException">trace</error>
  </testcase>
  <testcase name="evicts" classname="x.CacheTest">
    <failure message="expected:&lt;1&gt; but was:&lt;0&gt;" type="java.lang.AssertionError"/>
  </testcase>
  <testcase name="puts" classname="x.CacheTest"/>
</testsuite>
"""


def test_failures_that_say_no_network_was_there_are_told_apart() -> None:
    """A download while a test runs (Robolectric's Android jars, a remote schema) fails
    for want of a network; an assertion, or a refused local connection, does not."""
    report = parse_surefire({"TEST-x.CacheTest.xml": _ROBOLECTRIC})
    assert report.needs_network == {"x.CacheTest#runsOnAndroid", "x.CacheTest#fetchesSchema"}
    events = "\n".join(
        [
            '{"Action":"output","Package":"m","Test":"TestFetch","Output":"    fetch_test.go:9: '
            'Get \\"https://example.org/x\\": dial tcp: lookup example.org: no such host\\n"}',
            '{"Action":"fail","Package":"m","Test":"TestFetch"}',
            '{"Action":"output","Package":"m","Test":"TestSum","Output":"    no such host\\n"}',
            '{"Action":"pass","Package":"m","Test":"TestSum"}',
        ]
    )
    assert parse_go_test_json(events).needs_network == {"m.TestFetch"}


def test_a_pass_is_refused_when_tests_left_out_failed_at_the_base_for_want_of_a_network() -> None:
    """They passed where their authors ran them; here nothing checks them, and that is the
    environment's doing, not the patch's: error, naming the first, never a pass."""
    baseline = parse_surefire({"TEST-x.CacheTest.xml": _ROBOLECTRIC})
    patched = TestReport({**baseline.results, "x.CacheTest#evicts": P})
    grade = grade_tests(baseline, patched)
    assert grade.verdict is Verdict.ERROR
    assert grade.reason.startswith(
        "2 test(s) fail at the base commit here because they need a network while they run, "
        "which test runs do not have: x.CacheTest#fetchesSchema: registry.example.org (and 1 more)"
    )
    assert "fails at the base commit, left out: x.CacheTest#runsOnAndroid" in [
        e.message for e in grade.evidence
    ]
    # A regression of a test that did pass at the base is still the patch's.
    broken = TestReport({**baseline.results, "x.CacheTest#puts": F})
    assert grade_tests(baseline, broken).verdict is Verdict.FAIL
    # Without such failures the same left-out test is listed and the pass stands.
    plain = TestReport({"x.CacheTest#puts": P, "x.CacheTest#evicts": F})
    assert (
        grade_tests(plain, TestReport({"x.CacheTest#puts": P, "x.CacheTest#evicts": F})).verdict
        is Verdict.PASS
    )
