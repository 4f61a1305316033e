"""``migration-evals jobs list|retry``: the job queue as an operator sees it.

``list`` shows the newest jobs with their state, attempts and last error, so a job that
keeps failing (GitHub unreachable, a judge key refused) is seen with its cause; ``retry``
puts a failed job of the App's back at once with a fresh set of attempts, after the cause
is fixed. Both read the database the App writes (``--db``), not a running server.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from migration_evals.bot.app.kinds import APP_KINDS
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus, UsageError
from migration_evals.bot.jobs.kinds import KindRegistry
from migration_evals.bot.jobs.queue import JobQueue, JobState, QueueOptions, build_queue
from migration_evals.bot.ledger_keys import open_store

__all__ = ["job_document", "list_jobs", "retry"]

_SHOWN = ("id", "kind", "key", "subject", "state", "attempts", "max_attempts", "leased_by")
_TIMES = ("created_at", "updated_at", "run_after", "lease_until")


def _when(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job_document(row: Mapping[str, Any]) -> dict[str, Any]:
    """One job as ``--json`` prints it (its payload, which holds the run plan, left out)."""
    document = {name: row[name] for name in _SHOWN}
    document.update({name: _when(row[name]) for name in _TIMES})
    document["last_error"] = row["last_error"]
    document["result"] = row["result"]
    return document


def _queue(args: argparse.Namespace) -> JobQueue:
    settings = settings_from_args(args)
    return build_queue(open_store(settings), KindRegistry(APP_KINDS), QueueOptions.of(settings))


def _line(row: Mapping[str, Any]) -> str:
    attempts = f"{row['attempts']}/{row['max_attempts']}"
    when = _when(row["updated_at"]) or ""
    waiting = ""
    if row["state"] == JobState.QUEUED.value and row["attempts"]:
        waiting = f", next attempt {_when(row['run_after'])}"
    head = f"{row['id']:>6}  {row['kind']:<11} {row['state']:<7} {attempts:>5}  {when}"
    return f"{head}  {row['subject']}{waiting}"


def list_jobs(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    queue = _queue(args)
    try:
        states = [JobState(state) for state in args.state or ()]
        rows = queue.admin.listing(states=states, kind=args.kind, limit=args.limit)
    finally:
        queue.store.close()
    if args.json:
        _print_json({"jobs": [job_document(row) for row in rows]})
        return ExitStatus.OK
    if not rows:
        print("no jobs" + (" match" if args.state or args.kind else ""))
        return ExitStatus.OK
    print(f"{'id':>6}  {'kind':<11} {'state':<7} {'tries':>5}  {'updated (UTC)':<20}  subject")
    for row in rows:
        print(_line(row))
        if row["last_error"]:
            print(f"        last error: {row['last_error']}")
    return ExitStatus.OK


def retry(args: argparse.Namespace) -> int:
    queue = _queue(args)
    try:
        before = queue.admin.retry(args.id)
    finally:
        queue.store.close()
    if args.json:
        _print_json({"retried": job_document(before)})
    else:
        print(
            f"job {before['id']} ({before['key']}) put back: it was {before['state']} after "
            f"{before['attempts']} attempt(s); it runs again with {before['max_attempts']} "
            "attempts as soon as a worker is free"
        )
    return ExitStatus.OK


def _print_json(document: dict[str, Any]) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")
