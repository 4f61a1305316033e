"""The App's job kinds, registered with the job system by whoever composes a queue."""

from __future__ import annotations

from bot.jobs.kinds import JobKind

__all__ = ["APP_KINDS", "COMMAND", "GRADE", "TRACK_MERGE"]

GRADE = JobKind("grade")  # grade a PR head and publish its check run
COMMAND = JobKind("command", priority=1)  # slash commands in one PR comment; after grading
TRACK_MERGE = JobKind("track-merge")  # hand a merged agent PR to survival mining
APP_KINDS = (GRADE, COMMAND, TRACK_MERGE)
