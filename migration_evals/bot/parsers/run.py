"""``migration-evals run``'s parser; ``migration_evals.bot.commands.run`` grades."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import (
    add_executor_options,
    add_grading_options,
    add_trials_option,
)
from migration_evals.bot.parsers import Handler, SubParsers

HELP = summary("run")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("run", help=HELP, description=sentence(HELP))
    parser.add_argument(
        "changesets",
        type=Path,
        nargs="?",
        metavar="CHANGESETS.jsonl",
        help="the changesets to grade (with --resume: default, the file the run was given)",
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="finish an interrupted run: grade only the changesets it has no trial for, as "
        "its stored plan says (so --mode, --sandbox, --strict, --budget, --jobs and "
        "--executor are refused with it); the changesets must be the ones it was started "
        "with",
    )
    add_grading_options(parser)
    add_trials_option(parser)
    add_executor_options(parser)
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.run", "run"))
