"""``migration-evals demo``'s parser; ``migration_evals.bot.commands.demo`` grades the examples."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_grading_options, add_trials_option
from migration_evals.bot.parsers import Handler, SubParsers
from migration_evals.bot.settings import PROJECT_ROOT

__all__ = ["EXAMPLES", "add_parser"]

HELP = summary("demo")
EXAMPLES = PROJECT_ROOT / "examples" / "changesets"


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("demo", help=HELP, description=sentence(HELP))
    parser.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES,
        metavar="DIR",
        help="folder of *.jsonl changesets (default: the bundled examples)",
    )
    add_grading_options(parser)
    add_trials_option(parser)
    parser.set_defaults(
        handler=Handler("migration_evals.bot.commands.demo", "run"),
        out=Path("migration-evals-demo.json"),
    )
