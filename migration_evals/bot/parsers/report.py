"""``migration-evals report``'s parser; ``migration_evals.bot.commands.report`` writes the
report."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.parsers import Handler, SubParsers
from migration_evals.bot.parsers.gate import add_scan_options

HELP = summary("report")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("report", help=HELP, description=sentence(HELP))
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    parser.add_argument("--json", action="store_true", help="print report.json on stdout")
    add_scan_options(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.report", "run"))
