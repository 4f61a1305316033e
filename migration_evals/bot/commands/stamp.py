"""``migration-evals stamp``: the SHA256 stamps of the current specs."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.oracles.ecosystems.registry import load_specs


def run(args: argparse.Namespace) -> int:
    report = load_specs(settings_from_args(args).specs_dir).stamp_report()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return ExitStatus.OK
    table = Table(title="Spec stamps (SHA256 of canonical JSON)")
    table.add_column("spec")
    table.add_column("stamp")
    table.add_row("oracle", report["oracle"])
    for name, value in report["recipes"].items():
        table.add_row(f"recipe {name}", value)
    table.add_row("hypotheses", report["hypotheses"])
    Console().print(table)
    return ExitStatus.OK
