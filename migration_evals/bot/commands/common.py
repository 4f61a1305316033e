"""Options and plumbing shared by the grading commands (``run``, ``demo``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from migration_evals.bot import grading
from migration_evals.bot.console import (
    fabricated_warning,
    funnel_table,
    infra_error_warning,
    make_console,
    model_rates,
    models_table,
    progress,
    trial_payload,
    trials_table,
)
from migration_evals.bot.executor.driver import run_on_celery
from migration_evals.bot.exits import ExitStatus, UsageError
from migration_evals.bot.grading import Grading
from migration_evals.bot.heartbeat import reap_and_note
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.bot.resume import plan_resume
from migration_evals.core.changesets import LocatedChangeset, check_against_specs
from migration_evals.core.errors import BudgetExceededError, StoreError
from migration_evals.core.model import Changeset, RunSummary, Tier, Verdict
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.ecosystems.registry import load_specs
from migration_evals.oracles.runner import RunOutcome, RunStatus

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["check_cassettes", "exit_status", "grade", "infra_error_limit"]


def _check_budget(settings: Settings, specs: SpecSet, trials: int) -> None:
    if settings.budget_usd is None:
        return
    forecast = specs.oracle.forecast(trials)["total_usd"]
    if forecast > settings.budget_usd:
        raise BudgetExceededError(
            f"the forecast for {trials} trial(s) is ${forecast:.2f}, over --budget "
            f"${settings.budget_usd:.2f}; raise the budget or grade fewer changesets"
        )


def check_cassettes(plan: RunPlan, folder: Path, specs: SpecSet) -> None:
    """Every port that replays needs cassettes to replay: a mistyped ``--cassettes``
    (a folder that is not there, or holds none for the port) would otherwise answer every
    tier past the first with a fabricated default, and grade nothing."""
    ports = {"sandbox": plan.sandbox, **({"judge": plan.judge} if specs.oracle.judged else {})}
    for port, mode in ports.items():
        if mode is not CassetteMode.REPLAY:
            continue
        if not folder.is_dir():
            raise UsageError(
                f"the cassette folder {folder} does not exist: check --cassettes (or "
                "MIGRATION_EVALS_CASSETTES_DIR), or record cassettes with --mode record"
            )
        if next((folder / port).glob("*.json"), None) is None:
            raise UsageError(
                f"the cassette folder {folder} holds no {port} cassettes ({port}/*.json), "
                f"and the {port} replays: check --cassettes, or record them with --mode record"
            )


def _infra_errors(outcome: RunOutcome, limit: float) -> dict[str, Any]:
    errors = sum(t.verdict is Verdict.ERROR for t in outcome.trials)
    rate = errors / len(outcome.trials) if outcome.trials else 0.0
    return {"count": errors, "rate": round(rate, 6), "limit": limit, "above_limit": rate > limit}


def _reused(outcome: RunOutcome) -> dict[str, Any]:
    """The envelopes this run reused from earlier ones, and what they cost when made: the
    funnel's costs are what this run paid, $0 for each of them."""
    made = [
        e.details.get("cached_from") or {} for t in outcome.trials for e in t.envelopes if e.cached
    ]
    return {
        "envelopes": len(made),
        "list_cost_usd_when_made": round(sum(m.get("list_cost_usd") or 0 for m in made), 6),
        "actual_cost_usd_when_made": round(sum(m.get("actual_cost_usd") or 0 for m in made), 6),
    }


def _document(
    outcome: RunOutcome, summary: RunSummary, extra: dict[str, Any], limit: float
) -> dict[str, Any]:
    return {
        "run_id": outcome.run_id,
        "status": outcome.status.value,
        "trials": [trial_payload(t) for t in outcome.trials],
        "not_started": outcome.not_started,
        "funnel": [row.to_dict() for row in summary.tiers],
        "models": model_rates(outcome.trials),
        "infrastructure_errors": _infra_errors(outcome, limit),
        "fabricated_count": summary.fabricated_envelopes,
        "fabricated_ports": list(summary.fabricated_ports),
        "cost_usd": round(summary.cost_usd, 6),
        "actual_cost_usd": round(summary.actual_cost_usd, 6),
        "reused": _reused(outcome),
        **extra,
    }


def _print_summary(
    outcome: RunOutcome, summary: RunSummary, extra: dict[str, Any], *, show_trials: bool
) -> None:
    """The funnel and the per-model pass rates first; the trials (thousands of rows in a
    batch) only when asked for, after them."""
    console = make_console()
    console.print(funnel_table(summary))
    console.print(models_table(outcome.trials))
    if show_trials:
        console.print(trials_table(outcome.trials, whole=not console.is_terminal))
    console.print(f"run {outcome.run_id}: {outcome.status.value}")
    reused = _reused(outcome)
    if reused["envelopes"]:
        console.print(
            f"reused: {reused['envelopes']} envelope(s) from earlier runs, free here; they "
            f"cost list ${reused['list_cost_usd_when_made']:.4f}, actual "
            f"${reused['actual_cost_usd_when_made']:.4f} when made",
            highlight=False,
        )
    for key, value in extra.items():
        console.print(f"{key}: {value}", highlight=False)
    if not show_trials and outcome.trials:
        console.print(
            f"each trial: --trials, or migration-evals show {outcome.trials[0].id}",
            highlight=False,
        )


