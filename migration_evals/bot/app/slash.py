"""Slash commands in PR comments: ``/migration-evals <command>`` or ``@<app-slug> <command>``.

One command per line. ``rerun`` and ``strict`` re-grade the PR's current head and need
write, maintain or admin permission (the collaborator permission API); anyone else gets a
polite refusal. ``explain``, ``status`` and ``help`` answer anyone. A word that is no
command (``re-run``, ``retry``, a bare ``/migration-evals``) is answered with the list of
commands. Every such comment gets an 👀 reaction; all its answers go in one reply.

People without write access get at most one reply per pull request per hour
(``REPLY_WINDOW_S``); their further comments get the 👀 alone. The window is a named lease
in the database (the one-scheduler lock's table), so it holds across restarts and across
every process that runs command jobs. Command jobs never hold up check runs: they are
leased after grade jobs, under a subject of their own (``command_subject``), and the
GitHub client lets check-run writes go before comment writes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from migration_evals.bot.app.checks import Mode, code_span, cut, explain
from migration_evals.bot.app.commands import PREFIX, Command, command_lines, known_command
from migration_evals.bot.app.context import BotContext
from migration_evals.bot.app.github import GitHubClient
from migration_evals.bot.app.grading import GradeTask, grade_key
from migration_evals.bot.app.kinds import GRADE
from migration_evals.bot.app.pulls import pull_info
from migration_evals.bot.jobs.queue import NewJob
from migration_evals.core.model import Envelope

__all__ = [
    "PREFIX",
    "REPLY_WINDOW_S",
    "Command",
    "CommandTask",
    "Parsed",
    "command_subject",
    "parse_commands",
    "run_commands",
]

REPLY_WINDOW_S = 3600.0
_WRITERS = {"admin", "maintain", "write"}
_MAX_UNKNOWN = 5  # unknown words quoted back in one reply


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a comment asks for: the commands, and the words after the prefix that are none
    (empty for a bare prefix)."""

    commands: tuple[Command, ...] = ()
    unknown: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.commands or self.unknown)


def _pattern(app_slug: str) -> re.Pattern[str]:
    # The prefix must end where a word ends: "/migration-evalsx" addresses nobody.
    return re.compile(
        rf"^\s*(?:{re.escape(PREFIX)}|@{re.escape(app_slug)}(?:\[bot\])?)(?=\s|$)\s*(\S*)",
        re.IGNORECASE,
    )


def parse_commands(body: str, app_slug: str) -> Parsed:
    """The commands in a comment, in order, one per line, and the unknown words."""
    pattern = _pattern(app_slug)
    commands: list[Command] = []
    unknown: list[str] = []
    for line in body.splitlines():
        match = pattern.match(line)
        if match is None:
            continue
        command = known_command(match[1])
        if command is None:
            unknown.append(match[1][:40])
        elif command not in commands:
            commands.append(command)
    return Parsed(tuple(commands), tuple(unknown))


def command_subject(repo: str, number: int) -> str:
    """Command jobs of one PR run one at a time, apart from its grade jobs (``repo#n``)."""
    return f"{repo}#{number}/comments"


@dataclass(frozen=True, slots=True)
class CommandTask:
    installation_id: int
    repo: str
    number: int
    comment_id: int
    author: str
    commands: tuple[Command, ...]
    unknown: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> CommandTask:
        return cls(
            installation_id=int(payload["installation_id"]),
            repo=str(payload["repo"]),
            number=int(payload["number"]),
            comment_id=int(payload["comment_id"]),
            author=str(payload["author"]),
            commands=tuple(Command(c) for c in payload["commands"]),
            unknown=tuple(str(w) for w in payload.get("unknown", ())),
        )


def _may_write(client: GitHubClient, repo: str, user: str) -> tuple[bool, str]:
    permission, role = client.permission(repo, user)
    return (permission in _WRITERS or role in _WRITERS), role or permission


def _regrade(task: CommandTask, command: Command, client: GitHubClient, ctx: BotContext) -> str:
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
    ctx.queue.intake.enqueue(NewJob(GRADE, key, f"{task.repo}#{task.number}", grade.payload()))
    return f"Re-grading `{pull.head_sha[:12]}` ({mode.value} judging); the check run will update."


def _refusal(task: CommandTask, command: Command, role: str) -> str:
    return (
        f"Sorry @{task.author}, `{PREFIX} {command.value}` needs write, maintain or admin "
        f"permission on this repository (yours: {role or 'none'}), so nothing was started."
    )


def _latest_envelopes(task: CommandTask, ctx: BotContext) -> tuple[str, list[Envelope]] | None:
    for record in ctx.records.for_pull(task.repo, task.number):
        if record.run_id and record.trial_id:
            envelopes = [
                entry.envelope
                for entry in ctx.store.ledger.entries(run_id=record.run_id)
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
    jobs = ctx.queue.admin.jobs(subject=f"{task.repo}#{task.number}")
    pending = sum(job["state"] in ("queued", "running") for job in jobs)
    lines.append(f"\n{pending} grade job(s) queued or running for this pull request.")
    return "\n".join(lines)


def _help(app_slug: str) -> str:
    return "Commands:\n\n" + "\n".join(command_lines(app_slug))


def _not_commands(task: CommandTask, app_slug: str) -> str:
    words = [code_span(w) for w in task.unknown[:_MAX_UNKNOWN] if w]
    said = f"{', '.join(words)} is not a command" if words else "a command word is missing"
    return f"**{said}.** {_help(app_slug)}"


@dataclass(frozen=True, slots=True)
class _Author:
    may_write: bool
    role: str


def _answer(
    task: CommandTask, command: Command, client: GitHubClient, ctx: BotContext, author: _Author
) -> str:
    if command in (Command.RERUN, Command.STRICT):
        if not author.may_write:
            return _refusal(task, command, author.role)
        return _regrade(task, command, client, ctx)
    if command is Command.EXPLAIN:
        return _explain(task, ctx)
    if command is Command.STATUS:
        return _status(task, ctx)
    return _help(ctx.app_slug)


def _reply_slot(task: CommandTask, ctx: BotContext) -> bool:
    """Whether this comment may have the PR's one reply of the hour to non-writers; a retry
    of the comment that has it may reply again (its first try may have failed)."""
    pull = hashlib.sha256(f"{task.repo}#{task.number}".encode()).hexdigest()[:48]
    return ctx.queue.named_leases.hold_lease(
        f"reply:{pull}", f"comment-{task.comment_id}", REPLY_WINDOW_S
    )


def run_commands(task: CommandTask, client: GitHubClient, ctx: BotContext) -> str:
    """Acknowledge the comment, answer every command in one reply (throttled for people
    without write access)."""
    author = _Author(*_may_write(client, task.repo, task.author))
    client.react(task.repo, task.comment_id, "eyes")
    if not author.may_write and not _reply_slot(task, ctx):
        return "acknowledged only: this PR had its reply of the hour to non-writers"
    answers = [f"**`{c.value}`**: {_answer(task, c, client, ctx, author)}" for c in task.commands]
    if task.unknown or not task.commands:
        answers.append(_not_commands(task, ctx.app_slug))
    client.comment(task.repo, task.number, cut("\n\n".join(answers)))
    names = [c.value for c in task.commands] + [f"unknown {w!r}" for w in task.unknown]
    return f"answered {', '.join(names)}"
