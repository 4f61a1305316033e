"""``migration-evals stamp``'s parser; ``migration_evals.bot.commands.stamp`` prints the stamps."""

from __future__ import annotations

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_specs_option
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("stamp")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("stamp", help=HELP, description=sentence(HELP))
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_specs_option(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.stamp", "run"))
