"""Writing a report folder: ``report.json``, the PNG plots, ``report.md`` and ``index.html``.

``index.html`` is self-contained: its styles are inline and its plots are embedded as
data URIs, so the one file can be mailed or archived and still shows everything. The PNG
files are written beside it for ``report.md`` and for reuse.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from gate.report.plots import render_png

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True, slots=True)
class ReportFiles:
    folder: Path
    html: Path
    markdown: Path
    json: Path
    plots: tuple[Path, ...]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("gate.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


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


def _render(template: str, document: dict[str, Any], images: dict[str, str]) -> str:
    environment = _environment()
    environment.filters.update(usd=_usd, pct=_pct, num=_num, rate=_rate)
    return environment.get_template(template).render(doc=document, images=images)


def write_report(document: dict[str, Any], folder: Path) -> ReportFiles:
    """Write every file of the report for ``document`` (``report_document``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    plots, embedded = [], {}
    for name, filename in document["plots"].items():
        png = render_png(name, document)
        (folder / filename).write_bytes(png)
        plots.append(folder / filename)
        embedded[name] = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    json_path = folder / "report.json"
    json_path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    markdown = folder / "report.md"
    markdown.write_text(_render("report.md.j2", document, document["plots"]), encoding="utf-8")
    html = folder / "index.html"
    html.write_text(_render("index.html.j2", document, embedded), encoding="utf-8")
    return ReportFiles(folder, html, markdown, json_path, tuple(plots))
