"""What cmd/go printed about a test run, and every way the ``go test -json`` actions can
disagree with it."""

from __future__ import annotations

import json

from migration_evals.oracles.build_summaries import DisagreementKind, TestTotals
from migration_evals.oracles.ecosystems.go.summaries import cross_check_go, parse_go_log


def _go(*events: tuple[str, ...]) -> str:
    """``go test -json`` lines from (action, package[, test[, output]]) tuples."""
    lines = []
    for action, package, *rest in events:
        event: dict[str, str] = {"Action": action, "Package": package}
        if rest and rest[0]:
            event["Test"] = rest[0]
        if len(rest) > 1:
            event["Output"] = rest[1]
        lines.append(json.dumps(event))
    return "\n".join(lines)


def _passing(package: str, test: str = "TestA") -> list[tuple[str, ...]]:
    return [
        ("run", package, test),
        ("output", package, test, f"--- PASS: {test} (0.00s)\n"),
        ("pass", package, test),
        ("output", package, "", f"ok  \t{package}\t0.01s\n"),
        ("pass", package),
    ]


def _failing(package: str, test: str = "TestA") -> list[tuple[str, ...]]:
    return [
        ("run", package, test),
        ("output", package, test, f"--- FAIL: {test} (0.00s)\n"),
        ("fail", package, test),
        ("output", package, "", "FAIL\n"),
        ("output", package, "", f"FAIL\t{package}\t0.01s\n"),
        ("fail", package),
    ]


NO_TESTS = [("output", "m/cmd", "", "?   \tm/cmd\t[no test files]\n"), ("skip", "m/cmd")]
BUILD_FAILED = [("output", "m/b", "", "FAIL\tm/b [build failed]\n"), ("fail", "m/b")]


def test_an_honest_go_run_raises_nothing() -> None:
    output = _go(*_passing("m/a"), *NO_TESTS, *_failing("m/c"), *BUILD_FAILED)
    assert cross_check_go(output, exit_code=1) == ()
    assert cross_check_go(_go(*_passing("m/a"), *NO_TESTS), exit_code=0) == ()


def test_go_log_reads_packages_summaries_and_failed_lines() -> None:
    log = parse_go_log(_go(*_failing("m/c"), *BUILD_FAILED))
    assert log.actions == {"m/c": {"fail"}, "m/b": {"fail"}}
    assert log.printed == {"m/c": {"FAIL"}, "m/b": {"FAIL"}}
    assert log.failed_lines == {"m/c": {"TestA"}}
    assert log.build_failed == {"m/b"}


def test_go_exit_zero_with_a_failed_package_disagrees() -> None:
    """A TestMain that ignores m.Run's result and exits 0."""
    output = _go(
        *_failing("m/c")[:-3], ("output", "m/c", "", "ok  \tm/c\t0.01s\n"), ("pass", "m/c")
    )
    found = cross_check_go(output, exit_code=0)
    assert [d.message for d in found] == ["package m/c passed although ['TestA'] failed"]
    found = cross_check_go(_go(*_failing("m/c")), exit_code=0)
    assert [d.kind for d in found] == [DisagreementKind.EXIT]
    assert found[0].message == "go test exited 0 although package(s) m/c failed"


def test_forged_ok_lines_and_rewritten_test_results_disagree() -> None:
    """Code that prints "ok  \\tm/c" while the package fails, and a failure whose lines were
    rewritten to PASS: the package fails although each of its tests passed."""
    forged_ok = [("output", "m/c", "", "ok  \tm/c\t0.01s\n"), *_failing("m/c")]
    [found] = cross_check_go(_go(*forged_ok), exit_code=1)
    assert found.message == "go test printed ok for package m/c, which failed"
    rewritten = [*_passing("m/c")[:3], ("output", "m/c", "", "FAIL\tm/c\t0.01s\n"), ("fail", "m/c")]
    [found] = cross_check_go(_go(*rewritten), exit_code=1)
    assert found.message == "package m/c failed although each of its 1 test(s) passed"


def test_a_printed_go_failure_the_json_calls_a_pass_disagrees() -> None:
    """Go 1.20+ frames its own lines, so a "--- FAIL:" line can be output beside a pass."""
    events = _passing("m/a")
    events.insert(1, ("output", "m/a", "TestA", "    --- FAIL: TestA (0.00s)\n"))
    [found] = cross_check_go(_go(*events), exit_code=0)
    assert found.message == "go test printed --- FAIL: TestA in m/a, reported as passed"


def test_a_go_package_without_a_result_disagrees() -> None:
    events = [e for e in _passing("m/a") if e[0] != "pass" or len(e) > 2]
    [found] = cross_check_go(_go(*events), exit_code=0)
    assert found.message == "package m/a has no result in the JSON report"
    printed_fail = [
        *_passing("m/a")[:-1],
        ("output", "m/a", "", "FAIL\tm/a\t0.01s\n"),
        ("pass", "m/a"),
    ]
    messages = [d.message for d in cross_check_go(_go(*printed_fail), exit_code=0)]
    assert "go test printed FAIL for package m/a, reported as passed" in messages


def test_a_go_test_that_never_finished_is_not_called_a_forgery() -> None:
    """A test that calls os.Exit(1) has a run event and no result: its package failing
    is the tool's honest account, not a disagreement."""
    events = [*_passing("m/a")[:3], ("run", "m/a", "TestExits"), *_failing("m/a")[3:]]
    assert cross_check_go(_go(*events), exit_code=1) == ()


def test_go_totals_count_tests_and_subtests_by_their_final_action() -> None:
    output = _go(
        ("run", "m/a", "TestA"),
        ("run", "m/a", "TestA/one"),
        ("pass", "m/a", "TestA/one"),
        ("run", "m/a", "TestA/two"),
        ("output", "m/a", "TestA/two", "--- FAIL: TestA/two (0.00s)\n"),
        ("fail", "m/a", "TestA/two"),
        ("fail", "m/a", "TestA"),
        ("run", "m/a", "TestB"),
        ("skip", "m/a", "TestB"),
        ("fail", "m/a"),
        *_passing("m/b"),
        *NO_TESTS,
        *BUILD_FAILED,
    )
    # TestA, its two subtests, TestB and m/b's test; packages are not tests.
    assert parse_go_log(output).totals() == TestTotals(run=5, failures=2, errors=0, skipped=1)


def test_a_cut_log_cannot_be_checked() -> None:
    [found] = cross_check_go("", 0, truncated=True)
    assert found.kind is DisagreementKind.UNREADABLE
