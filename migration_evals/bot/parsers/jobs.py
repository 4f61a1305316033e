"""``migration-evals jobs list|retry``'s parser; ``migration_evals.bot.commands.jobs`` reads and
retries."""

from __future__ import annotations

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_db_option
from migration_evals.bot.parsers import Handler, SubParsers

LIST_HELP = "list the newest jobs: state, attempts, subject and the last error"
RETRY_HELP = "put a failed job back now, with a fresh set of attempts"
STATES = ("queued", "running", "done", "failed")


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "jobs", help=summary("jobs"), description=sentence(summary("jobs"))
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help=LIST_HELP, description=sentence(LIST_HELP))
    listing.add_argument(
        "--state", choices=STATES, action="append", help="only jobs in this state (repeatable)"
    )
    listing.add_argument("--kind", help="only jobs of this kind (grade, command, track-merge, …)")
    listing.add_argument(
        "--limit", type=int, default=50, metavar="N", help="at most N jobs, newest first (50)"
    )
    retry = actions.add_parser("retry", help=RETRY_HELP, description=sentence(RETRY_HELP))
    retry.add_argument("id", type=int, metavar="ID", help="the job's id (from `jobs list`)")
    for action, name in ((listing, "list_jobs"), (retry, "retry")):
        action.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        add_db_option(action)
        action.set_defaults(handler=Handler("migration_evals.bot.commands.jobs", name))
