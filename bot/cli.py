"""The ``migration-evals`` command line.

Every command has ``--help``; errors exit non-zero with one clear line on stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from bot.commands import cost, demo, judges, ledger, mine, run, serve, stamp, worker
from core.errors import MigrationEvalsError

__all__ = ["build_parser", "main"]

EXIT_ERROR = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="migration-evals",
        description="Grade agent-written batch-change pull requests through a cascade of "
        "oracle tiers (apply, compile, tests, judge), cheapest first.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (demo, run, cost, stamp, ledger, judges, mine, serve, worker):
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = args.handler(args)
    except MigrationEvalsError as exc:
        print(f"migration-evals: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("migration-evals: interrupted; finished trials are in the ledger", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
