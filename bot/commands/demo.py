"""``migration-evals demo``: grade the bundled examples on embedded defaults."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands import summary
from bot.commands.common import add_grading_options, grade, settings_from_args
from bot.settings import PROJECT_ROOT
from core.changesets import LocatedChangeset, read_changesets
from core.errors import ChangesetError

HELP = summary("demo")
EXAMPLES = PROJECT_ROOT / "examples" / "changesets"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("demo", help=HELP, description=HELP.capitalize() + ".")
    parser.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES,
        metavar="DIR",
        help="folder of *.jsonl changesets (default: the bundled examples)",
    )
    add_grading_options(parser)
    parser.set_defaults(handler=run, out=Path("migration-evals-demo.json"))


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


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    changesets = load_examples(args.examples)
    code, _ = grade(
        settings, changesets, as_json=args.json, out=args.out, options={"input": "demo"}
    )
    return code
