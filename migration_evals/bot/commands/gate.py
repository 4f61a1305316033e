"""``migration-evals gate check`` and ``gate publish``: the only path to a quotable number."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus, UsageError
from migration_evals.bot.heartbeat import reap_and_note
from migration_evals.bot.ledger_keys import open_store
from migration_evals.core.checkpoints import Checkpoint
from migration_evals.core.integrity import LedgerCheck
from migration_evals.core.settings import Settings
from migration_evals.core.store import Store
from migration_evals.gate.evaluation import Evaluation, evaluate
from migration_evals.gate.incremental import check_inputs
from migration_evals.gate.judging import judging, judging_note
from migration_evals.gate.publication import GateInputs, check, decide, inputs_of
from migration_evals.gate.refusals import GateDecision
from migration_evals.oracles.ecosystems.registry import load_specs

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["check_from_args", "run_check", "run_publish", "scan_workers"]


def scan_workers(requested: int | None) -> int:
    """Processes for the ledger scan: --scan-processes, else the CPUs this process may
    use (at most 4)."""
    if requested is not None:
        if requested < 1:
            raise UsageError("--scan-processes must be at least 1")
        return requested
    return max(1, min(4, len(os.sched_getaffinity(0))))


def _evaluate(args: argparse.Namespace, settings: Settings, store: Store) -> Evaluation:
    specs = load_specs(settings.specs_dir)
    return evaluate(store, specs, run_id=args.run, workers=scan_workers(args.scan_processes))


def check_from_args(args: argparse.Namespace) -> GateInputs:
    """What the refusals read. Unless --full, the scan starts after the newest signed gate
    snapshot and counts from the columns kept with it (``migration_evals.gate.incremental``); `gate
    publish` always walks every row before it signs anything."""
    settings = settings_from_args(args)
    store = open_store(settings, warn=True)
    try:
        reap_and_note(store, settings)
        if args.full:
            return inputs_of(_evaluate(args, settings, store))
        specs = load_specs(settings.specs_dir)
        workers = scan_workers(args.scan_processes)
        return check_inputs(store, specs, run_id=args.run, workers=workers)
    finally:
        store.close()


def ledger_mark(chain: LedgerCheck) -> dict[str, object]:
    """What the gate's output says about the ledger: its key (or ``unkeyed``), the latest
    checkpoint that holds, and what could not be checked."""
    checkpoint = chain.checkpoint
    return {
        "key": chain.key_id,
        "checkpoint": None if checkpoint is None else checkpoint.ledger_seq,
        "resumed_at": chain.resumed_at,
        "notes": list(chain.notes),
    }


def decision_table(decision: GateDecision) -> Table:
    from rich.markup import escape  # noqa: PLC0415 - only human output needs rich
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=f"{len(decision.refusals)} refusal(s)", title_justify="left")
    table.add_column("code", no_wrap=True)
    table.add_column("detail")
    for refusal in decision.refusals:
        table.add_row(f"[red]{refusal.label}[/]", escape(refusal.advice))
    return table


def _print_decision(decision: GateDecision, inputs: GateInputs, *, as_json: bool) -> None:
    if as_json:
        document = {
            **decision.to_dict(),
            "ledger": ledger_mark(inputs.chain),
            "judging": judging(inputs.specs),
            "anchor": inputs.anchor.to_dict(),
        }
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    from migration_evals.bot.console import make_console  # noqa: PLC0415 - only human output needs rich

    console = make_console()
    chain = inputs.chain
    signed = chain.checkpoint.describe() if chain.checkpoint else "no checkpoint"
    key = chain.key_id if chain.keyed else "[bold yellow]UNKEYED[/]"
    walked = f" (rows after {chain.resumed_at} walked)" if chain.resumed_at else ""
    console.print(f"ledger: {chain.rows} row(s){walked}, key {key}, {signed}")
    for line in _judging_and_anchor(inputs):
        console.print(line, markup=False)
    trials = inputs.counted
    if decision.publishable:
        console.print(f"[bold green]PUBLISHABLE[/]: {trials} counted trial(s), no refusal")
        return
    console.print(f"[bold red]NOT PUBLISHABLE[/]: {trials} counted trial(s)")
    console.print(decision_table(decision))


def _judging_and_anchor(inputs: GateInputs) -> list[str]:
    """The no-judge note when the spec pre-registers it, and where the anchor came from."""
    note = judging_note(inputs.specs)
    lines = [f"judging: {note}"] if note else []
    lines.extend(f"gold anchor: {source.summary}" for source in inputs.anchor.sources)
    return lines


def run_check(args: argparse.Namespace) -> int:
    inputs = check_from_args(args)
    decision = decide(inputs)
    _print_decision(decision, inputs, as_json=args.json)
    return ExitStatus.OK if decision.publishable else ExitStatus.GATE_REFUSED


def _bundle_checkpoint(store: Store, evaluation: Evaluation) -> Checkpoint | None:
    """The signed checkpoint of the evaluated head: the latest one when it is there
    already, else a new one (None without a checkpoint key: the bundle is unsigned)."""
    chain = evaluation.chain
    latest = chain.checkpoint
    if latest is not None and latest.ledger_seq == chain.head_seq:
        return latest
    if store.keys.signer is None:
        return None
    return store.ledger.checkpoint(at=(chain.head_seq, chain.head_hash))


def run_publish(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    store = open_store(settings, warn=True)
    try:
        evaluation = _evaluate(args, settings, store)
        decision = check(evaluation)
        signed = _bundle_checkpoint(store, evaluation) if decision.publishable else None
    finally:
        store.close()
    if not decision.publishable:
        _print_decision(decision, inputs_of(evaluation), as_json=args.json)
        print(
            f"migration-evals: refused: {len(decision.refusals)} refusal(s); "
            f"no bundle written ({', '.join(decision.codes())})",
            file=sys.stderr,
        )
        return ExitStatus.GATE_REFUSED
    from migration_evals.gate.bundle import build_bundle  # noqa: PLC0415 - only publishing builds one

    created = datetime.now(UTC).isoformat(timespec="seconds")
    bundle = build_bundle(evaluation, decision, created, signed)
    args.out.write_text(json.dumps(bundle, indent=1, sort_keys=True) + "\n")
    if args.json:
        json.dump({**decision.to_dict(), "bundle": str(args.out)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"published {len(evaluation.selection.trials)} trial(s) to {args.out}")
        print(
            f"bundle digest {bundle['bundle_digest']}, ledger head {bundle['ledger']['head_hash']}"
        )
        print(f"signed by {signed.describe()}" if signed else "unsigned: no checkpoint key")
    return ExitStatus.OK
