"""``migration-evals cost``'s parser; ``migration_evals.bot.commands.cost`` forecasts."""

from __future__ import annotations

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_specs_option
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("cost")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("cost", help=HELP, description=sentence(HELP))
    parser.add_argument("--repos", type=int, required=True, metavar="N", help="repositories")
    parser.add_argument(
        "--models", type=int, default=1, metavar="M", help="agent models (default 1)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_specs_option(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.cost", "run"))
