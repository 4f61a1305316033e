"""``migration-evals config check [PATH]``: validate a ``.github/migration-evals.yml``.

The check is the App's own (``migration_evals.bot.app.repo_config.config_problems``): the same
loader with its size, depth and node caps, the schema and the specs (known models and recipes,
recipe parameters), every problem listed in one pass. What passes here grades on the App.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from migration_evals.bot.app.repo_config import CONFIG_PATH, config_problems
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.errors import ConfigError
from migration_evals.core.yamlio import UntrustedYamlLimits
from migration_evals.oracles.ecosystems.registry import load_specs


def _read(path: Path) -> str:
    """The file's text, read only if it is a regular file within the App's size cap."""
    limit = UntrustedYamlLimits().max_bytes
    if not path.is_file():
        why = "does not exist" if not path.exists() else "is not a regular file"
        raise ConfigError(f"{path} {why}; give the path of a {Path(CONFIG_PATH).name} to check")
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    # One byte over the cap is enough for the loader to refuse it with its own message.
    return raw.decode("utf-8", "replace")


def run(args: argparse.Namespace) -> int:
    specs = load_specs(settings_from_args(args).specs_dir)
    problems = config_problems(_read(args.path), specs)
    if args.json:
        document = {"path": str(args.path), "ok": not problems, "problems": problems}
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif problems:
        print(f"{args.path}: {len(problems)} problem(s); the App would grade nothing:")
        for problem in problems:
            print(f"  - {problem}")
    else:
        print(f"{args.path}: ok")
    return ExitStatus.CONFIG_INVALID if problems else ExitStatus.OK
