"""``migration-evals run CHANGESETS.jsonl``: grade changesets through the cascade."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands import sentence, summary
from bot.commands.common import grade
from bot.commands.options import (
    add_executor_options,
    add_grading_options,
    add_trials_option,
    settings_from_args,
)
from core.changesets import read_changesets
from core.specs import load_specs

HELP = summary("run")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("run", help=HELP, description=sentence(HELP))
    parser.add_argument("changesets", type=Path, metavar="CHANGESETS.jsonl")
    add_grading_options(parser)
    add_trials_option(parser)
    add_executor_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    # With the specs, unknown recipes or models and bad recipe params are reported in the
    # same pass as malformed lines: every problem of the file at once.
    changesets = read_changesets(args.changesets, load_specs(settings.specs_dir))
    options = {"input": str(args.changesets)}
    code, _ = grade(
        settings,
        changesets,
        as_json=args.json,
        out=args.out,
        options=options,
        show_trials=args.trials,
    )
    return code
