"""``migration-evals images build|list``'s parser; ``migration_evals.bot.commands.images`` builds
them."""

from __future__ import annotations

import argparse
from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("images")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("images", help=HELP, description=sentence(HELP))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="build missing or outdated images (needs root)")
    build.add_argument("tags", nargs="*", metavar="TAG", help="only these images")
    build.add_argument("--rebuild", action="store_true", help="rebuild even if up to date")
    build.add_argument(
        "--jobs",
        "-j",
        type=_at_least_one,
        default=3,
        metavar="N",
        help="images built at once, each once the images it builds FROM are ready "
        "(default: 3; the builds mostly wait on the mirror)",
    )
    build.add_argument(
        "--mirror", metavar="URL", help="Debian mirror (default: from /etc/apt/sources.list*)"
    )
    build.add_argument(
        "--workdir", type=Path, metavar="DIR", help="scratch space (default: the cache dir)"
    )
    _add_specs_option(build)
    build.set_defaults(handler=Handler("migration_evals.bot.commands.images", "run_build"))
    listing = actions.add_parser("list", help="which images the engine has")
    listing.add_argument("--json", action="store_true", help="print JSON on stdout")
    _add_specs_option(listing)
    listing.set_defaults(handler=Handler("migration_evals.bot.commands.images", "run_list"))


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _add_specs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--specs", metavar="DIR", type=Path, help="specs directory (images in DIR/images)"
    )
