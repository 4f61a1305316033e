"""Diff coverage as tier 3 keeps it: the state follows from the numbers, one sentence
says it everywhere, and a stored value that is not one reads as none."""

from __future__ import annotations

import pytest

from migration_evals.core.diff_coverage import (
    ChangedFile,
    DiffCoverage,
    DiffCoverageState,
    line_runs,
)

PARTLY = DiffCoverage(
    changed=7,
    covered=5,
    files=(ChangedFile("src/A.java", 4, 2, (12, 13)), ChangedFile("src/B.java", 3, 3)),
)


@pytest.mark.parametrize(
    ("found", "state", "sentence", "cell"),
    [
        (
            PARTLY,
            DiffCoverageState.EXECUTED,
            "the base's tests execute 5 of the 7 changed lines of main code (71%)",
            "5 of 7 lines",
        ),
        (
            DiffCoverage(changed=1, covered=0, files=(ChangedFile("a.go", 1, 0, (3,)),)),
            DiffCoverageState.UNTESTED,
            "untested change: the base's tests execute none of the 1 changed line of main code",
            "untested change (0 of 1)",
        ),
        (
            DiffCoverage(),
            DiffCoverageState.NO_MAIN_CODE,
            "no changed main code: no line the patch adds or changes is code",
            "no changed main code",
        ),
        (
            DiffCoverage(problem="the run wrote no coverage report (cover.out)"),
            DiffCoverageState.NOT_MEASURED,
            "not measured: the run wrote no coverage report (cover.out)",
            "not measured",
        ),
    ],
)
def test_each_state_is_said_one_way(
    found: DiffCoverage, state: DiffCoverageState, sentence: str, cell: str
) -> None:
    assert found.state is state
    assert found.describe() == sentence
    assert found.cell() == cell
    assert found.untested is (state is DiffCoverageState.UNTESTED)
    assert found.has_changed_code is (state in ("executed", "untested change"))


def test_what_is_stored_reads_back_the_same() -> None:
    stored = PARTLY.to_dict()
    assert stored["state"] == "executed"
    assert stored["files"][0] == {
        "path": "src/A.java",
        "changed": 4,
        "covered": 2,
        "uncovered_lines": [12, 13],
    }
    assert DiffCoverage.from_dict(stored) == PARTLY
    assert DiffCoverage.of_details({"diff_coverage": stored}) == PARTLY


@pytest.mark.parametrize(
    "stored",
    [None, "executed", [], {"changed": 3}, {"changed": "x", "covered": 0}, {"files": [{}]}],
)
def test_a_value_that_is_no_diff_coverage_reads_as_none(stored: object) -> None:
    assert DiffCoverage.from_dict(stored) is None


def test_an_envelope_without_it_has_none() -> None:
    assert DiffCoverage.of_details({"coverage": {}}) is None
    assert DiffCoverage.of_details(None) is None


def test_a_files_unexecuted_lines_read_as_runs() -> None:
    assert line_runs([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"
    changed = ChangedFile("a.go", 9, 3, (3, 4, 5, 9))
    # Six lines did not run; the sample kept four of them.
    assert changed.describe() == "3 of 9 changed lines executed; not executed: 3-5, 9 ..."
    assert ChangedFile("b.go", 2, 2).describe() == "2 of 2 changed lines executed"
