"""``migration-evals mine gold|survival|status|retro``'s parser;
``migration_evals.bot.commands.mine`` mines."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_grading_options, add_store_options
from migration_evals.bot.parsers import Handler, SubParsers
from migration_evals.core.settings import CassetteMode

HELP = summary("mine")
Parser = argparse.ArgumentParser


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("mine", help=HELP, description=sentence(HELP))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    _gold_parser(actions)
    _survival_parser(actions)
    _status_parser(actions)
    _retro_parser(actions)


def _as_of(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO date or time: {value!r}") from None


def _add_as_of(parser: Parser) -> None:
    parser.add_argument(
        "--as-of",
        type=_as_of,
        metavar="WHEN",
        help="label as of this ISO date/time instead of now (reproduces past labels)",
    )


def _add_provider_options(parser: Parser) -> None:
    parser.add_argument("--cassettes", metavar="DIR", type=Path, help="cassette directory")
    parser.add_argument(
        "--mode",
        choices=[m.value for m in CassetteMode],
        help="GitHub from cassettes (default), recorded from the live API, or live",
    )
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="mirror clone cache")


def _action(actions: SubParsers, name: str, about: str, handler: str) -> Parser:
    parser = actions.add_parser(name, help=about, description=sentence(about))
    parser.set_defaults(handler=Handler("migration_evals.bot.commands.mine", handler))
    return parser


def _add_json(parser: Parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def _gold_parser(actions: SubParsers) -> None:
    about = "label merged pull requests (from GitHub, or from git alone) and grow the gold anchor"
    parser = _action(actions, "gold", about, "run_gold")
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME")
    parser.add_argument("--label", action="append", default=[], help="any of these labels")
    parser.add_argument("--author", action="append", default=[], help="any of these authors")
    parser.add_argument("--search", metavar="QUERY", help="GitHub search qualifiers to add")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N pull requests")
    _git_options(parser)
    parser.add_argument("--recipe", help="recipe the changesets are graded on")
    parser.add_argument("--recipe-params", metavar="JSON", help="recipe parameters (JSON)")
    parser.add_argument(
        "--model", help="model of PRs whose author has none configured (default: unknown)"
    )
    parser.add_argument(
        "--no-grade", action="store_true", help="label only; leave ungraded changesets alone"
    )
    add_grading_options(parser)
    _add_as_of(parser)


def _git_options(parser: Parser) -> None:
    parser.add_argument(
        "--git",
        metavar="PATH_OR_URL",
        help="label changes merged in this clone, mirror (or folder holding one) or URL, "
        "with git alone: no API",
    )
    parser.add_argument(
        "--commits",
        type=Path,
        metavar="FILE",
        help="with --git: the changes to label (JSONL: commit, pr, merged_at, recipe, "
        "model); default: discovered from the branch's history",
    )
    parser.add_argument("--branch", help="with --git: the branch (default: the default branch)")
    parser.add_argument("--name", metavar="OWNER/NAME", help="with --git: the repository's name")
    parser.add_argument(
        "--agents-only", action="store_true", help="with --git: only agent-authored changes"
    )


def _survival_parser(actions: SubParsers) -> None:
    about = "refresh merge state and 30-day survival labels of tracked agent PRs (nightly)"
    parser = _action(actions, "survival", about, "run_survival")
    add_store_options(parser)
    _add_provider_options(parser)
    _add_json(parser)
    _add_as_of(parser)


def _status_parser(actions: SubParsers) -> None:
    about = "progress toward the retroactive-scoring unlock"
    parser = _action(actions, "status", about, "run_status")
    add_store_options(parser)
    _add_json(parser)
    _add_as_of(parser)


def _retro_parser(actions: SubParsers) -> None:
    about = "grade historical changesets retroactively (only once the unlock is earned)"
    parser = _action(actions, "retro", about, "run_retro")
    parser.add_argument("changesets", type=Path, metavar="CHANGESETS.jsonl")
    add_grading_options(parser)
    _add_as_of(parser)
