"""``migration-evals cost``: forecast what an evaluation will cost before it starts."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus, UsageError
from migration_evals.oracles.ecosystems.registry import load_specs


def run(args: argparse.Namespace) -> int:
    if args.repos < 0 or args.models < 1:
        raise UsageError("--repos must be >= 0 and --models >= 1")
    specs = load_specs(settings_from_args(args).specs_dir)
    forecast = specs.oracle.forecast(args.repos * args.models)
    forecast.update(repos=args.repos, models=args.models)
    if args.json:
        json.dump(forecast, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return ExitStatus.OK
    table = Table(title=f"{forecast['trials']} trials ({args.repos} repos x {args.models} models)")
    for column in ("tier", "list cost", "reach rate", "cost"):
        table.add_column(column, justify="left" if column == "tier" else "right")
    for tier in forecast["tiers"]:
        table.add_row(
            tier["tier"],
            f"${tier['list_cost_usd']}",
            f"{tier['reach_rate']:.0%}",
            f"${tier['cost_usd']:,.2f}",
        )
    table.add_section()
    table.add_row(
        "total", f"${forecast['per_trial_usd']:.4f}/trial", "", f"${forecast['total_usd']:,.2f}"
    )
    Console().print(table)
    return ExitStatus.OK
