"""The coverage guard offline: reading reports (one per module too) and the drop rule."""

from __future__ import annotations

from migration_evals.core.model import Verdict
from migration_evals.oracles.coverage import (
    Coverage,
    FileCoverage,
    check_coverage,
    merge_coverage,
    read_coverage,
    report_files,
    tools_in,
)
from migration_evals.oracles.ecosystems.maven.coverage import JACOCO_XML
from tests.oracles.ecosystems.maven.test_coverage import JACOCO


def _coverage(**files: tuple[int, int]) -> Coverage:
    return Coverage({name: FileCoverage(*counts) for name, counts in files.items()})


def test_a_report_cut_at_the_size_limit_or_missing_or_without_its_tool_is_unmeasured() -> None:
    jacoco = JACOCO_XML
    cut = read_coverage(jacoco, {"r.xml": JACOCO[:200] + "\n[truncated]"}, "r.xml")
    assert "size limit" in (cut.problem or "")
    missing = read_coverage(jacoco, {}, "r.xml")
    assert "no coverage report" in (missing.problem or "")
    no_tool = read_coverage(jacoco, {"r.xml": JACOCO}, "r.xml", tools_available=False)
    assert "not in the dependency cache" in (no_tool.problem or "")
    assert read_coverage(jacoco, {"r.xml": JACOCO}, "r.xml").measured


def test_a_drop_within_the_limit_passes_with_both_numbers() -> None:
    base = _coverage(a=(80, 100))
    patched = _coverage(a=(80, 101))
    check = check_coverage(base, patched, 1.0)
    assert check.verdict is Verdict.PASS
    assert check.reason == "coverage 80.0% of lines at the base commit, 79.2% patched"
    assert check.to_dict()["drop"] == 0.79


def test_a_drop_beyond_the_limit_fails_naming_the_files_that_fell() -> None:
    base = _coverage(a=(8, 10), b=(5, 10), c=(10, 10))
    patched = _coverage(a=(8, 10), b=(2, 10), new=(0, 10))
    check = check_coverage(base, patched, 1.0)
    assert check.verdict is Verdict.FAIL
    assert "fell by" in check.reason and "the recipe allows 1" in check.reason
    # c is gone (0%), b fell; the added, untested file pulls the number down too.
    assert [path for path, _before, _after in check.fell] == ["c", "b", "new"]
    assert [str(e) for e in check.evidence][:2] == [
        "c: coverage fell from 100.0% to 0.0%",
        "b: coverage fell from 50.0% to 20.0%",
    ]
    assert "a file the patch added, 0.0% covered" in check.evidence[2].message


def test_the_recipes_limit_decides() -> None:
    base, patched = _coverage(a=(80, 100)), _coverage(a=(75, 100))
    assert check_coverage(base, patched, 10.0).verdict is Verdict.PASS
    assert check_coverage(base, patched, 4.0).verdict is Verdict.FAIL


def test_coverage_not_measured_at_the_base_decides_nothing() -> None:
    base = Coverage(problem="the run wrote no coverage report (r.xml)")
    check = check_coverage(base, _coverage(a=(0, 10)), 1.0)
    assert check.verdict is Verdict.PASS
    assert check.reason.startswith("coverage not measured at the base commit")
    assert check.to_dict()["base"] == {"measured": False, "problem": base.problem}


def test_a_patched_tree_that_switched_the_measurement_off_fails() -> None:
    patched = Coverage(problem="the run wrote no coverage report (r.xml)")
    check = check_coverage(_coverage(a=(5, 10)), patched, 1.0)
    assert check.verdict is Verdict.FAIL
    assert "switch the coverage measurement off" in check.reason


def test_a_tool_missing_for_the_patched_tree_only_is_not_the_candidates_fault() -> None:
    patched = Coverage(problem="the coverage tool is not in the dependency cache")
    check = check_coverage(_coverage(a=(5, 10)), patched, 1.0, patched_tools=False)
    assert check.verdict is Verdict.PASS
    assert "not measured on the patched tree" in check.reason


