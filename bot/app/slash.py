"""Slash commands in PR comments: ``/migration-evals <command>`` or ``@<app-slug> <command>``.

One command per line. ``rerun`` and ``strict`` re-grade the PR's current head and need
write, maintain or admin permission (the collaborator permission API); anyone else gets a
polite refusal. ``explain``, ``status`` and ``help`` answer anyone. The comment gets an
👀 reaction first; all answers go in one reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.app.checks import Mode, cut, explain
from bot.app.context import BotContext
from bot.app.github import GitHubClient
from bot.app.grading import GradeTask, grade_key
from bot.app.kinds import GRADE
from bot.app.pulls import pull_info
from bot.jobs.queue import NewJob
from core.model import Envelope

__all__ = ["Command", "CommandTask", "parse_commands", "run_commands"]

PREFIX = "/migration-evals"
_WRITERS = {"admin", "maintain", "write"}


class Command(StrEnum):
    RERUN = "rerun"
    STRICT = "strict"
    EXPLAIN = "explain"
    STATUS = "status"
    HELP = "help"


_HELP = {
    Command.RERUN: "grade the PR's current head again (write access)",
    Command.STRICT: "grade it with two judges that must agree (write access)",
    Command.EXPLAIN: "per-tier evidence and the judge's rationale for the latest result",
    Command.STATUS: "the check runs and jobs of this PR",
    Command.HELP: "this list",
}


def parse_commands(body: str, app_slug: str) -> list[Command]:
    """The commands in a comment, in order, one per line; unknown words are ignored."""
    pattern = re.compile(
        rf"^\s*(?:{re.escape(PREFIX)}|@{re.escape(app_slug)}(?:\[bot\])?)\s+(\w+)", re.IGNORECASE
    )
    found = []
    for line in body.splitlines():
        match = pattern.match(line)
        if match and match[1].lower() in Command.__members__.values():
            found.append(Command(match[1].lower()))
    return found


@dataclass(frozen=True, slots=True)
class CommandTask:
    installation_id: int
    repo: str
    number: int
    comment_id: int
    author: str
    commands: tuple[Command, ...]

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> CommandTask:
        return cls(
            installation_id=int(payload["installation_id"]),
            repo=str(payload["repo"]),
            number=int(payload["number"]),
            comment_id=int(payload["comment_id"]),
            author=str(payload["author"]),
            commands=tuple(Command(c) for c in payload["commands"]),
        )


def _may_write(client: GitHubClient, repo: str, user: str) -> tuple[bool, str]:
    permission, role = client.permission(repo, user)
    return (permission in _WRITERS or role in _WRITERS), role or permission


def _regrade(task: CommandTask, command: Command, client: GitHubClient, ctx: BotContext) -> str:
    allowed, role = _may_write(client, task.repo, task.author)
    if not allowed:
        return (
            f"Sorry @{task.author}, `{PREFIX} {command.value}` needs write, maintain or admin "
            f"permission on this repository (yours: {role or 'none'}), so nothing was started."
        )
    pull = pull_info(client.pull(task.repo, task.number))
    mode = Mode.STRICT if command is Command.STRICT else Mode.STANDARD
    grade = GradeTask(
        task.installation_id,
        task.repo,
        task.number,
        pull.head_sha,
        mode.value,
        plan=ctx.plan.to_dict(),
    )
    key = grade_key(task.repo, task.number, pull.head_sha, mode.value, f"comment-{task.comment_id}")
    ctx.queue.enqueue(NewJob(GRADE, key, f"{task.repo}#{task.number}", grade.payload()))
    return f"Re-grading `{pull.head_sha[:12]}` ({mode.value} judging); the check run will update."


def _latest_envelopes(task: CommandTask, ctx: BotContext) -> tuple[str, list[Envelope]] | None:
    for record in ctx.records.for_pull(task.repo, task.number):
        if record.run_id and record.trial_id:
            envelopes = [
                entry.envelope
                for entry in ctx.store.entries(run_id=record.run_id)
                if entry.trial_id == record.trial_id
            ]
            return f"`{record.head_sha[:12]}` ({record.mode})", envelopes
    return None


def _explain(task: CommandTask, ctx: BotContext) -> str:
    latest = _latest_envelopes(task, ctx)
    if latest is None:
        return "No graded result for this pull request yet."
    label, envelopes = latest
    return f"#### Latest result for {label}\n\n{explain(envelopes)}"


def _status(task: CommandTask, ctx: BotContext) -> str:
    lines = ["| head | mode | status | conclusion |", "|---|---|---|---|"]
    for record in ctx.records.for_pull(task.repo, task.number):
        lines.append(
            f"| `{record.head_sha[:12]}` | {record.mode} | {record.status} | "
            f"{record.conclusion or ''} |"
        )
    jobs = ctx.queue.jobs(subject=f"{task.repo}#{task.number}")
    pending = sum(job["state"] in ("queued", "running") for job in jobs)
    lines.append(f"\n{pending} job(s) queued or running for this pull request.")
    return "\n".join(lines)


def _help() -> str:
    rows = [f"- `{PREFIX} {c.value}`: {text}" for c, text in _HELP.items()]
    return "Commands (one per line; `@app-name <command>` works too):\n" + "\n".join(rows)


def _answer(task: CommandTask, command: Command, client: GitHubClient, ctx: BotContext) -> str:
    if command in (Command.RERUN, Command.STRICT):
        return _regrade(task, command, client, ctx)
    if command is Command.EXPLAIN:
        return _explain(task, ctx)
    if command is Command.STATUS:
        return _status(task, ctx)
    return _help()


def run_commands(task: CommandTask, client: GitHubClient, ctx: BotContext) -> str:
    """Acknowledge the comment, answer every command in one reply."""
    client.react(task.repo, task.comment_id, "eyes")
    answers: Sequence[str] = [
        f"**`{c.value}`**: {_answer(task, c, client, ctx)}" for c in task.commands
    ]
    client.comment(task.repo, task.number, cut("\n\n".join(answers)))
    return f"answered {', '.join(c.value for c in task.commands)}"
