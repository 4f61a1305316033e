"""The ``migration-evals`` command line.

Every command has ``--help``; errors exit non-zero with one clear line on stderr, each
condition with its own status (``bot.exits``, printed by ``--help``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from bot.commands import COMMANDS
from bot.exits import ExitStatus, UsageError, epilog
from core.errors import BudgetExceededError, MigrationEvalsError, SchemaBehindError

__all__ = ["build_parser", "command_line", "main"]

# The errors whose condition has a status of its own; any other is ``ERROR``.
_STATUS_OF: tuple[tuple[type[MigrationEvalsError], ExitStatus], ...] = (
    (BudgetExceededError, ExitStatus.BUDGET),
    (SchemaBehindError, ExitStatus.SCHEMA_BEHIND),
)


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the line: the first argument that is not an option."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the chosen command's parser module is imported (none for the
    overview), and no handler's (``bot.parsers``)."""
    chosen = _chosen(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="migration-evals",
        description="Grade agent-written batch-change pull requests through a cascade of "
        "oracle tiers (apply, compile, tests, judge), cheapest first.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE_HELP)
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, summary) in COMMANDS.items():
        if chosen == name:
            importlib.import_module(module).add_parser(commands)
        else:
            commands.add_parser(name, help=summary)
    _accept_verbose_anywhere(parser)
    return parser


_VERBOSE_HELP = "log progress details"


class _VersionAction(argparse.Action):
    """``--version``, with the release looked up only when asked for: importing
    ``importlib.metadata`` would cost every other command line a twentieth of a second."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: Any) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    import importlib.metadata  # noqa: PLC0415 - see _VersionAction

    try:
        return importlib.metadata.version("migration-evals")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "(not installed)"


def _accept_verbose_anywhere(parser: argparse.ArgumentParser) -> None:
    """``-v`` after the command (``run x.jsonl -v``) as well as before it. Suppressed
    defaults, so that a command's parser never resets a ``-v`` given before it."""
    for action in parser._actions:  # argparse exposes subparsers no other way
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for command in dict.fromkeys(action.choices.values()):
            command.add_argument(
                "-v",
                "--verbose",
                action="store_true",
                default=argparse.SUPPRESS,
                help=_VERBOSE_HELP,
            )
            _accept_verbose_anywhere(command)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(argv).parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = args.handler(args)
    except UsageError as exc:
        print(f"migration-evals {args.command}: error: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except MigrationEvalsError as exc:
        print(f"migration-evals: error: {exc}", file=sys.stderr)
        return _status_of(exc)
    except KeyboardInterrupt:
        print("migration-evals: interrupted; finished trials are in the ledger", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    return code


def _status_of(exc: MigrationEvalsError) -> ExitStatus:
    return next((status for kind, status in _STATUS_OF if isinstance(exc, kind)), ExitStatus.ERROR)


def command_line() -> int:
    """The console script: ``main``, then an exit that skips the interpreter's last
    collections of every object the process made (they are frozen out of the collector's
    reach; the operating system reclaims the memory all the same). Everything the command
    writes is written and closed by then. A one-trial grade spent a sixth of a second of
    its life in those collections."""
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(command_line())
