"""``migration-evals judges reliability``: can the judge pair be trusted in strict mode?"""

from __future__ import annotations

import argparse
import json
import sys

from rich.table import Table

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.console import make_console
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.gate.reliability import JudgeReliability, judge_reliability
from migration_evals.oracles.ecosystems.registry import load_specs


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    store = open_store(settings)
    try:
        result = judge_reliability(store.ledger, specs, run_id=args.run)
    finally:
        store.close()
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print(result)
    return ExitStatus.OK if result.reliable else ExitStatus.JUDGES_UNRELIABLE


def _table(result: JudgeReliability) -> Table:
    table = Table(title="Judge agreement (Cohen's kappa)", title_justify="left")
    for column in ("raters", "items", "agreed", "kappa", "status"):
        table.add_column(column, justify="left" if column in ("raters", "status") else "right")
    for agreement in result.agreements:
        kappa = "undefined" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        colour = "green" if agreement.ok else "red"
        status = f"[{colour}]{agreement.status.value}[/]"
        table.add_row(
            f"{agreement.first} vs {agreement.second}",
            str(agreement.n),
            str(agreement.agreed),
            kappa,
            status,
        )
    return table


def _print(result: JudgeReliability) -> None:
    console = make_console()
    console.print(_table(result))
    console.print(
        f"floor {result.floor:g} on at least {result.min_n} items; {result.judged} judged "
        f"changeset(s), {result.labels} hand label(s), {result.strict_disagreements} strict-mode "
        "disagreement(s)",
        highlight=False,
    )
    left_out = ", ".join(f"{n} {why}" for why, n in result.left_out.items())
    if left_out:
        console.print(f"left out: {left_out}", highlight=False)
    if result.reliable:
        console.print("[green]reliable[/]: strict-mode numbers from this pair may be published")
        return
    console.print("[bold red]UNRELIABLE[/]: the gate refuses strict-mode numbers from this pair")
    for problem in result.problems:
        console.print(f"  {problem}", highlight=False)
