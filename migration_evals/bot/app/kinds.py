"""The App's job kinds, registered with the job system by whoever composes a queue."""

from __future__ import annotations

from migration_evals.bot.jobs.kinds import JobKind

__all__ = ["ANNOUNCE", "APP_KINDS", "COMMAND", "GRADE", "TRACK_MERGE"]

GRADE = JobKind("grade")  # grade a PR head and publish its check run
# Open a PR head's check run in progress before its grade job's turn: leased first, by a
# worker of its own, so a burst of pull requests all show a check run within seconds.
ANNOUNCE = JobKind("announce", priority=-1, queue="announce")
# Slash commands in one PR comment: leased after grade jobs, announced on a broker queue of
# their own, so a flood of comments never stands between a PR and its check run.
COMMAND = JobKind("command", priority=1, queue="comments")
TRACK_MERGE = JobKind("track-merge")  # hand a merged agent PR to survival mining
APP_KINDS = (ANNOUNCE, GRADE, COMMAND, TRACK_MERGE)
