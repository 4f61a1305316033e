"""Options and plumbing shared by the grading commands (``run``, ``demo``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.console import (
    fabricated_warning,
    funnel_table,
    make_console,
    progress,
    trial_payload,
    trials_table,
)
from bot.executor.driver import run_on_celery
from bot.executor.trials import TABLES as TRIAL_TABLES
from bot.wiring import build_cascade
from core.changesets import LocatedChangeset, check_against_specs
from core.errors import BudgetExceededError
from core.model import RunSummary
from core.settings import Executor, Settings
from core.specs import SpecSet, load_specs
from core.store import Store
from oracles.cascade import Budget
from oracles.runner import Runner, RunOutcome, RunStatus

__all__ = ["EXIT_BUDGET", "EXIT_INTERNAL", "grade"]

EXIT_BUDGET = 3
EXIT_INTERNAL = 4


def _check_budget(settings: Settings, specs: SpecSet, trials: int) -> None:
    if settings.budget_usd is None:
        return
    forecast = specs.oracle.forecast(trials)["total_usd"]
    if forecast > settings.budget_usd:
        raise BudgetExceededError(
            f"the forecast for {trials} trial(s) is ${forecast:.2f}, over --budget "
            f"${settings.budget_usd:.2f}; raise the budget or grade fewer changesets"
        )


def _document(outcome: RunOutcome, summary: RunSummary, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": outcome.run_id,
        "status": outcome.status.value,
        "trials": [trial_payload(t) for t in outcome.trials],
        "not_started": outcome.not_started,
        "funnel": [row.to_dict() for row in summary.tiers],
        "fabricated_count": summary.fabricated_envelopes,
        "fabricated_ports": list(summary.fabricated_ports),
        "cost_usd": round(summary.cost_usd, 6),
        "actual_cost_usd": round(summary.actual_cost_usd, 6),
        **extra,
    }


def _report(
    outcome: RunOutcome, specs: SpecSet, *, as_json: bool, out: Path | None, extra: dict[str, Any]
) -> None:
    summary = outcome.summary([t.tier for t in specs.oracle.tiers])
    document = _document(outcome, summary, extra)
    if out is not None:
        out.write_text(json.dumps(document, indent=2) + "\n")
        extra = {**extra, "results": str(out)}
    if as_json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        console = make_console()
        console.print(trials_table(outcome.trials))
        console.print(funnel_table(summary))
        console.print(f"run {outcome.run_id}: {outcome.status.value}")
        for key, value in extra.items():
            console.print(f"{key}: {value}", highlight=False)
    stderr = make_console(stderr=True)
    if outcome.not_started:
        stderr.print(f"[yellow]{outcome.not_started} changeset(s) not started: budget exhausted[/]")
    for error in outcome.internal_errors:
        stderr.print(f"[red]internal error[/] {error}")
    warning = fabricated_warning(summary, outcome.trials)
    if warning:
        stderr.print(f"[bold red]{warning}[/]", highlight=False)


def grade(
    settings: Settings,
    changesets: Sequence[LocatedChangeset],
    *,
    as_json: bool,
    out: Path | None = None,
    extra: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[int, RunOutcome]:
    """Check, forecast, run and report; returns the exit code and the outcome."""
    specs = load_specs(settings.specs_dir)
    check_against_specs(changesets, specs)
    _check_budget(settings, specs, len(changesets))
    celery = settings.scale.executor is Executor.CELERY
    store = Store.open(settings.db_url, extra_metadata=TRIAL_TABLES if celery else ())
    try:
        stderr = make_console(stderr=True)
        run_options = {
            "mode": settings.mode.value,
            "sandbox_mode": settings.effective_sandbox_mode.value,
            "strict": settings.strict_judge,
        }
        run_options.update(options or {})
        items = [c.changeset for c in changesets]
        with progress(stderr, len(changesets), "grading") as advance:
            if celery:
                outcome = run_on_celery(
                    settings,
                    store,
                    specs,
                    items,
                    options=run_options,
                    on_trial=advance,
                    on_quiet=lambda line: stderr.print(f"[yellow]{line}[/]", highlight=False),
                )
            else:
                cascade = build_cascade(settings, store=store, specs=specs)
                runner = Runner(cascade, store, jobs=settings.jobs, on_trial=lambda _t: advance())
                outcome = runner.run(items, budget=Budget(settings.budget_usd), options=run_options)
        details = {"database": store.display_url, **(extra or {})}
        _report(outcome, specs, as_json=as_json, out=out, extra=details)
    finally:
        store.close()
    if outcome.status is RunStatus.STOPPED_BUDGET:
        return EXIT_BUDGET, outcome
    if outcome.status is RunStatus.INTERNAL_ERRORS:
        return EXIT_INTERNAL, outcome
    return 0, outcome
