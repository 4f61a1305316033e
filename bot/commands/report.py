"""``migration-evals report --out DIR``: index.html, report.md, report.json and PNG plots."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot.commands import summary
from bot.commands.gate import add_scan_options, evaluate_from_args
from gate.publication import check

HELP = summary("report")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("report", help=HELP, description=HELP.capitalize() + ".")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    parser.add_argument("--json", action="store_true", help="print report.json on stdout")
    add_scan_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: matplotlib and Jinja2 would otherwise slow the start of
    # every command, ``gate check`` included, by about half a second.
    from gate.report import report_document, write_report  # noqa: PLC0415

    evaluation = evaluate_from_args(args)
    decision = check(evaluation)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    document = report_document(evaluation, decision, generated)
    files = write_report(document, args.out)
    if args.json:
        json.dump(document, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        state = "publishable" if decision.publishable else "NOT PUBLISHABLE"
        print(f"report written to {files.html} ({state}; {len(files.plots)} plots)")
        if document["banner"]:
            print(document["banner"], file=sys.stderr)
    return 0
