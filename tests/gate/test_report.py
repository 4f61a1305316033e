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
from markdown_it import MarkdownIt
from PIL import Image

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.report import (
    ReportFiles,
    TrialsPage,
    report_document,
    write_report,
)
from migration_evals.gate.report.plots import PLOTTERS, render, render_png
from tests.gate.ledgers import Plan, add_gold, append, balanced, page_of

GENERATED = "2026-11-29T12:00:00+00:00"


def _document(store: Store, specs: SpecSet) -> dict[str, Any]:
    evaluation = evaluate(store, specs)
    return report_document(evaluation, check(evaluation), GENERATED)


def _more_colours_than(png: bytes, count: int) -> bool:
    """Whether ``png`` holds more than ``count`` distinct colours: ``getcolors`` gives up
    past its ``maxcolors``, and asked for up to 2**24 it spent a tenth of a second a plot."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.getcolors(maxcolors=count) is None


@pytest.fixture(scope="module")
def evaluated(
    tmp_path_factory: pytest.TempPathFactory, specs: SpecSet
) -> tuple[dict[str, Any], TrialsPage]:
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
    evaluation = evaluate(store, gate_specs)
    page = page_of(store, evaluation, gate_specs)
    store.close()
    return document, page


@pytest.fixture(scope="module")
def broken(evaluated: tuple[dict[str, Any], TrialsPage]) -> dict[str, Any]:
    return evaluated[0]


@pytest.fixture(scope="module")
def files(
    evaluated: tuple[dict[str, Any], TrialsPage], tmp_path_factory: pytest.TempPathFactory
) -> ReportFiles:
    return write_report(*evaluated[:1], tmp_path_factory.mktemp("report") / "out", evaluated[1])


DRAWN = sorted(set(PLOTTERS) - {"gold_anchor"})  # no gold label: the anchor has no matrix


def test_every_file_is_written(
    broken: dict[str, Any], files: ReportFiles, evaluated: tuple[dict[str, Any], TrialsPage]
) -> None:
    names = sorted(p.name for p in files.folder.iterdir())
    plots = [f"{n}.{kind}" for n in DRAWN for kind in ("png", "svg")]
    written = ["index.html", "trials.html", "report.md", "report.json", "records", *plots]
    assert names == sorted(written)
    # A record page (patch and whole logs) for each trial whose detail is inlined.
    records = sorted(p.stem for p in (files.folder / "records").iterdir())
    assert records == sorted(evaluated[1].details)
    assert sorted(broken["plots"]) == DRAWN
    assert json.loads(files.json.read_text()) == json.loads(json.dumps(broken))
    for plot in files.plots:
        png = plot.read_bytes()
        assert png.startswith(b"\x89PNG") and _more_colours_than(png, 20)
        svg = plot.with_suffix(".svg").read_text()
        assert svg.startswith("<?xml") and "<svg" in svg and svg.count("<path") > 20
        assert "NOT PUBLISHABLE" in svg  # the watermark, in the text matplotlib keeps


def test_a_plot_with_nothing_to_show_is_left_out(
    broken: dict[str, Any], files: ReportFiles
) -> None:
    reason = broken["plots_left_out"]["gold_anchor"]
    assert reason.startswith("no gold label matches a graded funnel verdict yet")
    html = files.html.read_text()
    assert f'data-plot="gold_anchor">No plot: {reason}.</p>' in html
    assert f"_No plot: {reason}._" in files.markdown.read_text()
    assert "gold_anchor.png" not in html and not (files.folder / "gold_anchor.png").exists()


def test_unpublishable_is_marked_on_every_page(broken: dict[str, Any], files: ReportFiles) -> None:
    html = files.html.read_text()
    assert 'data-publishable="false"' in html
    assert "NOT PUBLISHABLE: 3 refusal(s)" in html  # anchor, too few trials, the judge pair
    assert html.count('<span class="tag">not publishable</span>') >= 6
    assert '<div class="banner" id="broken-banner">This evaluation is BROKEN' in html
    assert "&lt;b&gt;errored&lt;/b&gt;" in html and "<b>errored</b>" not in html
    assert html.count('src="data:image/png;base64,') == len(DRAWN)  # self-contained
    markdown = files.markdown.read_text()
    assert markdown.startswith("# migration-evals report — NOT PUBLISHABLE\n")
    assert "> **This evaluation is BROKEN" in markdown
    assert markdown.count("(not publishable)") >= 6
    assert "![funnel](funnel.png)" in markdown
    assert broken["publishable"] is False and broken["banner"].startswith("This evaluation")
    assert files.trials is not None
    trials = files.trials.read_text()
    assert (
        "NOT PUBLISHABLE: 3 refusal(s)" in trials
        and '<span class="tag">not publishable</span>' in trials
    )
    assert '<div class="banner" id="broken-banner">This evaluation is BROKEN' in trials


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
    assert "measured inference ÷ infrastructure: " in markdown
    assert "| claude-sonnet-4-5 − gemini-2.5-pro | 12 / 24 | 12 / 24 | +0.0% |" in markdown
    # Each model's trials here are changesets of their own: the pages say the tasks differ.
    assert broken["tasks"]["same_tasks"] is False
    assert '<p class="banner" id="tasks-differ">Tasks differ: the models were graded on ' in (
        files.html.read_text()
    )
    assert "**Tasks differ**: the models were graded on different tasks: 0 of" in markdown


@pytest.mark.usefixtures("plots_not_drawn")  # its text is read; the plots are drawn above
def test_a_publishable_report_says_so(
    clean_store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    document = _document(clean_store, gate_specs)
    files = write_report(document, tmp_path)
    html = files.html.read_text()
    assert "PUBLISHABLE: the gate found no reason" in html
    assert "not publishable" not in html and "broken-banner" not in html
    assert files.markdown.read_text().startswith("# migration-evals report\n\n**PUBLISHABLE**")


def test_an_empty_ledger_draws_no_empty_plot(
    store: Store, gate_specs: SpecSet, tmp_path: Path
) -> None:
    add_gold(store)
    document = _document(store, gate_specs)
    # The gold table is read apart from the trials: its matrix has something to show.
    assert document["plots"] == {"gold_anchor": "gold_anchor.png"}
    assert sorted(document["plots_left_out"]) == sorted(set(PLOTTERS) - {"gold_anchor"})
    files = write_report(document, tmp_path / "empty")
    html = files.html.read_text()
    assert html.count("No plot: ") == len(PLOTTERS) - 1 and html.count("<img") == 1
    assert [p.name for p in files.folder.glob("*.svg")] == ["gold_anchor.svg"]


def test_plots_render_as_png_and_svg(broken: dict[str, Any], files: ReportFiles) -> None:
    # Every plot the report wrote decodes and is not blank (test_every_file_is_written);
    # drawing them all again took a third of this module's time. The public functions
    # draw what the report wrote: the same PNG byte for byte, and an SVG.
    name, filename = next(iter(broken["plots"].items()))
    png = render_png(name, broken)
    assert png == (files.folder / filename).read_bytes() and _more_colours_than(png, 10)
    assert render(name, broken, "svg").startswith(b"<?xml")


def test_the_markdown_renders_every_table_and_plot(
    broken: dict[str, Any], files: ReportFiles
) -> None:
    html = MarkdownIt("commonmark").enable("table").render(files.markdown.read_text())
    # gate, pass rates, diff coverage of passes, differences, the paired tests and the task
    # grid, per model, provenance, funnel, contamination, hypotheses
    assert html.count("<table>") == 11
    assert "McNemar exact p" in html and "<th>task</th>" in html
    assert html.count("<img ") == len(broken["plots"])
    assert "<td>claude-sonnet-4-5 − gemini-2.5-pro</td>" in html
