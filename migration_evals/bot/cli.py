"""The ``migration-evals`` command line.

Every command has ``--help``; errors exit non-zero with one clear line on stderr, each
condition with its own status (``migration_evals.bot.exits``, printed by ``--help``). A mistyped
command or flag is answered with the nearest one there is; with ``--json`` anywhere on the line,
every error is also one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from migration_evals.bot.commands import COMMANDS
from migration_evals.bot.exits import ExitStatus, UsageError, epilog, error_document
from migration_evals.core.errors import BudgetExceededError, MigrationEvalsError, SchemaBehindError

__all__ = ["build_parser", "command_line", "main"]

# The errors whose condition has a status of its own; any other is ``ERROR``.
_STATUS_OF: tuple[tuple[type[MigrationEvalsError], ExitStatus], ...] = (
    (BudgetExceededError, ExitStatus.BUDGET),
    (SchemaBehindError, ExitStatus.SCHEMA_BEHIND),
)


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the line: the first argument that is not an option."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors suggest the nearest command, action or flag, and
    print a JSON document too when ``--json`` was asked for (``json_errors``)."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        message += _suggestion(self, message)
        if self.json_errors:
            print_json(error_document(ExitStatus.USAGE, message))
        self.print_usage(sys.stderr)
        self.exit(ExitStatus.USAGE, f"{self.prog}: error: {message}\n")


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)'")


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """ " (did you mean ...?)" for a mistyped command or choice, or "" when none is near."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = [str(c) for a in parser._actions for c in (a.choices or ())]
    return _did_you_mean(found.group(1), choices)


def _did_you_mean(typed: str, known: Sequence[str]) -> str:
    import difflib  # noqa: PLC0415 - only a mistyped line needs it (see main)

    near = difflib.get_close_matches(typed, known, n=1, cutoff=0.6)
    return f" (did you mean {near[0]}?)" if near else ""


def _deepest(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` chose: the one whose flags a mistyped one
    was meant to be."""
    for action in parser._actions:  # argparse exposes subparsers no other way
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest or "", None) or "")
            if chosen is not None:
                return _deepest(chosen, args)
    return parser


def _refuse_unknown(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extras: Sequence[str]
) -> None:
    """argparse's "unrecognized arguments" error, with the nearest flag of the command."""
    command = _deepest(parser, args)
    flags = [flag for a in command._actions for flag in a.option_strings]
    hint = next((h for h in (_did_you_mean(x, flags) for x in extras if x[:1] == "-") if h), "")
    command.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def _mark_json(parser: argparse.ArgumentParser, wanted: bool) -> None:
    """Set ``json_errors`` on ``parser`` and every subparser below it."""
    if isinstance(parser, _Parser):
        parser.json_errors = wanted
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                _mark_json(command, wanted)


def print_json(document: object) -> None:
    import json  # noqa: PLC0415 - see main

    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the chosen command's parser module is imported (none for the
    overview), and no handler's (``migration_evals.bot.parsers``)."""
    line = sys.argv[1:] if argv is None else argv
    chosen = _chosen(line)
    parser = _Parser(
        prog="migration-evals",
        description="Grade agent-written batch-change pull requests through a cascade of "
        "oracle tiers (apply, compile, tests, judge), cheapest first.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE_HELP)
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", action=_Commands
    )
    assert isinstance(commands, _Commands)
    unchosen = _Parser(prog=f"{parser.prog} COMMAND", add_help=False)
    for name, (module, summary) in COMMANDS.items():
        if chosen == name:
            importlib.import_module(module).add_parser(commands)
        else:
            commands.list_only(name, summary, unchosen)
    _accept_verbose_anywhere(parser)
    _mark_json(parser, "--json" in line)
    return parser


_VERBOSE_HELP = "log progress details"


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The commands: the chosen one with its parser, every other one only its line of
    the overview. Those share one parser, which never parses: argparse hands the line to
    the command ``_chosen`` finds, and only an unknown one is refused by name. A parser
    each cost every command line more time than building the chosen one's."""

    def list_only(self, name: str, summary: str, unchosen: argparse.ArgumentParser) -> None:
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), summary))
        self._name_parser_map[name] = unchosen


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
    parser = build_parser(argv)
    args, extras = parser.parse_known_args(argv)  # --help prints and exits here
    if extras:
        _refuse_unknown(parser, args, extras)
    # Imported once a command runs, not for --help (nor difflib and json, unless a line
    # is mistyped or JSON asked for): together a seventh of the time `run --help` took.
    import logging  # noqa: PLC0415

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    as_json = bool(getattr(args, "json", False))
    try:
        code: int = args.handler(args)
    except UsageError as exc:
        return _fail(f"migration-evals {args.command}", exc, ExitStatus.USAGE, as_json=as_json)
    except MigrationEvalsError as exc:
        return _fail("migration-evals", exc, _status_of(exc), as_json=as_json)
    except KeyboardInterrupt:
        interrupted = "interrupted; finished trials are in the ledger"
        return _fail("migration-evals", interrupted, ExitStatus.INTERRUPTED, as_json=as_json)
    except Exception as exc:
        if as_json:  # a bug: its traceback follows on stderr, as without --json
            print_json(error_document(ExitStatus.ERROR, f"internal error: {exc!r}"))
        raise
    return code


def _fail(who: str, problem: object, status: ExitStatus, *, as_json: bool) -> ExitStatus:
    """Say what went wrong on stderr (and as the JSON document when asked for)."""
    message = str(problem)
    if as_json:
        print_json(error_document(status, message))
    prefix = "" if status is ExitStatus.INTERRUPTED else "error: "
    print(f"{who}: {prefix}{message}", file=sys.stderr)
    return status


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
