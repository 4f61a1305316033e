"""The trials page in headless Chromium: the filter narrows the table the way a reader's
typing and choosing would, and a clicked row opens its trial's detail."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.report import ReportFiles, report_document, write_report
from tests.conftest import require_service
from tests.gate.ledgers import Plan, append, balanced, page_of, registered_early
from tests.gate.test_report_browser import CHROMIUM, _chromium

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=\"document.title='owned'\">"


@pytest.fixture(scope="module")
def report(specs: SpecSet, tmp_path_factory: pytest.TempPathFactory) -> ReportFiles:
    """One report for the module's tests, which only read it (each in a browser of its
    own): its ledger took a second to write for each."""
    require_service("chromium", Path(CHROMIUM).exists(), "apt-get install chromium")
    folder = tmp_path_factory.mktemp("trials-page")
    gate_specs = registered_early(specs)
    plans = balanced(per_bucket=4)
    plans.append(Plan(HOSTILE, outcome="error@compile"))
    store = Store.open(f"sqlite:///{folder / 'ledger.db'}")
    try:
        append(store, gate_specs, plans)
        evaluation = evaluate(store, gate_specs)
        page = page_of(store, evaluation, gate_specs)
    finally:
        store.close()
    return write_report(report_document(evaluation, check(evaluation), "now"), folder / "r", page)


def _dom(files: ReportFiles, profile: Path, view: str) -> str:
    assert files.trials is not None
    url = files.trials.resolve().as_uri() + view
    return _chromium(profile, "--virtual-time-budget=10000", "--dump-dom", url).stdout


def _body(dom: str) -> dict[str, str]:
    found = re.search(r"<body([^>]*)>", dom)
    assert found, "no body in the dumped page"
    return dict(re.findall(r'data-(\w+)="([^"]*)"', found.group(1)))


def _rows(dom: str) -> list[list[str]]:
    tbody = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [
            html_lib.unescape(re.sub(r"<[^>]+>", "", cell))
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", tbody, re.S)
    ]


def test_the_filter_narrows_the_table(report: ReportFiles, tmp_path: Path) -> None:
    everything = _body(_dom(report, tmp_path / "p1", ""))
    assert (everything["ready"], everything["matching"]) == ("true", "25")
    dom = _dom(report, tmp_path / "p2", "#model=gpt-5&verdict=failed")
    body = _body(dom)
    rows = _rows(dom)
    assert body["matching"] == body["shown"] == "4" == str(len(rows))
    assert {(r[1], r[3]) for r in rows} == {("gpt-5", "failed")}
    typed = _dom(report, tmp_path / "p3", "#q=gemini-2.5-pro%2F2026%2F001")
    assert [r[0] for r in _rows(typed)] == ["gemini-2.5-pro/2026/001"]


def test_a_header_sorts_the_table(report: ReportFiles, tmp_path: Path) -> None:
    def costs(view: str, profile: str) -> list[float]:
        rows = _rows(_dom(report, tmp_path / profile, view))
        return [float(r[6].lstrip("$")) for r in rows]

    ascending = costs("#sort=list", "s1")
    descending = costs("#sort=-list", "s2")
    assert ascending == sorted(ascending) and descending == sorted(ascending, reverse=True)
    assert ascending[0] < ascending[-1]  # there was something to sort
    names = [r[0] for r in _rows(_dom(report, tmp_path / "s3", "#sort=-changeset"))]
    assert names == sorted(names, reverse=True)


def test_a_row_opens_its_detail(report: ReportFiles, tmp_path: Path) -> None:
    trial = "t-run-1-gpt-5-2020-003"  # failed at compile
    dom = _dom(report, tmp_path / "p4", f"#open={trial}")
    panel = re.search(r'<section id="detail"([^>]*)>(.*?)</section>', dom, re.S)
    assert panel, "no detail panel"
    attributes, content = panel.groups()
    assert "hidden" not in attributes and f'data-trial="{trial}"' in attributes
    text = " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", content)).split())
    assert f"trial {trial}" in text
    assert "changeset: gpt-5/2020/003 · model gpt-5 · recipe java8-to-17" in text
    assert "compile: fail — live" in text and "tests: skipped — not run" in text
    assert "sandbox run: exit 0" in text and "BUILD SUCCESS" in text
    assert re.search(rf'<tr data-trial="{trial}" class="open">', dom)


def test_hostile_text_is_only_text(report: ReportFiles, tmp_path: Path) -> None:
    dom = _dom(report, tmp_path / "p5", "#verdict=error&open=t-run-1-" + "x")
    assert "<title>Trials" in dom and "owned" not in dom.split("</title>", 1)[0]
    rows = _rows(dom)
    assert [r[0] for r in rows] == [HOSTILE]
    assert "<img src" not in dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]


# Loads the trials page in a frame, measures where its column headers and first row are,
# scrolls the table's box and measures again; writes the numbers on its own body.
_PROBE = """<!DOCTYPE html><html><body>
<iframe id="f" src="trials.html" style="width: 1200px; height: 420px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentWindow.document;
  function probe() {
    if (d.body.dataset.ready !== "true") { setTimeout(probe, 50); return; }
    var th = d.querySelector("#trials thead th").getBoundingClientRect();
    var first = d.querySelector("#trials tbody tr").getBoundingClientRect();
    var box = d.getElementById("rows-box");
    box.scrollTop = 150;
    var scrolled = d.querySelector("#trials thead th").getBoundingClientRect();
    var status = d.querySelector("header.status").getBoundingClientRect();
    document.body.dataset.probe = [th.bottom, first.top, scrolled.top,
      box.getBoundingClientRect().top, box.scrollTop, status.bottom].join(",");
  }
  probe();
});
</script></body></html>"""


def test_the_column_headers_never_cover_the_first_rows(report: ReportFiles, tmp_path: Path) -> None:
    assert report.trials is not None
    probe = report.trials.parent / "probe.html"
    probe.write_text(_PROBE)
    dom = _chromium(
        tmp_path / "p6",
        "--allow-file-access-from-files",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.resolve().as_uri(),
    ).stdout
    found = re.search(r'data-probe="([^"]+)"', dom)
    assert found, "the probe did not run"
    th_bottom, first_top, scrolled_top, box_top, scrolled_by, status_bottom = map(
        float, found.group(1).split(",")
    )
    assert first_top >= th_bottom - 1  # at rest: the first row starts below the headers
    assert box_top >= status_bottom  # the table's box starts below the status header
    assert scrolled_by > 0  # the box scrolls (the page is taller than the frame)...
    assert abs(scrolled_top - box_top) <= 1  # ...and the headers stay at its top
