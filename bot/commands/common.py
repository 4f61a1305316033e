"""Options and plumbing shared by the grading commands (``run``, ``demo``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot import grading
from bot.console import (
    fabricated_warning,
    funnel_table,
    make_console,
    progress,
    trial_payload,
    trials_table,
)
from bot.executor.driver import run_on_celery
from bot.exits import ExitStatus
from bot.grading import Grading
from bot.ledger_keys import open_store
from bot.plan import plan_of
from core.changesets import LocatedChangeset, check_against_specs
from core.errors import BudgetExceededError, StoreError
from core.model import RunSummary, Verdict
from core.settings import Settings
from core.specs import SpecSet, load_specs
from core.store import Store
from oracles.runner import RunOutcome, RunStatus

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["exit_status", "grade"]


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


def _checkpoint(store: Store, stderr: Console) -> None:
    """Sign where the ledger ends after a run, when a checkpoint key is configured. A
    refusal (the chain no longer reaches the last checkpoint) is reported, not raised:
    the run's results are written either way, and the verifier will refuse the ledger."""
    if store.keys.signer is None:
        return
    try:
        signed = store.checkpoint()
    except StoreError as exc:
        stderr.print(f"[bold red]checkpoint refused[/]: {exc}", highlight=False)
        return
    stderr.print(f"{signed.describe()}: row {signed.ledger_seq}", highlight=False)


def grade(
    settings: Settings,
    changesets: Sequence[LocatedChangeset],
    *,
    as_json: bool,
    out: Path | None = None,
    extra: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[int, RunOutcome]:
    """Check, plan, forecast, run and report; returns the exit code and the outcome."""
    specs = load_specs(settings.specs_dir)
    check_against_specs(changesets, specs)
    _check_budget(settings, specs, len(changesets))
    plan = plan_of(settings, specs)
    store = open_store(settings, warn=True)
    try:
        stderr = make_console(stderr=True)
        items = [c.changeset for c in changesets]
        with progress(stderr, len(changesets), "grading") as advance:
            outcome = grading.grade(
                plan,
                items,
                Grading.of(settings, store, specs, run_on_celery),
                options=options,
                on_trial=advance,
                on_quiet=lambda line: stderr.print(f"[yellow]{line}[/]", highlight=False),
            )
        details = {"database": store.display_url, **(extra or {})}
        _report(outcome, specs, as_json=as_json, out=out, extra=details)
        _checkpoint(store, stderr)
    finally:
        store.close()
    status = exit_status(outcome)
    if status is ExitStatus.ALL_INFRA_ERRORS:
        print(
            f"migration-evals: every trial ({len(outcome.trials)}) ended in an infrastructure "
            "error: nothing was graded (each trial's reason is above)",
            file=sys.stderr,
        )
    return status, outcome


def exit_status(outcome: RunOutcome) -> ExitStatus:
    """The run's status, by ``bot.exits``' precedence: all errors, a crash, the budget."""
    if outcome.trials and all(t.verdict is Verdict.ERROR for t in outcome.trials):
        return ExitStatus.ALL_INFRA_ERRORS
    if outcome.status is RunStatus.INTERNAL_ERRORS:
        return ExitStatus.TRIAL_CRASHED
    if outcome.status is RunStatus.STOPPED_BUDGET:
        return ExitStatus.BUDGET
    return ExitStatus.OK
