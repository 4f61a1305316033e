"""``migration-evals run CHANGESETS.jsonl`` (or ``run --resume RUN_ID``): grade changesets
through the cascade."""

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
from bot.exits import UsageError
from bot.resume import stored_input
from core.changesets import read_changesets
from core.settings import Settings
from core.specs import load_specs

HELP = summary("run")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        "its stored plan says (modes, jobs, budget and strictness flags given here are not "
        "used); the changesets must be the ones it was started with",
    )
    add_grading_options(parser)
    add_trials_option(parser)
    add_executor_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    source = args.changesets or _resumed_input(settings, args.resume)
    # With the specs, unknown recipes or models and bad recipe params are reported in the
    # same pass as malformed lines: every problem of the file at once.
    specs = load_specs(settings.specs_dir)
    changesets = read_changesets(source, specs)
    options = {"input": str(source)}
    code, _ = grade(
        settings,
        changesets,
        as_json=args.json,
        out=args.out,
        options=options,
        show_trials=args.trials,
        resume=args.resume,
        specs=specs,
    )
    return code


def _resumed_input(settings: Settings, run_id: str | None) -> Path:
    """The changesets file a resumed run was given, when the command line names none."""
    if run_id is None:
        raise UsageError("give CHANGESETS.jsonl (or --resume RUN_ID)")
    return stored_input(settings.db_url, run_id)
