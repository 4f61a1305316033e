"""``migration-evals verify``'s parser; ``migration_evals.bot.commands.verify`` recomputes the
bundle."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import database_url
from migration_evals.bot.parsers import Handler, SubParsers
from migration_evals.bot.parsers.gate import add_scan_processes_option

HELP = summary("verify")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("verify", help=HELP, description=sentence(HELP))
    parser.add_argument("bundle", type=Path, metavar="BUNDLE.json")
    parser.add_argument(
        "--db",
        metavar="URL",
        type=database_url,
        help="rebuild the bundle from this ledger, a database URL or a SQLite file's path "
        "(without it: internal consistency and stamps against the specs)",
    )
    parser.add_argument("--specs", metavar="DIR", type=Path, help="specs directory")
    parser.add_argument(
        "--public-key",
        type=Path,
        metavar="PEM",
        help="check the bundle's checkpoint signature with this Ed25519 public key "
        "(`ledger checkpoint --public-key` prints it; default: "
        "$MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY or the checkpoint key's public half)",
    )
    add_scan_processes_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON on stdout")
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.verify", "run"))
