"""``migration-evals gate check|publish``'s parser; ``migration_evals.bot.commands.gate``
decides."""

from __future__ import annotations

import argparse
from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_deprecated_alias, add_store_options
from migration_evals.bot.parsers import Handler, SubParsers

__all__ = ["add_parser", "add_scan_options", "add_scan_processes_option"]
CHECK_HELP = "list every reason the current results may not be published (exit 0: publishable)"
PUBLISH_HELP = "write a verifiable publication bundle, only if the gate check passes"


def add_scan_options(parser: argparse.ArgumentParser) -> None:
    add_store_options(parser)
    parser.add_argument("--run", metavar="RUN_ID", help="count only this run's trials")
    add_scan_processes_option(parser)


def add_scan_processes_option(parser: argparse.ArgumentParser) -> None:
    """``--scan-processes``: processes that read the ledger. ``--jobs`` means trials
    graded at once everywhere else, so its old meaning here is an alias that warns."""
    parser.add_argument(
        "--scan-processes",
        type=int,
        metavar="N",
        help="processes for the ledger scan (default: the CPUs, at most 4; formerly --jobs)",
    )
    add_deprecated_alias(
        parser, "--jobs", "-j", dest="scan_processes", instead="--scan-processes N"
    )


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("gate", help=summary("gate"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check_parser = actions.add_parser("check", help=CHECK_HELP, description=sentence(CHECK_HELP))
    check_parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    check_parser.add_argument(
        "--full", action="store_true", help="walk every row, not only those after the gate snapshot"
    )
    add_scan_options(check_parser)
    check_parser.set_defaults(handler=Handler("migration_evals.bot.commands.gate", "run_check"))
    publish = actions.add_parser("publish", help=PUBLISH_HELP, description=sentence(PUBLISH_HELP))
    publish.add_argument("--out", type=Path, required=True, metavar="FILE", help="bundle path")
    publish.add_argument("--json", action="store_true", help="print the decision as JSON")
    add_scan_options(publish)
    publish.set_defaults(handler=Handler("migration_evals.bot.commands.gate", "run_publish"))
