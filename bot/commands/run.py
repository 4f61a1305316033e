"""``migration-evals run CHANGESETS.jsonl`` (or ``run --resume RUN_ID``): grade changesets
through the cascade."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands.common import grade
from bot.commands.options import settings_from_args
from bot.exits import UsageError
from bot.resume import stored_input
from core.changesets import read_changesets
from core.settings import Settings
from core.specs import load_specs


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
