"""Writing a report folder: ``report.json``, the PNG plots, ``report.md`` and ``index.html``,
and with a trials page, ``trials.html`` and a record page per inlined trial in ``records/``.

``index.html`` is self-contained: its styles are inline and its plots are embedded as
data URIs, so the one file can be mailed or archived and still shows everything. The PNG
files are written beside it for ``report.md`` and for reuse.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from migration_evals.gate.report.records import RECORDS_FOLDER, diff_lines
from migration_evals.gate.report.trials_page import SHOWN, TrialsPage

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True, slots=True)
class ReportFiles:
    folder: Path
    html: Path
    markdown: Path
    json: Path
    plots: tuple[Path, ...]
    trials: Path | None = None


def _usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _rate(value: float) -> str:
    return f"${value:.10f}".rstrip("0").rstrip(".")


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1%}"


@cache
def _environment() -> jinja2.Environment:
    """One environment per process: it keeps each template compiled. A new one per page
    compiled the template again every time, most of a report's time when it writes a
    record page for each of hundreds of trials."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("migration_evals.gate.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(usd=_usd, pct=_pct, num=_num, rate=_rate, signed=_signed)
    return environment


def _render(template: str, document: dict[str, Any], images: dict[str, str], **extra: Any) -> str:
    return _environment().get_template(template).render(doc=document, images=images, **extra)


def script_json(value: Any) -> Markup:
    """JSON to sit inside a ``<script>`` element: nothing in it can close the element or
    open a comment, whatever text the values hold."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)  # noqa: S704 - escaped for a script element just above


def _trials_html(document: dict[str, Any], page: TrialsPage) -> str:
    return _render(
        "trials.html.j2",
        document,
        {},
        page=page.to_dict(),
        shown=SHOWN,
        rows_json=script_json(page.rows),
        details_json=script_json(page.details),
    )


def _write_records(document: dict[str, Any], page: TrialsPage, folder: Path) -> None:
    """Each inlined trial's record page: its patch and its sandboxed commands' output."""
    if not page.records:
        return
    (folder / RECORDS_FOLDER).mkdir(exist_ok=True)
    for record in page.records:
        html = _render("record.html.j2", document, {}, record=record, diff_lines=diff_lines)
        (folder / record.path).write_text(html, encoding="utf-8")


def render_formats(
    name: str, document: Mapping[str, Any], formats: Sequence[str]
) -> dict[str, bytes]:
    """The plot ``name`` drawn in each of ``formats``. matplotlib is imported when a report
    is drawn, not with this module: the App's server loads it (its trial pages, the
    survival refresh) and draws no plot, and matplotlib is a third of its start."""
    from migration_evals.gate.report.plots import render_formats as draw  # noqa: PLC0415

    return draw(name, document, formats)


def write_report(
    document: dict[str, Any], folder: Path, page: TrialsPage | None = None
) -> ReportFiles:
    """Write every file of the report for ``document`` (``report_document``) into ``folder``,
    and its trials page when ``page`` is given."""
    folder.mkdir(parents=True, exist_ok=True)
    plots, embedded = [], {}
    for name, filename in document["plots"].items():
        drawn = render_formats(name, document, ("png", "svg"))
        png = drawn["png"]
        (folder / filename).write_bytes(png)
        (folder / filename).with_suffix(".svg").write_bytes(drawn["svg"])
        plots.append(folder / filename)
        embedded[name] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    json_path = folder / "report.json"
    json_path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    markdown = folder / "report.md"
    markdown.write_text(_render("report.md.j2", document, document["plots"]), encoding="utf-8")
    html = folder / "index.html"
    html.write_text(_render("index.html.j2", document, embedded), encoding="utf-8")
    trials = None
    if page is not None:
        trials = folder / document["trials_page"]
        trials.write_text(_trials_html(document, page), encoding="utf-8")
        _write_records(document, page, folder)
    return ReportFiles(folder, html, markdown, json_path, tuple(plots), trials)
