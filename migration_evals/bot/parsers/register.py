"""``migration-evals register``'s parser; ``migration_evals.bot.commands.register`` runs the
manifest flow."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("register")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "register",
        help=HELP,
        description=sentence(HELP)
        + " Open the printed address in a browser signed in to GitHub, press the button, and"
        " the App's id, webhook secret and private key are written to --out.",
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="folder for app.pem and app.env"
    )
    parser.add_argument("--org", metavar="ORG", help="register it for this organisation")
    parser.add_argument("--name", help="the App's name on GitHub (unique there)")
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="where the App will be reached (its webhook), and where the browser reaches this "
        "page (default: $MIGRATION_EVALS_PUBLIC_URL or http://HOST:PORT)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="TCP port (8080)")
    parser.add_argument(
        "--manifest", type=Path, metavar="FILE", help="the manifest (.github/app-manifest.json)"
    )
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.register", "run"))
