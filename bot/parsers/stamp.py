"""``migration-evals stamp``'s parser; ``bot.commands.stamp`` prints the stamps."""

from __future__ import annotations

from bot.commands import sentence, summary
from bot.commands.options import add_specs_option
from bot.parsers import Handler, SubParsers

HELP = summary("stamp")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("stamp", help=HELP, description=sentence(HELP))
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_specs_option(parser)
    parser.set_defaults(handler=Handler("bot.commands.stamp", "run"))
