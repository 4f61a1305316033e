"""Human output: funnel, model and trial tables, the end-of-run warnings, progress."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from migration_evals.bot.progress import RunProgress
from migration_evals.core.model import RunSummary, Trial, Verdict
from migration_evals.gate.tallies import Proportion
from migration_evals.gate.trials import Outcome, TierFacts, outcome_of, tier_ran

__all__ = [
    "PLAIN_WIDTH",
    "OnTrial",
    "fabricated_warning",
    "funnel_table",
    "infra_error_warning",
    "make_console",
    "model_rates",
    "models_table",
    "progress",
    "trial_payload",
    "trials_table",
]

# Called once per finished trial; None when the trial itself is not at hand (a worker
# elsewhere graded it), so its cost is not known yet.
OnTrial = Callable[[Trial | None], None]

_VERDICT_STYLE = {
    Verdict.PASS: "green",
    Verdict.FAIL: "red",
    Verdict.ERROR: "magenta",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.SKIPPED: "dim",
}


# The width of output to a file or a pipe: wide enough that no table is ever cut or
# wrapped (a table is only as wide as its cells; nothing is padded out to this).
PLAIN_WIDTH = 10_000


def make_console(*, stderr: bool = False) -> Console:
    """A console for a terminal (its width, colours), or plain and full width for a file
    or a pipe: a script reading the output must get every cell whole."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console = Console(stderr=stderr, width=PLAIN_WIDTH, no_color=True, highlight=False)
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


def _widest(values: Sequence[str], floor: int) -> int:
    return max([floor, *(len(v) for v in values)])


def trials_table(trials: Sequence[Trial], *, whole: bool = False) -> Table:
    """One row per trial: its id (what ``show`` takes), changeset and model names in full
    (``claude-sonnet-4-5`` and ``claude-sonnet-5-5`` must stay apart), the reason cut to
    the width left on a terminal, or ``whole``."""
    table = Table(title="Trials", title_justify="left")
    ids = [t.changeset.id for t in trials]
    models = [t.changeset.model for t in trials]
    table.add_column("trial", no_wrap=True, min_width=_widest([t.id for t in trials], 5))
    table.add_column("changeset", no_wrap=True, min_width=_widest(ids, 9))
    table.add_column("model", no_wrap=True, min_width=_widest(models, 5))
    table.add_column("verdict", no_wrap=True, min_width=12)
    table.add_column("stopped at", no_wrap=True, min_width=8)
    table.add_column("reason", overflow="ellipsis", no_wrap=True, max_width=None if whole else 80)
    for trial in trials:
        stop = trial.stopped_at()
        verdict = trial.verdict
        style = _VERDICT_STYLE[verdict]
        marker = " [bold red](fabricated)[/]" if trial.fabricated else ""
        table.add_row(
            trial.id,
            trial.changeset.id,
            trial.changeset.model,
            f"[{style}]{verdict.value}[/]{marker}",
            stop.tier.value if stop else "-",
            _first_line(stop.reason if stop else trial.envelopes[-1].reason, 1_000),
        )
    return table


def _outcome(trial: Trial) -> Outcome:
    """The trial's outcome as the gate counts it (a budget stop is not graded)."""
    return outcome_of(
        [
            TierFacts(
                e.tier,
                e.verdict,
                e.list_cost_usd,
                e.actual_cost_usd,
                e.cached,
                tier_ran(skipped=e.verdict is Verdict.SKIPPED, cached=e.cached, adapter=e.adapter),
            )
            for e in trial.envelopes
        ]
    )


def model_rates(trials: Sequence[Trial]) -> list[dict[str, Any]]:
    """Per model, sorted by name: pass rate over graded trials (95% Wilson interval);
    infrastructure errors and budget stops counted apart, out of the denominator."""
    by_model: dict[str, Counter[Outcome]] = {}
    for trial in trials:
        by_model.setdefault(trial.changeset.model, Counter())[_outcome(trial)] += 1
    rows = []
    for model in sorted(by_model):
        counts = by_model[model]
        graded = sum(n for outcome, n in counts.items() if outcome.graded)
        proportion = Proportion.of(counts[Outcome.PASSED], graded)
        rows.append(
            {
                "model": model,
                "trials": counts.total(),
                "errors": counts[Outcome.ERROR],
                "not_graded": counts[Outcome.NOT_GRADED],
                **proportion.to_dict(),
            }
        )
    return rows


