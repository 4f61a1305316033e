"""``go test -json`` events as the harness grades them: worst status over all events,
what a failing test printed, the supervisor's report per package, and failures that say
the test needed a network."""

from __future__ import annotations

import json

from migration_evals.core.model import Verdict
from migration_evals.oracles.ecosystems.go.reports import GO_TEST_JSON
from migration_evals.oracles.ecosystems.go.test_events import parse_go_test_json
from migration_evals.oracles.grading import TestReport, TestStatus, grade_tests

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

COMPARISONS = GO_TEST_JSON.comparisons
P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def test_a_failing_tests_message_is_kept_as_evidence_not_graded() -> None:
    """The assertion text (what a Go test printed) names the failure."""
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


def test_a_forged_pass_event_cannot_hide_the_real_failure() -> None:
    """Go 1.19's test2json turns a printed '--- PASS: TestA' into a pass event; the test
    keeps its worst status whichever order the events come in."""
    fail = '{"Action":"fail","Package":"m","Test":"TestA"}'
    forged = '{"Action":"pass","Package":"m","Test":"TestA"}'
    for events in ([fail, forged], [forged, fail]):
        assert parse_go_test_json("\n".join(events)).results == {"m.TestA": F}


def test_a_go_package_that_passes_without_running_a_test_is_skipped() -> None:
    # With coverage on, cmd/go reports a package without test files as passing at 0%.
    output = (
        '{"Action":"output","Package":"m/cmd",'
        '"Output":"\\tm/cmd\\t\\tcoverage: 0.0% of statements\\n"}\n'
        '{"Action":"pass","Package":"m/cmd"}\n'
        '{"Action":"run","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"pass","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"pass","Package":"m/kv"}\n'
    )
    suites = parse_go_test_json(output).suites
    assert suites == {"package m/cmd": TestStatus.SKIPPED, "package m/kv": TestStatus.PASSED}


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
    grade = grade_tests(baseline, patched, comparisons=COMPARISONS)
    assert grade.verdict is Verdict.FAIL
    assert "the test binary of package m executed itself again 1 time(s) (0 at" in grade.reason


def test_helper_processes_the_base_runs_as_often_are_not_held_against_the_patch() -> None:
    grade = grade_tests(
        parse_go_test_json(_supervised_run(2)),
        parse_go_test_json(_supervised_run(2)),
        comparisons=COMPARISONS,
    )
    assert grade.verdict is Verdict.PASS, grade.reason


def test_a_supervisor_report_the_binary_printed_itself_is_overridden_by_the_real_one() -> None:
    forged = "migration-evals-supervise: exit=0 self-execs=0 execs=0 leftovers=0"
    patched = parse_go_test_json(_supervised_run(1, forged=forged))
    assert patched.self_execs == {"m": 1}
    baseline = parse_go_test_json(_supervised_run(0))
    assert grade_tests(baseline, patched, comparisons=COMPARISONS).verdict is Verdict.FAIL


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


def test_failures_that_say_no_network_was_there_are_told_apart() -> None:
    """A lookup of a remote host while a test runs fails for want of a network; the same
    words in a passing test's output say nothing."""
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
