"""``GET /trials/<trial_id>``: one trial's detail as an HTML page, the check run's link.

The detail is ``migration_evals.gate.trial_detail``'s, the one ``migration-evals show`` prints,
rendered for reading: the facts, the tier table, then each tier's reason, evidence, sandbox runs
(exit code and output tail) and judges' answers (``show --json`` has it as JSON). Only a
link the App signed opens it (``migration_evals.bot.app.links``). The page is read-only and static:
every value is escaped (evidence, output tails and judge answers come from candidates and their
builds), it loads nothing and runs no script (a ``Content-Security-Policy`` of
``default-src 'none'`` says so to the browser). Only a whole trial id is served: a prefix
or a changeset id, which ``show`` accepts, is not found here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from migration_evals.core.diff_coverage import DiffCoverage
from migration_evals.core.model import Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.report.records import RecordPage, diff_lines, record_page
from migration_evals.gate.trial_artifacts import ArtifactStatus, ArtifactView
from migration_evals.gate.trial_detail import (
    TierDetail,
    TrialDetail,
    UnknownTrialError,
    run_records,
    trial_detail,
)

__all__ = ["PAGE_HEADERS", "TrialPage", "TrialPages", "render_trial"]

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
    "pre{background:#f6f8fa;padding:1rem;overflow:auto;white-space:pre-wrap}"
    ".fail,.error{color:#b31d28}.pass{color:#22863a}dt{font-weight:bold}"
    ".diff .add{color:#22863a}.diff .del{color:#b31d28}.diff .hunk{color:#6f42c1}"
    ".diff .meta{font-weight:bold}"
)


def _cell(value: Any) -> str:
    return f"<td>{escape(str(value))}</td>"


def _tier_rows(detail: TrialDetail) -> list[str]:
    rows = ["<tr><th>tier</th><th>verdict</th><th>reason</th><th>origin</th></tr>"]
    for tier in detail.tiers:
        cells = (tier.tier.value, tier.verdict.value, tier.reason, tier.origin)
        rows.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    return rows


def _facts(detail: TrialDetail) -> Sequence[tuple[str, Any]]:
    changeset = detail.changeset
    return (
        ("verdict", detail.verdict.value),
        ("changeset", changeset.get("id", "")),
        ("recipe", changeset.get("recipe", "")),
        ("model", changeset.get("model", "")),
        ("run", detail.ref.run_id),
        ("cost (list)", f"${detail.cost('list_cost_usd'):,.4f}"),
        ("cost (actual)", f"${detail.cost('actual_cost_usd'):,.4f}"),
        *_diff_coverage(detail),
    )


def _diff_coverage(detail: TrialDetail) -> Sequence[tuple[str, Any]]:
    """Which changed lines of main code the base's tests ran, when tier 3 recorded it."""
    for tier in detail.tiers:
        if tier.tier is Tier.TESTS:
            found = DiffCoverage.of_details(tier.envelope.get("details"))
            if found is not None:
                return (("diff coverage", found.describe()),)
    return ()


def _evidence(tier: TierDetail) -> list[str]:
    items = []
    for found in tier.envelope.get("evidence") or ():
        where = ":".join(str(found[k]) for k in ("path", "line", "column") if found.get(k))
        place = f"<code>{escape(where)}</code> " if where else ""
        items.append(f"<li>{place}{escape(str(found.get('message', '')))}</li>")
    return ["<h4>Evidence</h4>", "<ul>", *items, "</ul>"] if items else []


def _runs(tier: TierDetail) -> list[str]:
    lines = []
    for run in tier.sandbox_runs:
        said = f"exit {run.get('exit_code')}, {float(run.get('duration_s') or 0):.1f} s"
        if run.get("timed_out"):
            said += ", timed out"
        lines.append(f"<h4>{escape(str(run.get('label', 'run')))}: {escape(said)}</h4>")
        tail = str(run.get("output_tail") or "")
        if tail:
            cut = " (the end of its output)" if run.get("output_truncated") else ""
            lines.append(f"<p>Output{escape(cut)}:</p><pre>{escape(tail)}</pre>")
    return lines


def _untested_files(tier: TierDetail) -> list[str]:
    """Tier 3's changed files with lines of main code no test of the base ran."""
    coverage = (tier.envelope.get("details") or {}).get("diff_coverage") or {}
    items = [
        f"<li><code>{escape(str(f.get('path')))}</code>: line(s) "
        f"{escape(', '.join(str(n) for n in f.get('uncovered_lines') or ()))}</li>"
        for f in coverage.get("files") or ()
        if f.get("uncovered_lines")
    ]
    return (
        ["<h4>Changed lines no test of the base ran</h4>", "<ul>", *items, "</ul>"] if items else []
    )


