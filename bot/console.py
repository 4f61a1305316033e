"""Human output: funnel and trial tables, the fabricated warning, progress bars."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from core.model import RunSummary, Trial, Verdict

__all__ = [
    "fabricated_warning",
    "funnel_table",
    "make_console",
    "progress",
    "trial_payload",
    "trials_table",
]

_VERDICT_STYLE = {
    Verdict.PASS: "green",
    Verdict.FAIL: "red",
    Verdict.ERROR: "magenta",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.SKIPPED: "dim",
}


def make_console(*, stderr: bool = False) -> Console:
    """A console that keeps tables readable when output goes to a file or a pipe."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=140)
    return console


def _usd(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def funnel_table(summary: RunSummary) -> Table:
    table = Table(title=f"Funnel over {summary.trials} trial(s)", title_justify="left")
    for column in ("tier", "reached", "passed", "failed", "errors", "inconclusive"):
        table.add_column(column, justify="left" if column == "tier" else "right")
    table.add_column("cost (list)", justify="right")
    table.add_column("cost (actual)", justify="right")
    table.add_column("cached", justify="right")
    table.add_column("fabricated", justify="right")
    for row in summary.tiers:
        fabricated = f"[bold red]{row.fabricated}[/]" if row.fabricated else "0"
        table.add_row(
            row.tier.value,
            str(row.reached),
            str(row.passed),
            str(row.failed),
            str(row.errors),
            str(row.inconclusive),
            _usd(row.cost_usd),
            _usd(row.actual_cost_usd),
            str(row.cached),
            fabricated,
        )
    table.add_section()
    table.add_row(
        "total", "", "", "", "", "", _usd(summary.cost_usd), _usd(summary.actual_cost_usd), "", ""
    )
    return table


def trials_table(trials: Sequence[Trial]) -> Table:
    table = Table(title="Trials", title_justify="left")
    table.add_column("changeset", no_wrap=True, min_width=20)
    table.add_column("model", no_wrap=True, min_width=14)
    table.add_column("verdict", no_wrap=True, min_width=12)
    table.add_column("stopped at", no_wrap=True, min_width=8)
    table.add_column("reason", overflow="ellipsis", no_wrap=True, max_width=80)
    for trial in trials:
        stop = trial.stopped_at()
        verdict = trial.verdict
        style = _VERDICT_STYLE[verdict]
        marker = " [bold red](fabricated)[/]" if trial.fabricated else ""
        table.add_row(
            trial.changeset.id,
            trial.changeset.model,
            f"[{style}]{verdict.value}[/]{marker}",
            stop.tier.value if stop else "-",
            (stop.reason if stop else trial.envelopes[-1].reason).splitlines()[0][:200],
        )
    return table


def trial_payload(trial: Trial) -> dict[str, Any]:
    return {
        "id": trial.changeset.id,
        "trial_id": trial.id,
        "model": trial.changeset.model,
        "recipe": trial.changeset.recipe,
        "verdict": trial.verdict.value,
        "cost_usd": round(trial.cost_usd, 6),
        "actual_cost_usd": round(trial.actual_cost_usd, 6),
        "fabricated": bool(trial.fabricated),
        "tiers": [
            {
                "tier": e.tier.value,
                "verdict": e.verdict.value,
                "reason": e.reason,
                "cost_usd": round(e.list_cost_usd, 6),
                "cached": e.cached,
                "fabricated": e.is_fabricated,
            }
            for e in trial.envelopes
        ],
    }


def fabricated_warning(summary: RunSummary, trials: Sequence[Trial]) -> str | None:
    """The loud stderr warning a run with any fabricated envelope must end with."""
    if not summary.fabricated_envelopes:
        return None
    ports = ", ".join(summary.fabricated_ports)
    first = next(mark for trial in trials for mark in trial.fabricated)
    return (
        f"WARNING: {summary.fabricated_envelopes} envelope(s) are FABRICATED (cassette misses "
        f"on port(s): {ports}). They are stamped as such in the store and every output, and "
        f"the publication gate will refuse them.\n  first miss: {first.reason}\n"
        "  check --cassettes (the cassette directory) or re-record with --mode record."
    )


@contextmanager
def progress(console: Console, total: int, label: str) -> Iterator[Any]:
    """A progress bar on stderr; advance it with ``bar()`` once per finished item."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
