"""The report's plots, drawn from the report document with matplotlib's object API.

``Figure`` objects are used directly (no ``pyplot``), so drawing touches no global state,
needs no display and never selects a backend for the rest of the process. Every plot of
an unpublishable evaluation carries a "NOT PUBLISHABLE" watermark, so a picture copied
out of the report still says so.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

__all__ = ["PLOTTERS", "render", "render_formats", "render_png"]

_PASS, _FAIL, _INCONCLUSIVE, _ERROR = "#2e7d32", "#c62828", "#f9a825", "#6a1b9a"
_LIST, _ACTUAL = "#90a4ae", "#1565c0"


def _figure(width: float = 7.0, height: float = 3.6) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return figure, figure.subplots()


def _no_data(axes: Axes, message: str) -> None:
    axes.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="#555555")
    axes.set_xticks([])
    axes.set_yticks([])


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def funnel(document: Mapping[str, Any]) -> Figure:
    figure, axes = _figure()
    rows = document["numbers"]["funnel"]
    names = [row["tier"] for row in rows]
    bottom = [0] * len(rows)
    for key, color, label in (
        ("passed", _PASS, "passed"),
        ("failed", _FAIL, "failed"),
        ("inconclusive", _INCONCLUSIVE, "inconclusive"),
        ("errors", _ERROR, "infrastructure error"),
    ):
        values = [row[key] for row in rows]
        axes.bar(names, values, bottom=bottom, color=color, label=label)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for index, row in enumerate(rows):
        axes.annotate(
            f"reached {row['reached']}",
            (index, row["reached"]),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    axes.set_ylim(0, max(1, *bottom) * 1.15)  # room for the "reached" labels
    axes.set_ylabel("trials")
    axes.set_title("Funnel: what became of the trials that reached each tier")
    axes.legend(fontsize=8, loc="upper right")
    return figure


def _interval_row(axes: Axes, index: int, row: Mapping[str, Any], color: str) -> None:
    if row["rate"] is None:
        axes.annotate("no graded trials", (0.5, index), ha="center", va="center", fontsize=8)
        return
    low, high = row["wilson_95"]
    axes.errorbar(
        [row["rate"]],
        [index],
        # max(): rounding can put a bound a hair inside the rate when it is 0 or 1.
        xerr=[[max(0.0, row["rate"] - low)], [max(0.0, high - row["rate"])]],
        fmt="o",
        color=color,
        capsize=4,
    )
    # At either end a centred label would hang over the axis line.
    side = "left" if row["rate"] < 0.1 else "right" if row["rate"] > 0.9 else "center"
    nudge = {"left": 4, "right": -4, "center": 0}[side]
    axes.annotate(
        f"{_percent(row['rate'])} of {row['graded']}",
        (row["rate"], index),
        xytext=(nudge, 7),
        textcoords="offset points",
        ha=side,
        fontsize=8,
    )


def _interval_plot(
    axes: Axes, labels: list[str], rows: list[Mapping[str, Any]], color: str
) -> None:
    for index, row in enumerate(rows):
        _interval_row(axes, index, row, color)
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlim(0, 1)
    axes.set_ylim(len(labels) - 0.3, -0.7)  # first label on top, as in the tables


def pass_rates(document: Mapping[str, Any]) -> Figure:
    rates = document["numbers"]["pass_rates"]
    figure, axes = _figure(height=max(2.4, 0.8 * len(rates) + 1.2))
    if not rates:
        _no_data(axes, "no counted trials")
        return figure
    models = sorted(rates)
    _interval_plot(axes, models, [rates[m] for m in models], _ACTUAL)
    axes.set_xlabel("pass rate (graded trials; 95% Wilson interval)")
    axes.set_title("Pass rate per model")
    return figure


def contamination(document: Mapping[str, Any]) -> Figure:
    """Each model's two buckets as rows, with the model and its status as a heading above
    them, inside the plot: long names never crowd the axis or each other."""
    checks = document["numbers"]["contamination"]
    models = sorted(checks)
    figure, axes = _figure(height=max(2.6, 1.25 * len(models) + 1.0))
    labels: list[str] = []
    rows: list[tuple[int, Mapping[str, Any]]] = []
    headings: list[tuple[int, str]] = []
    for model in models:
        found = checks[model]
        headings.append((len(labels), f"{model}: {found['status']}"))
        labels.append("")  # the heading's row
        for bucket in ("pre_cutoff", "post_cutoff"):
            labels.append(bucket.replace("_", "-"))
            rows.append((len(labels) - 1, found[bucket]))
    for index, row in rows:
        _interval_row(axes, index, row, "#ef6c00")
    over_axes = blended_transform_factory(axes.transAxes, axes.transData)
    for y, text in headings:
        axes.text(
            0.01,
            y,
            text,
            transform=over_axes,
            fontsize=9,
            weight="bold",
            va="center",
            ha="left",
            color="#212121",
        )
    axes.set_yticks([i for i, _ in rows], [labels[i] for i, _ in rows], fontsize=8)
    axes.set_xlim(0, 1)
    axes.set_ylim(len(labels) - 0.4, -0.6)
    axes.set_xlabel("pass rate by repository creation vs training cutoff (95% Wilson)")
    axes.set_title("Contamination tripwire")
    return figure


def _matrix(axes: Axes, cells: list[list[int]], rows: list[str], columns: list[str]) -> None:
    top = max(1, *(max(r) for r in cells))
    axes.imshow(cells, cmap="Blues", vmin=0, vmax=top)
    for i, line in enumerate(cells):
        for j, value in enumerate(line):
            ink = "white" if value > top / 2 else "#212121"  # readable on dark and light cells
            axes.text(j, i, str(value), ha="center", va="center", fontsize=14, color=ink)
    axes.set_xticks(range(len(columns)), columns)
    axes.set_yticks(range(len(rows)), rows)


def judge_agreement(document: Mapping[str, Any]) -> Figure:
    agreement = document["judges"]["agreement"]
    table = agreement["table"]
    figure, axes = _figure(width=5.0, height=4.2)
    cells = [
        [table["both_pass"], table["primary_pass_secondary_fail"]],
        [table["primary_fail_secondary_pass"], table["both_fail"]],
    ]
    _matrix(axes, cells, ["primary: pass", "primary: fail"], ["secondary: pass", "secondary: fail"])
    kappa = agreement["kappa"]
    detail = f"kappa {kappa:.3f}, n={agreement['n']}" if kappa is not None else agreement["note"]
    axes.set_title(f"Strict-mode judge agreement\n{detail}", fontsize=10)
    return figure


def gold_anchor(document: Mapping[str, Any]) -> Figure:
    anchor = document["anchor"]
    table = anchor["table"]
    figure, axes = _figure(width=5.0, height=4.2)
    cells = [
        [table["passed_accepted"], table["passed_rejected"]],
        [table["failed_accepted"], table["failed_rejected"]],
    ]
    _matrix(axes, cells, ["funnel: pass", "funnel: not pass"], ["gold: accepted", "gold: rejected"])
    phi = "undefined" if anchor["phi"] is None else f"{anchor['phi']:.3f}"
    axes.set_title(
        f"Gold anchor: {anchor['state'].upper()}\nphi {phi}, n={anchor['n']} "
        f"(floor {anchor['floor']}, min n {anchor['min_n']})",
        fontsize=10,
        color=_FAIL if anchor["state"] != "ok" else "#212121",
    )
    return figure


def cost(document: Mapping[str, Any]) -> Figure:
    figure = Figure(figsize=(9.0, 3.8), dpi=100, layout="constrained")
    tiers_axes, split_axes = figure.subplots(1, 2, width_ratios=[3, 2])
    rows = document["numbers"]["funnel"]
    names = [row["tier"] for row in rows]
    positions = range(len(rows))
    tiers_axes.bar(
        [p - 0.2 for p in positions], [r["cost_usd"] for r in rows], 0.4, color=_LIST, label="list"
    )
    tiers_axes.bar(
        [p + 0.2 for p in positions],
        [r["actual_cost_usd"] for r in rows],
        0.4,
        color=_ACTUAL,
        label="actual",
    )
    tiers_axes.set_xticks(list(positions), names)
    tiers_axes.set_ylabel("USD")
    tiers_axes.set_title("List versus actual cost per tier", fontsize=10)
    tiers_axes.legend(fontsize=8)
    spent = document["numbers"]["cost"]
    split = document["provenance"]
    split_axes.bar(
        [
            "infrastructure\n(sandbox s x rate)",
            "inference\n(measured)",
            "inference\n(not measured)",
        ],
        [
            spent["infrastructure_usd"],
            split["measured_inference_usd"],
            split["unmeasured_inference_usd"],
        ],
        color=["#8d6e63", "#5e35b1", "#bdbdbd"],
        hatch=["", "", "//"],
    )
    ratio = document["measured_ratio"]
    measured = "n/a (nothing to compare)" if ratio is None else f"inference = {ratio:g}x infra"
    split_axes.set_title(f"Measured cost: {measured}", fontsize=10)
    split_axes.tick_params(axis="x", labelsize=8)
    return figure


def differences(document: Mapping[str, Any]) -> Figure:
    rows = [r for r in document["differences"] if r["difference"] is not None]
    figure, axes = _figure(height=max(2.4, 0.7 * len(rows) + 1.3))
    for index, row in enumerate(rows):
        low, high = row["newcombe_95"]
        axes.errorbar(
            [row["difference"]],
            [index],
            xerr=[[max(0.0, row["difference"] - low)], [max(0.0, high - row["difference"])]],
            fmt="s",
            color=_ACTUAL,
            capsize=4,
        )
        axes.annotate(
            f"{row['difference']:+.0%} (p={row['p']:.3f})",
            (row["difference"], index),
            xytext=(0, 7),
            textcoords="offset points",
            ha="center",
            fontsize=8,
        )
    axes.axvline(0, color="#757575", linewidth=1, linestyle="--")
    axes.set_yticks(range(len(rows)), [f"{r['a']} − {r['b']}" for r in rows], fontsize=8)
    axes.set_xlim(-1, 1)
    axes.set_ylim(len(rows) - 0.4, -0.7)
    axes.set_xlabel("difference in pass rate (95% Newcombe interval; two-sided z-test p)")
    axes.set_title("Pass-rate difference between models")
    return figure


PLOTTERS: dict[str, Callable[[Mapping[str, Any]], Figure]] = {
    "funnel": funnel,
    "pass_rates": pass_rates,
    "contamination": contamination,
    "judge_agreement": judge_agreement,
    "gold_anchor": gold_anchor,
    "cost": cost,
    "differences": differences,
}


def render_png(name: str, document: Mapping[str, Any]) -> bytes:
    """One plot as PNG bytes, watermarked when the evaluation is not publishable."""
    return render(name, document, "png")


def render(name: str, document: Mapping[str, Any], fmt: str) -> bytes:
    """One plot as PNG or SVG bytes, watermarked when the evaluation is not publishable."""
    return render_formats(name, document, (fmt,))[fmt]


def render_formats(
    name: str, document: Mapping[str, Any], formats: Sequence[str]
) -> dict[str, bytes]:
    """One plot in each of ``formats``, drawn once: the layout the first save computes
    serves the others, where matplotlib would lay the figure out again for each (a fifth
    of a report's drawing time). Watermarked when the evaluation is not publishable."""
    figure = PLOTTERS[name](document)
    if not document["publishable"]:
        figure.text(
            0.5,
            0.5,
            "NOT PUBLISHABLE",
            ha="center",
            va="center",
            rotation=20,
            fontsize=36,
            color=_FAIL,
            alpha=0.18,
            weight="bold",
        )
    drawn = {}
    for fmt in formats:
        buffer = io.BytesIO()
        # No date in an SVG: the same report writes the same file.
        metadata = {"Date": None} if fmt == "svg" else {}
        figure.savefig(buffer, format=fmt, metadata=metadata)
        drawn[fmt] = buffer.getvalue()
        figure.set_layout_engine("none")  # laid out now; keep those positions
    return drawn
