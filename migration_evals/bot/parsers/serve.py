"""``migration-evals serve``'s parser; ``migration_evals.bot.commands.serve`` runs the App."""

from __future__ import annotations

from migration_evals.bot.commands import summary
from migration_evals.bot.commands.options import (
    add_deprecated_alias,
    add_server_mode_option,
    add_store_options,
)
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("serve")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "serve",
        help=HELP,
        description="Run the GitHub App: webhook endpoint, job workers and scheduler.",
    )
    parser.add_argument("--port", type=int, default=8080, help="TCP port (default 8080)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; use a proxy)"
    )
    parser.add_argument(
        "--processes", type=int, default=2, metavar="N", help="gunicorn worker processes"
    )
    parser.add_argument(
        "--request-threads",
        type=int,
        default=4,
        metavar="N",
        help="threads answering HTTP requests in each process (default 4; formerly --threads)",
    )
    add_deprecated_alias(parser, "--threads", dest="request_threads", instead="--request-threads N")
    parser.add_argument(
        "--dev", action="store_true", help="Flask's development server, one process"
    )
    add_server_mode_option(parser)
    parser.add_argument(
        "--github",
        choices=("live", "record", "replay"),
        help="how the App talks to GitHub: the API (live), the API recorded to cassettes "
        "(record), or cassettes alone, offline (replay); default: --mode's",
    )
    add_store_options(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.serve", "run"))
