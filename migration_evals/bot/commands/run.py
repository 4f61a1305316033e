"""``migration-evals run CHANGESETS.jsonl`` (or ``run --resume RUN_ID``): grade changesets
through the cascade."""

from __future__ import annotations

import argparse
from pathlib import Path

from migration_evals.bot.commands.common import grade
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import UsageError
from migration_evals.bot.resume import stored_input
from migration_evals.core.changesets import read_changesets
from migration_evals.core.settings import Settings
from migration_evals.oracles.ecosystems.registry import load_specs

# What a run's stored plan decides; a resumed run keeps it whatever the command line says.
_PLANNED = (
    ("mode", "--mode"),
    ("sandbox", "--sandbox"),
    ("strict", "--strict"),
    ("budget", "--budget"),
    ("jobs", "--jobs"),
    ("executor", "--executor"),
)


def _refuse_plan_flags(args: argparse.Namespace) -> None:
    """``--resume`` with a flag its stored plan overrides would ignore the flag: say so,
    rather than grade otherwise than the command line reads."""
    given = [flag for name, flag in _PLANNED if getattr(args, name, None) not in (None, False)]
    if args.resume and given:
        raise UsageError(
            f"{', '.join(given)} cannot change a resumed run: it keeps its stored plan "
            "(modes, strictness, budget, jobs, executor); resume without "
            f"{'them' if len(given) > 1 else 'it'}, or start a new run"
        )


def run(args: argparse.Namespace) -> int:
    _refuse_plan_flags(args)
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