def _rate(row: Mapping[str, Any]) -> str:
    if row["rate"] is None:
        return "-"
    low, high = row["wilson_95"]
    return f"{row['rate']:.0%} [{low:.0%}, {high:.0%}]"


def models_table(trials: Sequence[Trial]) -> Table:
    rows = model_rates(trials)
    columns = ["trials", "graded", "passed", "errors"]
    if any(row["not_graded"] for row in rows):  # only budget stops leave trials ungraded
        columns.append("not_graded")
    table = Table(title="Pass rate per model", title_justify="left")
    table.add_column("model", no_wrap=True)
    for column in columns:
        header = column.replace("_", " ")
        table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
    table.add_column("pass rate (95% CI)", justify="right", no_wrap=True, min_width=18)
    for row in rows:
        table.add_row(row["model"], *(str(row[c]) for c in columns), _rate(row))
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


def _first_line(text: str, limit: int = 160) -> str:
    line = (text.splitlines() or [""])[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _error_reasons(errored: Sequence[Trial], shown: int = 3) -> list[str]:
    """The commonest reasons, with how many trials each: one cause usually explains most."""
    reasons = Counter(
        _first_line(next(e.reason for e in t.envelopes if e.verdict is Verdict.ERROR))
        for t in errored
    )
    return [f"  {n} × {reason}" for reason, n in reasons.most_common(shown)]


def infra_error_warning(trials: Sequence[Trial], max_rate: float) -> str | None:
    """The warning a run ends with when its infrastructure errors exceed the gate's limit
    (``max_infra_error_rate``): such results will be refused, so say so now, not at
    ``gate check`` after the night is gone."""
    errored = [t for t in trials if t.verdict is Verdict.ERROR]
    if not trials or len(errored) / len(trials) <= max_rate:
        return None
    if len(errored) == len(trials):
        head = (
            f"WARNING: every trial ({len(trials)}) ended in an infrastructure error: "
            "nothing was graded."
        )
    else:
        head = (
            f"WARNING: {len(errored)} of {len(trials)} trials "
            f"({len(errored) / len(trials):.0%}) ended in an infrastructure error, above the "
            f"gate's limit of {max_rate:.0%} (max_infra_error_rate); `gate check` will refuse "
            "these results."
        )
    return "\n".join(
        [
            head,
            "  errors are the harness's, not the candidates' (engine, repository, judge):",
            *_error_reasons(errored),
            f"  one trial's evidence: migration-evals show {errored[0].id}",
        ]
    )


Waiter = Callable[[threading.Event, float], bool]


def _wait(stop: threading.Event, seconds: float) -> bool:
    return stop.wait(seconds)


@contextmanager
def _idle_lines(tracker: RunProgress, emit: Callable[[str], None], wait: Waiter) -> Iterator[None]:
    """Every ``every_s`` without a line, a line anyway, from a timer thread."""
    stop = threading.Event()

    def beat() -> None:
        while not wait(stop, tracker.every_s):
            line = tracker.idle_line()
            if line is not None:
                emit(line)

    timer = threading.Thread(target=beat, name="progress-lines", daemon=True)
    timer.start()
    try:
        yield
    finally:
        stop.set()
        timer.join()


@contextmanager
def progress(
    console: Console,
    total: int,
    label: str,
    *,
    budget_usd: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    wait: Waiter = _wait,
) -> Iterator[OnTrial]:
    """Progress on ``console``: a live bar on a terminal, a plain line now and then
    anywhere else (a log must show a long run is alive). Call the result once per
    finished trial."""
    tracker = RunProgress(total, label, budget_usd=budget_usd, clock=clock)

    def cost(trial: Trial | None) -> float | None:
        return None if trial is None else trial.cost_usd

    if not console.is_terminal:

        def emit(line: str) -> None:
            console.print(line, markup=False, highlight=False, soft_wrap=True)

        def log(trial: Trial | None) -> None:
            line = tracker.advance(cost(trial))
            if line is not None:
                emit(line)

        with _idle_lines(tracker, emit, wait):
            yield log
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total, status="")

        def tick(trial: Trial | None) -> None:
            tracker.advance(cost(trial))
            bar.update(task, advance=1, status=tracker.status())

        yield tick
