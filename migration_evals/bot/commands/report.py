"""``migration-evals report --out DIR``: index.html, trials.html, report.md, report.json,
and every plot as PNG and SVG."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from migration_evals.bot.commands.gate import scan_workers
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.gate.evaluation import evaluate
from migration_evals.gate.publication import check
from migration_evals.gate.trial_detail import run_records
from migration_evals.oracles.ecosystems.registry import load_specs


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: matplotlib and Jinja2 would otherwise slow the start of
    # every command, ``gate check`` included, by about half a second.
    from migration_evals.gate.report import report_document, trials_page, write_report  # noqa: PLC0415

    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    store = open_store(settings)
    try:
        evaluation = evaluate(
            store, specs, run_id=args.run, workers=scan_workers(args.scan_processes)
        )
        runs = run_records(store.runs)
        page = trials_page(store.trials, store.artifacts, evaluation.selection.trials, specs, runs)
    finally:
        store.close()
    decision = check(evaluation)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    options = {run_id: run["options"] for run_id, run in runs.items()}
    document = report_document(evaluation, decision, generated, options)
    files = write_report(document, args.out, page)
    if args.json:
        json.dump(document, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        state = "publishable" if decision.publishable else "NOT PUBLISHABLE"
        print(
            f"report written to {files.html} ({state}; {len(files.plots)} plots, "
            f"{len(document['plots_left_out'])} left out; trials: {files.trials})"
        )
        if document["banner"]:
            print(document["banner"], file=sys.stderr)
    return ExitStatus.OK
