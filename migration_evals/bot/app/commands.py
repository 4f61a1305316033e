"""The slash commands' vocabulary: their names, what each does, how to write them.

Kept apart from ``slash`` (which runs them) so the check run can list them too without
importing the code that answers them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["PREFIX", "Command", "command_lines", "known_command"]

PREFIX = "/migration-evals"


class Command(StrEnum):
    RERUN = "rerun"
    STRICT = "strict"
    EXPLAIN = "explain"
    STATUS = "status"
    HELP = "help"


_WHAT = {
    Command.RERUN: "grade the PR's current head again (write access)",
    Command.STRICT: "grade it with two judges that must agree (write access)",
    Command.EXPLAIN: "per-tier evidence and the judge's rationale for the latest result",
    Command.STATUS: "the check runs and jobs of this PR",
    Command.HELP: "this list",
}


def known_command(word: str) -> Command | None:
    """The command ``word`` names (any case), or None."""
    try:
        return Command(word.lower())
    except ValueError:
        return None


def command_lines(app_slug: str) -> list[str]:
    """The Markdown list of commands, as help replies and check runs show it."""
    rows = [f"- `{PREFIX} {c.value}`: {text}" for c, text in _WHAT.items()]
    return [
        *rows,
        f"\nOne command per line, in a PR comment; `@{app_slug} <command>` works too.",
    ]
