"""``migration-evals worker``'s parser; ``migration_evals.bot.commands.worker`` consumes the
queue."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import (
    add_deprecated_alias,
    add_executor_options,
    add_server_mode_option,
    add_store_options,
)
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("worker")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("worker", help=HELP, description=sentence(HELP))
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help="jobs run at once, one thread each (default: the number of CPUs; formerly "
        "--concurrency)",
    )
    add_deprecated_alias(parser, "--concurrency", "-c", dest="jobs", instead="--jobs N")
    parser.add_argument("--cassettes", metavar="DIR", type=Path, help="cassette directory")
    parser.add_argument("--cache-dir", metavar="DIR", type=Path, help="clone and snapshot cache")
    add_server_mode_option(parser)
    add_store_options(parser)
    add_executor_options(parser, executor=False)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.worker", "run"))
