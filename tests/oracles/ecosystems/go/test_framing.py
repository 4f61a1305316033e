"""go test's framing lines, told apart from what a test printed itself."""

from __future__ import annotations

import pytest

from migration_evals.oracles.ecosystems.go.framing import GO_FAILED_TEST, GO_FRAMING


@pytest.mark.parametrize(
    "line",
    [
        "=== RUN   TestA",
        "=== PAUSE TestA/sub",
        "    --- FAIL: TestA/sub (0.00s)",
        "--- PASS: TestA (0.01s)",
        "ok  \texample.com/m\t0.01s",
        "FAIL\texample.com/m\t0.01s",
        "?   \texample.com/m/cmd\t[no test files]",
        "PASS",
    ],
)
def test_gos_own_lines_are_framing(line: str) -> None:
    assert GO_FRAMING.match(line)


@pytest.mark.parametrize(
    "line",
    ["    main_test.go:12: got 3, want 4", "ok, got 3", "FAILED to open", "okay"],
)
def test_what_a_test_printed_is_not(line: str) -> None:
    assert not GO_FRAMING.match(line)


def test_a_failed_tests_line_names_it() -> None:
    found = GO_FAILED_TEST.match("        --- FAIL: TestTable/case-3 (0.00s)")
    assert found is not None and found["test"] == "TestTable/case-3"
    assert GO_FAILED_TEST.match("--- FAILED: nothing") is None
