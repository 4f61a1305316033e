"""A go test -json stream is kept by test: every result is read however much the tests
log, go's framing lines are never dropped, and only events over the budget cut it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache

from migration_evals.oracles.build_summaries import DisagreementKind
from migration_evals.oracles.ecosystems.go.capture import GO_TEST_EVENTS, GoTestEvents
from migration_evals.oracles.ecosystems.go.summaries import cross_check_go
from migration_evals.oracles.ecosystems.go.test_events import parse_go_test_json
from migration_evals.oracles.ecosystems.registry import output_captures
from migration_evals.oracles.grading import TestStatus
from migration_evals.oracles.sandbox.capture import OutputCap, capture_for

PKG = "example.com/m"


def _event(action: str, test: str = "", output: str | None = None) -> bytes:
    event: dict[str, str] = {"Action": action, "Package": PKG}
    if test:
        event["Test"] = test
    if output is not None:
        event["Output"] = output
    return json.dumps(event).encode() + b"\n"


def _test(name: str, action: str, said: list[str]) -> list[bytes]:
    lines = [_event("run", name), _event("output", name, f"=== RUN   {name}\n")]
    lines += [_event("output", name, f"    {line}\n") for line in said]
    lines += [_event("output", name, f"--- {action.upper()}: {name} (0.00s)\n")]
    return [*lines, _event(action, name)]


@cache  # two tests feed the same 40,000 events to two captures
def _suite(noisy_lines: int) -> tuple[bytes, ...]:
    chatter = [f"vector {i}: 0x{i:08x} ok" for i in range(noisy_lines)]
    return (
        *_test("TestNoisy", "pass", chatter),
        *_test("TestQuiet", "pass", []),
        *_test("TestNoisier", "pass", chatter),
        *_test("TestBroken", "fail", ["main_test.go:12: got 3, want 4"]),
        _event("output", "", "FAIL\n"),
        _event("output", "", f"FAIL\t{PKG}\t0.010s\n"),
        _event("fail"),
    )


def _fed(capture: GoTestEvents | OutputCap, lines: Sequence[bytes], chunk: int = 997) -> str:
    data = b"".join(lines)
    for start in range(0, len(data), chunk):
        capture.feed(data[start : start + chunk])
    return capture.text()


def test_a_suite_logging_far_over_the_cap_still_has_every_result_read() -> None:
    lines = _suite(noisy_lines=10_000)
    assert sum(map(len, lines)) > 80 * 20_000  # eighty times the cap
    capture = GoTestEvents(20_000)
    text = _fed(capture, lines)
    assert not capture.truncated
    report = parse_go_test_json(text)
    assert report.results == {
        f"{PKG}.TestNoisy": TestStatus.PASSED,
        f"{PKG}.TestQuiet": TestStatus.PASSED,
        f"{PKG}.TestNoisier": TestStatus.PASSED,
        f"{PKG}.TestBroken": TestStatus.FAILED,
    }
    assert report.messages[f"{PKG}.TestBroken"] == "main_test.go:12: got 3, want 4"
    assert cross_check_go(text, 1, truncated=capture.truncated) == ()
    assert len(text) < 20_000
    # Of each noisy test's 10,002 lines: the first 20 and the last 20 (its framing among them).
    assert text.count('"Output": "[9962 more output line(s) not kept]\\n"') == 2


def test_the_same_stream_kept_by_head_and_tail_loses_results() -> None:
    """What the plain cap did with it (why the events are kept apart)."""
    capture = OutputCap(20_000)
    text = _fed(capture, _suite(noisy_lines=10_000))
    assert capture.truncated
    results = parse_go_test_json(text).results
    assert f"{PKG}.TestBroken" in results
    assert f"{PKG}.TestQuiet" not in results


def test_framing_lines_a_test_prints_among_its_chatter_are_never_dropped() -> None:
    """A test that prints "--- FAIL:" for another test in the middle of its noise still
    meets the cross-check: the line is kept however far from the head and the tail."""
    said = [f"noise {i}" for i in range(500)]
    said[250] = "--- FAIL: TestQuiet (0.00s)"
    lines = [*_test("TestNoisy", "pass", said), *_test("TestQuiet", "pass", []), _event("pass")]
    capture = GoTestEvents(100_000)
    text = _fed(capture, lines)
    assert "--- FAIL: TestQuiet" in text
    found = cross_check_go(text, 0, truncated=capture.truncated)
    assert any("TestQuiet" in d.message for d in found), found


def test_output_kept_stays_in_its_order_and_unfinished_tests_are_written_out() -> None:
    said = [f"line {i}" for i in range(60)]
    lines = [_event("run", "TestHangs"), *[_event("output", "TestHangs", s + "\n") for s in said]]
    capture = GoTestEvents(1_000_000, lines=5)
    text = _fed(capture, lines, chunk=7)
    outputs = [json.loads(line).get("Output", "") for line in text.splitlines() if line]
    assert outputs[1:6] == [f"line {i}\n" for i in range(5)]
    assert outputs[6] == "[50 more output line(s) not kept]\n"
    assert outputs[7:] == [f"line {i}\n" for i in range(55, 60)]


def _subtest(name: str, action: str, said: list[str]) -> list[bytes]:
    """A parallel subtest as go test -json reports it: run, pause, cont, then its lines."""
    lines = [_event("run", name), _event("output", name, f"=== RUN   {name}\n")]
    lines += [_event("pause", name), _event("output", name, f"=== PAUSE {name}\n")]
    lines += [_event("cont", name), _event("output", name, f"=== CONT  {name}\n")]
    lines += [_event("output", name, f"    {line}\n") for line in said]
    lines += [_event("output", name, f"    --- {action.upper()}: {name} (0.00s)\n")]
    return [*lines, _event(action, name)]


def _table_suite(cases: int) -> list[bytes]:
    """Thousands of table-driven subtests that each log two lines, as a decimal
    arithmetic suite does; one fails, and one prints a --- FAIL: line for another."""
    lines = [_event("run", "TestTable")]
    for i in range(cases):
        said = [f"table.go:420: case {i}", f"table.go:421: add {i} {i} = {2 * i}"]
        if i == cases // 3:
            said.append("--- FAIL: TestTable/case-0 (0.00s)")
        action = "fail" if i == cases // 2 else "pass"
        lines += _subtest(f"TestTable/case-{i}", action, said)
    lines += [_event("fail", "TestTable"), _event("output", "", f"FAIL\t{PKG}\t9.9s\n")]
    return [*lines, _event("fail")]


def test_thousands_of_passing_subtests_keep_their_results_alone_past_the_cap() -> None:
    cases = 5_000
    lines = _table_suite(cases)
    assert sum(map(len, lines)) > 40 * 100_000  # more than the whole budget in full
    capture = GoTestEvents(100_000, budget_factor=8)
    text = _fed(capture, lines, chunk=4096)
    assert not capture.truncated
    assert text.endswith(
        "(passing tests by their results alone): "
        + f"{sum(map(len, lines))} bytes printed in all]\n"
    )
    report = parse_go_test_json(text)
    assert len(report.results) == cases + 1
    failing = f"{PKG}.TestTable/case-{cases // 2}"
    assert {name for name, status in report.results.items() if status is TestStatus.FAILED} == {
        f"{PKG}.TestTable",
        failing,
    }
    # The failing subtest keeps its run event and what it said; passing ones say nothing.
    assert report.messages[failing] == f"table.go:420: case {cases // 2} table.go:421: add " + (
        f"{cases // 2} {cases // 2} = {cases // 2 * 2}"
    )
    assert f"table.go:420: case {cases - 1}" not in text
    # The --- FAIL: line a passing subtest printed for another is still weighed.
    found = cross_check_go(text, 1, truncated=capture.truncated)
    assert [d.message for d in found] == [
        f"go test printed --- FAIL: TestTable/case-0 in {PKG}, reported as passed"
    ]


def test_a_subtest_that_never_finishes_in_a_compact_stream_is_still_seen_to_start() -> None:
    lines = _table_suite(3_000)[:-3]  # cut before the parent's and the package's results
    lines += [_event("run", "TestHangs"), _event("output", "TestHangs", "    waiting\n")]
    capture = GoTestEvents(50_000)
    text = _fed(capture, lines)
    assert not capture.truncated
    kept = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert {"Action": "run", "Package": PKG, "Test": "TestHangs"} in kept
    assert {
        "Action": "output",
        "Package": PKG,
        "Test": "TestHangs",
        "Output": "    waiting\n",
    } in kept


def test_lines_that_are_not_events_are_kept_as_build_output() -> None:
    lines = [b"# example.com/m\n", b"./main.go:3:2: undefined: x\n", _event("fail")]
    capture = GoTestEvents(1_000)
    assert _fed(capture, lines, chunk=5).startswith("# example.com/m\n./main.go:3:2: undefined")


def test_events_over_the_budget_cut_the_stream_as_the_output_limit() -> None:
    lines = [line for i in range(2_000) for line in _test(f"Test{i}", "pass", [])]
    capture = GoTestEvents(10_000, budget_factor=4)
    text = _fed(capture, lines)
    assert capture.truncated
    assert text.endswith("[output truncated: over the limit of 40000 bytes kept]\n")
    found = cross_check_go(text, 0, truncated=capture.truncated)
    assert [d.kind for d in found] == [DisagreementKind.UNREADABLE]


def test_one_line_longer_than_the_cap_is_over_the_limit() -> None:
    capture = GoTestEvents(1_000)
    capture.feed(b"x" * 2_000)
    assert capture.truncated


def test_only_go_test_streams_are_kept_by_event() -> None:
    # As the bot builds the sandbox: with every report format's capture, by name.
    captures = output_captures()
    assert isinstance(capture_for(GO_TEST_EVENTS, 10, captures), GoTestEvents)
    assert isinstance(capture_for("", 10, captures), OutputCap)
