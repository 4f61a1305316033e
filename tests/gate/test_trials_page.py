"""The trials page: every counted trial a row, details inlined up to a bound (the trials a
reader opens first), text from candidates unable to leave its script element."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from core.model import Tier
from core.specs import SpecSet
from core.store import Store
from gate.evaluation import evaluate
from gate.publication import check
from gate.report import report_document, trials_page, write_report
from gate.trial_detail import run_records
from tests.gate.ledgers import Plan, append

# The module, not the function of the same name that ``gate.report`` exports.
page_module = importlib.import_module("gate.report.trials_page")
HOSTILE = "</script><script>document.title='owned'</script><!--"


def _page_data(html: str, name: str) -> object:
    found = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', html, re.S)
    assert found, f"no {name} data on the page"
    return json.loads(found.group(1))


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
    page = trials_page(store, evaluation.selection.trials, gate_specs, run_records(store))
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


def test_text_from_candidates_stays_in_its_script(
    store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    append(
        store,
        gate_specs,
        [Plan(HOSTILE, outcome="fail@compile", details={Tier.COMPILE: {"output_tail": HOSTILE}})],
    )
    evaluation = evaluate(store, gate_specs)
    page = trials_page(store, evaluation.selection.trials, gate_specs, run_records(store))
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
