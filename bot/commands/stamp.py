"""``migration-evals stamp``: the SHA256 stamps of the current specs."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from bot.commands import sentence, summary
from bot.commands.options import add_specs_option, settings_from_args
from bot.exits import ExitStatus
from core.specs import load_specs

HELP = summary("stamp")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("stamp", help=HELP, description=sentence(HELP))
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_specs_option(parser)
    parser.set_defaults(handler=run)


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
