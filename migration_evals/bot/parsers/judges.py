"""``migration-evals judges reliability``'s parser; ``migration_evals.bot.commands.judges`` computes
it."""

from __future__ import annotations

from migration_evals.bot.commands import summary
from migration_evals.bot.commands.options import add_store_options
from migration_evals.bot.parsers import Handler, SubParsers

HELP = "Cohen's kappa of each judge against the hand labels and of the two judges together"


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("judges", help=summary("judges"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    reliability = actions.add_parser(
        "reliability",
        help=HELP,
        description=HELP[0].upper() + HELP[1:] + ", from the judge envelopes in the ledger "
        "graded under the current oracle stamp. Exits 1 when the pair is unreliable.",
    )
    reliability.add_argument("--run", metavar="RUN_ID", help="only this run (default: all)")
    reliability.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_store_options(reliability)
    reliability.set_defaults(handler=Handler("migration_evals.bot.commands.judges", "run"))
