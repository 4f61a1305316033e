"""``migration-evals show``'s parser; ``migration_evals.bot.commands.show`` prints the evidence."""

from __future__ import annotations

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_store_options
from migration_evals.bot.parsers import Handler, SubParsers
from migration_evals.core.model import Tier

HELP = summary("show")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("show", help=HELP, description=sentence(HELP))
    parser.add_argument(
        "id", metavar="TRIAL_ID|CHANGESET_ID", help="a trial id (or its start), or a changeset id"
    )
    parser.add_argument(
        "--tier", choices=[t.value for t in Tier], help="only this tier, with whole output tails"
    )
    whole = parser.add_mutually_exclusive_group()
    whole.add_argument(
        "--patch", action="store_true", help="print the patch as tier 1 applied it, whole"
    )
    whole.add_argument(
        "--logs",
        choices=[t.value for t in Tier],
        metavar="TIER",
        help="print the whole output of every sandboxed command TIER ran (base and patched)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument("--run", metavar="RUN_ID", help="look only among this run's trials")
    add_store_options(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.show", "run"))
