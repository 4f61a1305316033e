"""``GET /trials/<trial_id>``: one trial's detail as an HTML page, the check run's link.

The detail is ``gate.trial_detail``'s, the one ``migration-evals show`` prints. The page
is read-only and static: every value is escaped (evidence, output tails and judge answers
come from candidates and their builds), it loads nothing and runs no script (a
``Content-Security-Policy`` of ``default-src 'none'`` says so to the browser). Only a whole
trial id is served: a prefix or a changeset id, which ``show`` accepts, is not found here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

import orjson

from core.diff_coverage import DiffCoverage
from core.model import Tier
from core.specs import SpecSet
from core.store import Store
from gate.trial_detail import TrialDetail, UnknownTrialError, trial_detail

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


def render_trial(detail: TrialDetail) -> str:
    """The page: the facts, the tier table, then the whole detail as JSON."""
    facts = "".join(
        f"<tr><th>{escape(name)}</th>{_cell(value)}</tr>" for name, value in _facts(detail)
    )
    whole = orjson.dumps(detail.to_dict(), option=orjson.OPT_INDENT_2).decode()
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
            "<h2>Everything the ledger holds (as <code>migration-evals show --json</code>)</h2>",
            f"<pre>{escape(whole)}</pre>",
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
            detail = trial_detail(self.store, trial_id, specs=self.specs)
        except UnknownTrialError:
            return None
        if detail.ref.trial_id != trial_id:  # a prefix or a changeset id: not a link we made
            return None
        return render_trial(detail)


TrialPage = Callable[[str], str | None]