def _warn(outcome: RunOutcome, summary: RunSummary, max_infra_error_rate: float) -> None:
    """The end-of-run warnings on stderr, the loudest (nothing usable) last."""
    stderr = make_console(stderr=True)
    if outcome.not_started:
        stderr.print(f"[yellow]{outcome.not_started} changeset(s) not started: budget exhausted[/]")
    for error in outcome.internal_errors:
        stderr.print(f"[red]internal error[/] {error}")
    for warning in (
        fabricated_warning(summary, outcome.trials),
        infra_error_warning(outcome.trials, max_infra_error_rate),
    ):
        if warning:
            stderr.print(f"[bold red]{escape(warning)}[/]", highlight=False, soft_wrap=True)


def _report(
    outcome: RunOutcome,
    specs: SpecSet,
    *,
    as_json: bool,
    out: Path | None,
    extra: dict[str, Any],
    show_trials: bool = False,
) -> None:
    summary = outcome.summary([t.tier for t in specs.oracle.tiers])
    limit = infra_error_limit(specs)
    document = _document(outcome, summary, extra, limit)
    if out is not None:
        out.write_text(json.dumps(document, indent=2) + "\n")
        extra = {**extra, "results": str(out)}
    if as_json:
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_summary(outcome, summary, extra, show_trials=show_trials)
    _warn(outcome, summary, limit)


def infra_error_limit(specs: SpecSet) -> float:
    """The gate's ``max_infra_error_rate``: the share of errors its check refuses."""
    return float(specs.oracle.gate.max_infra_error_rate)


def _checkpoint(store: Store, stderr: Console) -> None:
    """Sign where the ledger ends after a run, when a checkpoint key is configured. A
    refusal (the chain no longer reaches the last checkpoint) is reported, not raised:
    the run's results are written either way, and the verifier will refuse the ledger."""
    if store.keys.signer is None:
        return
    try:
        signed = store.ledger.checkpoint()
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
    show_trials: bool = False,
    resume: str | None = None,
    specs: SpecSet | None = None,
) -> tuple[int, RunOutcome]:
    """Check, plan, forecast, run and report; returns the exit code and the outcome.

    ``resume``: the id of an interrupted run to finish, with its own plan, instead.
    ``specs``: those of ``settings.specs_dir`` when the caller has read them already."""
    specs = specs or load_specs(settings.specs_dir)
    check_against_specs(changesets, specs)
    if resume is None:
        _check_budget(settings, specs, len(changesets))
    plan = plan_of(settings, specs)
    if resume is None:  # a resumed run replays as its stored plan says; checked there
        check_cassettes(plan, settings.cassette_dir, specs)
    store = open_store(settings, warn=True)
    try:
        reap_and_note(store, settings)
        stderr = make_console(stderr=True)
        items = [c.changeset for c in changesets]
        where = Grading.of(settings, store, specs, run_on_celery)
        if resume is not None:
            outcome, resumed = _resume(resume, items, where, stderr)
            extra = {**(extra or {}), "resumed": resumed}
        else:
            with progress(
                stderr, len(changesets), "grading", budget_usd=settings.budget_usd
            ) as advance:
                outcome = grading.grade(
                    plan,
                    items,
                    where,
                    options=options,
                    on_trial=advance,
                    on_quiet=lambda line: stderr.print(f"[yellow]{line}[/]", highlight=False),
                )
        details = {"database": store.db.display_url, **(extra or {})}
        _report(outcome, specs, as_json=as_json, out=out, extra=details, show_trials=show_trials)
        _checkpoint(store, stderr)
    finally:
        store.close()
    return exit_status(outcome, infra_error_limit(specs)), outcome


def _resume(
    run_id: str, items: Sequence[Changeset], where: Grading, stderr: Console
) -> tuple[RunOutcome, str]:
    """Finish an interrupted run; the outcome, and what the resume graded (for the report)."""
    resumption = plan_resume(where.store, where.specs, run_id, items)
    check_cassettes(resumption.plan, where.settings.cassette_dir, where.specs)
    note = (
        f"{len(resumption.earlier)} trial(s) were in the ledger, "
        f"{len(resumption.missing)} graded now"
    )
    stderr.print(f"resuming run {run_id}: {note}", highlight=False)
    budget = resumption.plan.budget_usd
    with progress(stderr, len(resumption.missing), "grading", budget_usd=budget) as advance:
        outcome = grading.resume(
            resumption,
            where,
            on_trial=advance,
            on_quiet=lambda line: stderr.print(f"[yellow]{line}[/]", highlight=False),
        )
    return outcome, note


def _all_fabricated(outcome: RunOutcome) -> bool:
    """Whether every envelope past tier 1 that ran is a cassette miss's default (and one
    ran): tier 1 needs no cassette, so such a run graded nothing."""
    later = [
        e
        for t in outcome.trials
        for e in t.envelopes
        if e.tier is not Tier.APPLY and e.verdict is not Verdict.SKIPPED and e.adapter
    ]
    return bool(later) and all(e.is_fabricated for e in later)


def exit_status(outcome: RunOutcome, max_infra_error_rate: float | None = None) -> ExitStatus:
    """The run's status, by ``migration_evals.bot.exits``' precedence: all errors, all fabricated, a
    crash, errors above the gate's limit (when one is given), the budget."""
    errors = sum(t.verdict is Verdict.ERROR for t in outcome.trials)
    if outcome.trials and errors == len(outcome.trials):
        return ExitStatus.ALL_INFRA_ERRORS
    if _all_fabricated(outcome):
        return ExitStatus.ALL_FABRICATED
    if outcome.status is RunStatus.INTERNAL_ERRORS:
        return ExitStatus.TRIAL_CRASHED
    limit = max_infra_error_rate
    if limit is not None and outcome.trials and errors / len(outcome.trials) > limit:
        return ExitStatus.INFRA_ERRORS
    if outcome.status is RunStatus.STOPPED_BUDGET:
        return ExitStatus.BUDGET
    return ExitStatus.OK
