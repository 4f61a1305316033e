"""``migration-evals demo``: grade the bundled examples on embedded defaults.

Every example is graded for every model the examples list (``every_model``), so the
report compares the models on the same tasks: each model's copy of an example is the
changeset ``ID@MODEL`` (``migration_evals.core.tasks``), the example's own model keeps its id. The
copies carry the example's one patch, so tiers 1-3 and the judge answer them as they answer the
example (the same sandbox requests and judge prompts, replayed from the same cassettes);
their outcomes agree by construction, and the paired tests say so.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from migration_evals.bot.commands.common import grade
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.console import make_console
from migration_evals.bot.parsers.demo import EXAMPLES
from migration_evals.bot.wiring import probe_engine, probe_registries
from migration_evals.core.changesets import LocatedChangeset, read_changesets
from migration_evals.core.errors import ChangesetError
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.tasks import for_model
from migration_evals.oracles.ecosystems.registry import load_specs
from migration_evals.oracles.tiers.sandboxed import recipe_images

__all__ = ["EXAMPLES", "choose_sandbox", "every_model", "load_examples", "run"]


def load_examples(folder: Path) -> list[LocatedChangeset]:
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ChangesetError("no *.jsonl changeset files", file=str(folder))
    changesets = [c for path in files for c in read_changesets(path)]
    seen: dict[str, LocatedChangeset] = {}
    for located in changesets:
        first = seen.setdefault(located.changeset.id, located)
        if first is not located:
            raise ChangesetError(
                f"duplicate id {located.changeset.id!r} (also in {first.file}:{first.line})",
                file=located.file,
                line=located.line,
            )
    return changesets


def every_model(changesets: Sequence[LocatedChangeset]) -> list[LocatedChangeset]:
    """Each changeset once per model the changesets name, its own model first."""
    models = sorted({located.changeset.model for located in changesets})
    return [
        replace(located, changeset=for_model(located.changeset, model))
        for model_first in (True, False)
        for located in changesets
        for model in models
        if (model == located.changeset.model) is model_first
    ]


def _needed(specs: SpecSet, located: LocatedChangeset) -> list[str]:
    """The images an example's sandbox tiers would run in, should its patch apply. An image
    only a removed FROM line names is its base's, which the recipe's rewrites name when the
    patch applies; an example that names another (a patch written against a stale
    Dockerfile) stops at tier 1 and needs no image, so the demo does not ask for it."""
    changeset = located.changeset
    kept = "\n".join(
        line
        for line in changeset.patch.splitlines()
        if not line.startswith("-") or line.startswith("---")
    )
    return recipe_images(specs.recipe(changeset.recipe), replace(changeset, patch=kept))


def choose_sandbox(settings: Settings, changesets: Sequence[LocatedChangeset]) -> Settings:
    """Unless a sandbox mode was asked for: live when a Docker engine with every image the
    examples need answers and their dependencies can be had (the registries answer, or
    offline mode was chosen), cassettes otherwise. Says which on stderr."""
    stderr = make_console(stderr=True)
    if settings.sandbox_mode is not None:
        stderr.print(f"sandbox: {settings.sandbox_mode.value} (as asked)", highlight=False)
        return settings
    specs = load_specs(settings.specs_dir)
    images = sorted({image for located in changesets for image in _needed(specs, located)})
    problem = probe_engine(settings, images) or probe_registries(settings.dependencies)
    if problem is None:
        stderr.print(
            "sandbox: live Docker engine (it has every image the examples need; "
            "dependencies from the registries or the dependency cache)"
        )
        return settings.with_overrides(sandbox_mode=CassetteMode.LIVE)
    stderr.print(f"sandbox: replaying cassettes ({problem})", highlight=False, markup=False)
    return settings.with_overrides(sandbox_mode=CassetteMode.REPLAY)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    changesets = every_model(load_examples(args.examples))
    settings = choose_sandbox(settings, changesets)
    code, _ = grade(
        settings,
        changesets,
        as_json=args.json,
        out=args.out,
        options={"input": "demo"},
        show_trials=args.trials,
    )
    return code
