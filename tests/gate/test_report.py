"""Reports: every file written, plots that decode and are not blank, and unpublishable
results marked as such on every page."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from core.specs import SpecSet
from core.store import Store
from gate.evaluation import evaluate
from gate.publication import check
from gate.report import ReportFiles, report_document, write_report
from gate.report.plots import PLOTTERS, render_png
from tests.gate.ledgers import Plan, add_gold, append, balanced

GENERATED = "2026-11-29T12:00:00+00:00"


def _document(store: Store, specs: SpecSet) -> dict[str, Any]:
    evaluation = evaluate(store, specs)
    return report_document(evaluation, check(evaluation), GENERATED)


def _distinct_colours(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 24) or ())


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory, specs: SpecSet) -> dict[str, Any]:
    """An unpublishable evaluation: no gold anchor, an infrastructure error, strict judges."""
    early = {k: replace(h, registered_at=date(2000, 1, 1)) for k, h in specs.hypotheses.items()}
    gate_specs = replace(specs, hypotheses=early)
    store = Store.open(f"sqlite:///{tmp_path_factory.mktemp('broken') / 'ledger.db'}")
    plans = balanced(per_bucket=12)
    plans[0].strict = ("pass", "pass")
    plans[1].strict = ("pass", "fail")
    plans.append(Plan("<b>errored</b>", outcome="error@compile"))
    append(store, gate_specs, plans)
    document = _document(store, gate_specs)
    store.close()
    return document


@pytest.fixture(scope="module")
def files(broken: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> ReportFiles:
    return write_report(broken, tmp_path_factory.mktemp("report") / "out")


def test_every_file_is_written(broken: dict[str, Any], files: ReportFiles) -> None:
    names = sorted(p.name for p in files.folder.iterdir())
    assert names == sorted(
        ["index.html", "report.md", "report.json", *(f"{n}.png" for n in PLOTTERS)]
    )
    assert json.loads(files.json.read_text()) == json.loads(json.dumps(broken))
    for plot in files.plots:
        png = plot.read_bytes()
        assert png.startswith(b"\x89PNG") and _distinct_colours(png) > 20


def test_unpublishable_is_marked_on_every_page(broken: dict[str, Any], files: ReportFiles) -> None:
    html = files.html.read_text()
    assert 'data-publishable="false"' in html
    assert "NOT PUBLISHABLE: 3 refusal(s)" in html  # anchor, too few trials, the judge pair
    assert html.count('<span class="tag">not publishable</span>') >= 6
    assert '<div class="banner" id="broken-banner">This evaluation is BROKEN' in html
    assert "&lt;b&gt;errored&lt;/b&gt;" in html and "<b>errored</b>" not in html
    assert html.count('src="data:image/png;base64,') == len(PLOTTERS)  # self-contained
    markdown = files.markdown.read_text()
    assert markdown.startswith("# migration-evals report — NOT PUBLISHABLE\n")
    assert "> **This evaluation is BROKEN" in markdown
    assert markdown.count("(not publishable)") >= 6
    assert "![funnel](funnel.png)" in markdown
    assert broken["publishable"] is False and broken["banner"].startswith("This evaluation")


def test_the_numbers_on_the_pages(broken: dict[str, Any], files: ReportFiles) -> None:
    markdown = files.markdown.read_text()
    assert "| gpt-5 | 12 / 24 | 50.0% |" in markdown
    assert "1 counted trial(s) ended in an infrastructure error" in markdown
    assert "infrastructure error: engine down" in markdown
    assert "Cohen's kappa" in broken["judges"]["agreement"]["note"] or (
        "undefined" in broken["judges"]["agreement"]["note"]
    )
    assert broken["judges"]["agreement"]["n"] == 2
    assert broken["judges"]["reliability"].startswith("UNRELIABLE: ")
    assert "insufficient data" in markdown
    assert "inference ÷ infrastructure: " in markdown


def test_a_publishable_report_says_so(
    clean_store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    document = _document(clean_store, gate_specs)
    files = write_report(document, tmp_path)
    html = files.html.read_text()
    assert "PUBLISHABLE: the gate found no reason" in html
    assert "not publishable" not in html and "broken-banner" not in html
    assert files.markdown.read_text().startswith("# migration-evals report\n\n**PUBLISHABLE**")


def test_plots_of_an_empty_ledger_still_render(store: Store, gate_specs: SpecSet) -> None:
    add_gold(store)
    document = _document(store, gate_specs)
    for name in PLOTTERS:
        assert _distinct_colours(render_png(name, document)) > 10
