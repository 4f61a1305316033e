"""``migration-evals db upgrade|status``'s parser; ``migration_evals.bot.commands.db`` migrates."""

from __future__ import annotations

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_db_option
from migration_evals.bot.parsers import Handler, SubParsers

UPGRADE_HELP = "bring the database's schema to this release's (creating it when empty)"
STATUS_HELP = "show the database's schema revision and this release's; exit 11 when behind"


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("db", help=summary("db"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (("upgrade", UPGRADE_HELP), ("status", STATUS_HELP)):
        action = actions.add_parser(name, help=text, description=sentence(text))
        action.add_argument("--json", action="store_true", help="print JSON on stdout")
        add_db_option(action)
        action.set_defaults(handler=Handler("migration_evals.bot.commands.db", name))