def _judges(tier: TierDetail) -> list[str]:
    items = []
    for judge in tier.judges:
        answer = judge.get("answer") or {}
        said = answer.get("rationale") or answer.get("problem") or ""
        items.append(
            f"<dt>{escape(str(judge.get('model')))} ({escape(str(judge.get('role')))}): "
            f"{escape(str(answer.get('verdict')))}</dt><dd>{escape(str(said))}</dd>"
        )
    return ["<h4>Judges</h4>", "<dl>", *items, "</dl>"] if items else []


def _tier_section(tier: TierDetail) -> list[str]:
    verdict = tier.verdict.value
    lines = [
        f'<h3 id="{escape(tier.tier.value)}">{escape(tier.tier.value)}: '
        f'<span class="{escape(verdict)}">{escape(verdict)}</span></h3>',
        f"<p>{escape(tier.reason or '(no reason given)')}</p>",
        f"<p>Answered by {escape(tier.adapter)} ({escape(tier.origin)}); "
        f"stamps: oracle <code>{escape(str(tier.envelope['stamps']['oracle'])[:12])}</code>, "
        f"recipe <code>{escape(str(tier.envelope['stamps']['recipe'])[:12])}</code>.</p>",
    ]
    lines.extend(f"<p>⚠️ fabricated: {escape(mark)}</p>" for mark in tier.fabricated)
    return [*lines, *_evidence(tier), *_untested_files(tier), *_runs(tier), *_judges(tier)]


def _artifact(view: ArtifactView, *, diff: bool = False) -> list[str]:
    """One kept text (the patch coloured as a diff), or why it cannot be shown."""
    head = f"<h3>{escape(view.label)}</h3>"
    if view.status is not ArtifactStatus.KEPT:
        why = f": {view.note}" if view.note else ""
        return [head, f"<p><em>{escape(view.status.value)}{escape(why)}</em></p>"]
    if not diff:
        return [head, f"<pre>{escape(view.text)}</pre>"]
    lines = "\n".join(
        f'<span class="{css}">{escape(line)}</span>' if css else escape(line)
        for css, line in diff_lines(view.text)
    )
    return [head, f'<pre class="diff">{lines}</pre>']


def _record(record: RecordPage | None) -> list[str]:
    """The patch as tier 1 applied it and the whole output of every sandboxed command."""
    if record is None:
        return []
    found = ["<h2>Patch</h2>", *_artifact(record.patch, diff=True), "<h2>Logs</h2>"]
    if not record.logs:
        found.append("<p><em>no sandboxed command ran for this trial</em></p>")
    for tier, views in record.logs:
        found.append(f"<h3>{escape(tier)}</h3>")
        found.extend(line for view in views for line in _artifact(view))
    return found


def render_trial(detail: TrialDetail, record: RecordPage | None = None) -> str:
    """The page: the facts, the tier table, each tier in full, then the trial's record
    (patch and logs) when its artifacts are at hand."""
    facts = "".join(
        f"<tr><th>{escape(name)}</th>{_cell(value)}</tr>" for name, value in _facts(detail)
    )
    sections = [line for tier in detail.tiers for line in _tier_section(tier)]
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>trial {escape(detail.ref.trial_id)}</title>",
            f"<style>{_STYLE}</style></head><body>",
            f"<h1>Trial <code>{escape(detail.ref.trial_id)}</code></h1>",
            f"<table>{facts}</table>",
            "<h2>Tiers</h2>",
            f"<table>{''.join(_tier_rows(detail))}</table>",
            *sections,
            *_record(record),
            "<p>The same record as JSON: "
            f"<code>migration-evals show {escape(detail.ref.trial_id)} --json</code>.</p>",
            "</body></html>",
        ]
    )


class TrialPages:
    """Renders a trial's page from the store, or None when no trial has that exact id."""

    def __init__(self, store: Store, specs: SpecSet | None = None) -> None:
        self.store = store
        self.specs = specs

    def __call__(self, trial_id: str) -> str | None:
        try:
            detail = trial_detail(
                self.store.trials, trial_id, runs=run_records(self.store.runs), specs=self.specs
            )
        except UnknownTrialError:
            return None
        if detail.ref.trial_id != trial_id:  # a prefix or a changeset id: not a link we made
            return None
        return render_trial(detail, record_page(detail, self.store.artifacts))


TrialPage = Callable[[str], str | None]