def test_projects_merge_under_their_labels_and_one_unmeasured_makes_all_unmeasured() -> None:
    merged = merge_coverage([("a", _coverage(x=(1, 2))), ("b", _coverage(x=(2, 2)))])
    assert merged.files == {"a: x": FileCoverage(1, 2), "b: x": FileCoverage(2, 2)}
    partial = merge_coverage([("a", _coverage(x=(1, 2))), ("b", Coverage(problem="no report"))])
    assert partial.problem == "b: no report"


def test_tools_are_there_when_the_gate_served_every_one() -> None:
    tools = ["org.jacoco:org.jacoco.agent:0.8.12", "org.jacoco:org.jacoco.cli:0.8.12"]
    assert tools_in([*tools, "junit:junit:4.13.2"], tools)
    assert not tools_in(tools[:1], tools)
    assert tools_in([], [])


# -- one report per module ----------------------------------------------------------------

MODULES = ".migration-evals/coverage/modules/*.xml"


def _jacoco(source: str, missed: int, covered: int) -> str:
    """A JaCoCo report of one source file in package com/example."""
    return (
        '<report name="m"><package name="com/example">'
        f'<sourcefile name="{source}"><counter type="LINE" missed="{missed}" covered="{covered}"/>'
        "</sourcefile></package></report>"
    )


def _modules(**reports: str) -> dict[str, str]:
    """Collected artifacts: each module's report (by its escaped name) and its empty log."""
    folder = MODULES.rsplit("/", 1)[0]
    artifacts = {f"{folder}/{name}.xml": text for name, text in reports.items()}
    return artifacts | {f"{folder}/{name}.log": "" for name in reports}


def test_one_class_name_in_two_modules_counts_twice_keyed_by_module() -> None:
    artifacts = _modules(
        **{
            ".": _jacoco("App.java", 0, 2),
            "core": _jacoco("Util.java", 2, 8),
            "web%2Fapi": _jacoco("Util.java", 5, 5),
        }
    )
    coverage = read_coverage(JACOCO_XML, artifacts, MODULES)
    assert coverage.files == {
        "com/example/App.java": FileCoverage(2, 2),  # the root module keeps bare names
        "core: com/example/Util.java": FileCoverage(8, 10),
        "web/api: com/example/Util.java": FileCoverage(5, 10),
    }


def test_a_module_the_tool_failed_on_makes_the_tree_unmeasured_naming_it() -> None:
    artifacts = _modules(a=_jacoco("A.java", 0, 1))
    artifacts[MODULES.replace("*.xml", "b.log")] = (
        'Exception in thread "main" java.io.IOException: Error while analyzing ./b/x.class\n'
        "\tat org.jacoco.cli.internal.core.analysis.Analyzer.analyzerError(Analyzer.java:163)\n"
        "Caused by: java.lang.IllegalStateException: Can't add different class with same "
        "name: com/example/Util\n"
    )
    coverage = read_coverage(JACOCO_XML, artifacts, MODULES)
    assert coverage.problem == (
        "b: the coverage tool wrote no report (java.lang.IllegalStateException: "
        "Can't add different class with same name: com/example/Util)"
    )


def test_no_module_report_nor_log_is_no_report_and_a_silent_failure_says_so() -> None:
    none = read_coverage(JACOCO_XML, {}, MODULES)
    assert none.problem == f"the run wrote no coverage report ({MODULES})"
    silent = read_coverage(JACOCO_XML, {MODULES.replace("*.xml", "..log"): ""}, MODULES)
    assert silent.problem == "the coverage tool wrote no report (it said nothing)"


def test_the_logs_beside_per_module_reports_are_no_test_reports_either() -> None:
    assert report_files(MODULES) == (MODULES, ".migration-evals/coverage/modules/*.log")
    assert report_files(".migration-evals/coverage/cover.out") == (
        ".migration-evals/coverage/cover.out",
    )


def test_a_pass_says_whether_both_trees_were_compared() -> None:
    measured = _coverage(a=(5, 10))
    assert check_coverage(measured, measured, 1.0).compared
    assert not check_coverage(Coverage(problem="no report"), measured, 1.0).compared
    assert not check_coverage(_coverage(), measured, 1.0).compared  # no main code
    no_tool = Coverage(problem="the coverage tool is not in the dependency cache")
    assert not check_coverage(measured, no_tool, 1.0, patched_tools=False).compared
