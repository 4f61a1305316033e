"""``migration-evals config check``'s parser; ``migration_evals.bot.commands.config`` checks the
file."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import summary
from migration_evals.bot.parsers import Handler, SubParsers

__all__ = ["CONFIG_PATH", "add_parser"]

# ``migration_evals.bot.app.repo_config.CONFIG_PATH``, spelled again here: that module's imports
# (the specs, jsonschema) would make ``--help`` slow. A test holds the two equal.
CONFIG_PATH = ".github/migration-evals.yml"
HELP = summary("config")
CHECK_HELP = f"validate a {CONFIG_PATH} file as the App would, listing every problem"


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("config", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check", help=CHECK_HELP, description=CHECK_HELP[0].upper() + CHECK_HELP[1:] + "."
    )
    check.add_argument(
        "path",
        metavar="PATH",
        nargs="?",
        type=Path,
        default=Path(CONFIG_PATH),
        help=f"the file to check (default: {CONFIG_PATH})",
    )
    check.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    check.add_argument("--specs", metavar="DIR", type=Path, help="specs directory")
    check.set_defaults(handler=Handler("migration_evals.bot.commands.config", "run"))
