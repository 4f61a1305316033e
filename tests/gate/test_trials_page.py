"""The trials page: every counted trial a row, details inlined up to a bound (the trials a
reader opens first), text from candidates unable to leave its script element."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.report import report_document, write_report
from tests.gate.ledgers import Plan, append, page_of

# The module, not the function of the same name that ``migration_evals.gate.report`` exports.
page_module = importlib.import_module("migration_evals.gate.report.trials_page")
HOSTILE = "</script><script>document.title='owned'</script><!--"


def _page_data(html: str, name: str) -> object:
    found = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', html, re.S)
    assert found, f"no {name} data on the page"
    return json.loads(found.group(1))


@pytest.mark.usefixtures("plots_not_drawn")
def test_rows_and_bounded_details(
    store: Store, gate_specs: SpecSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_tail = "\n".join(f"line {n}" for n in range(200))
    plans = [Plan(f"pass-{n}") for n in range(5)]
    plans += [Plan(f"fail-{n}", outcome="fail@compile") for n in range(3)]
    plans += [
        Plan(
            "errored",
            outcome="error@tests",
            details={Tier.TESTS: {"baseline": {"exit_code": 1, "output_tail": long_tail}}},
        )
    ]
    append(store, gate_specs, plans)
    monkeypatch.setattr(page_module, "DETAIL_LIMIT", 4)
    evaluation = evaluate(store, gate_specs)
    page = page_of(store, evaluation, gate_specs)
    assert [row[1] for row in page.rows] == [p.changeset_id for p in plans]  # ledger order
    assert sorted(page.details) == sorted(
        ["t-run-1-errored", "t-run-1-fail-0", "t-run-1-fail-1", "t-run-1-fail-2"]
    )
    errored = next(r for r in page.rows if r[1] == "errored")
    assert errored[4:7] == ["error", "tests", "infrastructure error: engine down"]
    baseline = page.details["t-run-1-errored"]["tiers"][2]["sandbox_runs"][0]
    assert baseline["output_tail"].splitlines() == [f"line {n}" for n in range(160, 200)]
    assert baseline["output_cut"] == "last 40 of 200 lines"

    document = report_document(evaluation, check(evaluation), "now")
    files = write_report(document, tmp_path / "r", page)
    assert files.trials is not None
    html = files.trials.read_text()
    assert "The detail of 4 of the 9 trials is inlined" in html
    assert _page_data(html, "rows") == json.loads(json.dumps(page.rows))
    assert 'href="trials.html"' in files.html.read_text()


@pytest.mark.usefixtures("plots_not_drawn")
def test_text_from_candidates_stays_in_its_script(
    store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    append(
        store,
        gate_specs,
        [Plan(HOSTILE, outcome="fail@compile", details={Tier.COMPILE: {"output_tail": HOSTILE}})],
    )
    evaluation = evaluate(store, gate_specs)
    page = page_of(store, evaluation, gate_specs)
    files = write_report(
        report_document(evaluation, check(evaluation), "now"), tmp_path / "r", page
    )
    assert files.trials is not None
    html = files.trials.read_text()
    assert HOSTILE not in html and "</script><script>document.title" not in html
    assert html.count("<script") == 3  # the two data elements and the page's own script
    rows = _page_data(html, "rows")
    assert isinstance(rows, list) and rows[0][1] == HOSTILE  # the text itself survives
    details = _page_data(html, "details")
    assert isinstance(details, dict)
    (detail,) = details.values()
    assert detail["tiers"][1]["sandbox_runs"][0]["output_tail"] == HOSTILE


def _side(jdk: str, run: int, failed: int) -> dict[str, object]:
    return {
        "exit_code": int(failed > 0),
        "output_tail": "[INFO] Tests run: ...",
        "toolchain": {"maven": "3.9.11", "java": jdk},
        "jdk": jdk,
        "tests_run": run,
        "tests_failed": failed,
        "tests_errors": 0,
        "tests_skipped": 2,
    }


@pytest.mark.usefixtures("plots_not_drawn")
def test_tier_3_counts_are_in_the_table_and_the_trials_detail(
    store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    counted = {"baseline": _side("1.8.0_504", 89, 0), "patched": _side("17.0.15", 89, 3)}
    plans = [
        Plan("counted", outcome="fail@tests", details={Tier.TESTS: counted}),
        Plan("old", outcome="fail@tests"),  # recorded before the counts were kept
        Plan("stopped", outcome="fail@compile"),  # tier 3 never ran
    ]
    append(store, gate_specs, plans)
    evaluation = evaluate(store, gate_specs)
    page = page_of(store, evaluation, gate_specs)
    cells = {row[1]: row[11:13] for row in page.rows}
    assert cells == {
        "counted": [
            "89 run, 0 failed, 0 errors, 2 skipped",
            "89 run, 3 failed, 0 errors, 2 skipped",
        ],
        "old": ["counts not recorded", "counts not recorded"],
        "stopped": ["", ""],
    }
    assert page_module.COLUMNS[11:13] == ("base tests", "patched tests")
    tests = page.details["t-run-1-counted"]["tiers"][2]
    assert tests["test_counts"]["lines"] == [
        "base    (JDK 1.8.0_504): 89 run, 0 failed, 0 errors, 2 skipped",
        "patched (JDK 17.0.15): 89 run, 3 failed, 0 errors, 2 skipped",
    ]
    old = page.details["t-run-1-old"]["tiers"][2]["test_counts"]
    assert old["lines"] == ["base: counts not recorded", "patched: counts not recorded"]
    files = write_report(
        report_document(evaluation, check(evaluation), "now"), tmp_path / "r", page
    )
    assert files.trials is not None
    html = files.trials.read_text()
    assert 'data-name="base-tests"' in html and 'data-name="patched-tests"' in html
    assert "t.test_counts" in html  # the trial's detail draws the lines


UNTESTED = {"changed": 2, "covered": 0, "files": [{"path": "a.go", "changed": 2, "covered": 0}]}
EXECUTED = {"changed": 4, "covered": 3, "files": [{"path": "b.go", "changed": 4, "covered": 3}]}


@pytest.mark.usefixtures("plots_not_drawn")
def test_diff_coverage_is_in_the_table_the_trials_detail_and_the_report(
    store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    plans = [
        Plan("untested", details={Tier.TESTS: {"diff_coverage": UNTESTED}}),
        Plan("executed", details={Tier.TESTS: {"diff_coverage": EXECUTED}}),
        Plan("bump", details={Tier.TESTS: {"diff_coverage": {"changed": 0, "covered": 0}}}),
        Plan("old"),  # recorded before diff coverage was kept
        Plan("stopped", outcome="fail@compile"),  # tier 3 never ran
    ]
    append(store, gate_specs, plans)
    evaluation = evaluate(store, gate_specs)
    page = page_of(store, evaluation, gate_specs)
    cells = {row[1]: row[13] for row in page.rows}
    assert cells == {
        "untested": "untested change (0 of 2)",
        "executed": "3 of 4 lines",
        "bump": "no changed main code",
        "old": "",
        "stopped": "",
    }
    assert page_module.COLUMNS[13] == "diff coverage"
    tests = page.details["t-run-1-untested"]["tiers"][2]
    assert tests["diff_coverage"]["untested"] is True
    assert tests["diff_coverage"]["lines"] == [
        "diff coverage: untested change: the base's tests execute none of the 2 changed lines "
        "of main code",
        "  a.go: 0 of 2 changed lines executed",
    ]
    document = report_document(evaluation, check(evaluation), "now")
    [model] = {p.model for p in plans}
    assert document["diff_coverage"] == {
        model: {
            "passes": 4,
            "executed": 1,
            "untested change": 1,
            "no changed main code": 1,
            "not measured": 0,
            "not recorded": 1,
        }
    }
    files = write_report(document, tmp_path / "r", page)
    assert files.trials is not None
    html = files.trials.read_text()
    assert 'data-name="diff-coverage"' in html and "t.diff_coverage" in html
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert f"| {model} | 4 | 1 | 1 | 1 | 0 | 1 |" in markdown
    index = (tmp_path / "r" / "index.html").read_text()
    assert '<section id="diff-coverage">' in index
    assert (
        f"<tr><td>{model}</td><td>4</td><td>1</td><td>1</td><td>1</td><td>0</td><td>1</td></tr>"
        in index
    )
