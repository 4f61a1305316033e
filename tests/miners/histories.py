"""Real git histories with fixed dates, for the survival tests.

``History`` drives git itself (``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE`` set on every
commit), so merges, squashes, rebases, reverts, re-indents and renames are exactly what
git produces; ``pull_request`` describes the result as a provider would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from migration_evals.core.ports import PullRequestInfo
from migration_evals.miners.agents import Person
from tests.conftest import init_repository, resolve_ref, run_git, write_files

__all__ = ["ADDED", "BASE_FILE", "T0", "History", "MixedProject", "day", "mixed_project"]

T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


BASE_FILE = "".join(
    f"existing line {i} of the application, unchanged by anyone\n" for i in range(8)
)
# Long, distinct lines: blame's move and copy detection needs enough characters to match.
ADDED = [f"feature line {i}: compute the migrated value for case number {i}\n" for i in range(10)]


@dataclass
class History:
    path: Path

    @classmethod
    def create(cls, path: Path, files: Mapping[str, str] | None = None) -> History:
        path.mkdir(parents=True)
        init_repository(path)
        history = cls(path)
        history.commit(files or {"app.txt": BASE_FILE}, "base", day(-10))
        return history

    def git(self, *args: str, at: datetime | None = None, author: Person | None = None) -> str:
        when = (at or T0).isoformat()
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        if author is not None:
            env |= {"GIT_AUTHOR_NAME": author.name, "GIT_AUTHOR_EMAIL": author.email}
        return run_git(self.path, *args, env=env)

    def head(self, rev: str = "HEAD") -> str:
        return resolve_ref(self.path, rev)

    def checkout(self, branch: str, *, new: bool = False, start: str = "main") -> None:
        if new:
            self.git("checkout", "-q", "-b", branch, start)
        else:
            self.git("checkout", "-q", branch)

    def commit(
        self,
        files: Mapping[str, str | None],
        message: str,
        at: datetime,
        author: Person | None = None,
    ) -> str:
        for name, content in files.items():
            if content is None:
                self.git("rm", "-q", name)
        write_files(self.path, {k: v for k, v in files.items() if v is not None})
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, at=at, author=author)
        return self.head()

    def read(self, name: str) -> str:
        return (self.path / name).read_text()

    def feature(self, lines: list[str] | None = None) -> str:
        """Branch ``feature`` off main with one commit (day 0) appending ``lines`` to app.txt."""
        self.checkout("feature", new=True)
        head = self.commit({"app.txt": BASE_FILE + "".join(lines or ADDED)}, "feature", day(0))
        self.checkout("main")
        return head

    def merge(self, branch: str, at: datetime) -> str:
        self.git("merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch, at=at)
        return self.head()

    def merge_as(self, branch: str, message: str, on_day: float) -> str:
        self.git("merge", "-q", "--no-ff", "-m", message, branch, at=day(on_day))
        return self.head()

    def squash(self, branch: str, at: datetime) -> str:
        self.git("merge", "-q", "--squash", branch, at=at)
        self.git("commit", "-q", "-m", f"{branch} (squashed)", at=at)
        return self.head()

    def merged_pr(self, number: int, at: datetime) -> PullRequestInfo:
        """A PR adding its own file (so PRs never conflict), merged with a merge commit."""
        base = self.head("main")
        self.checkout(f"pr-{number}", new=True)
        head = self.commit(
            {f"pr{number}.txt": "".join(ADDED)}, f"PR {number}", at - timedelta(hours=1)
        )
        self.checkout("main")
        merge = self.merge(f"pr-{number}", at)
        return self.pull_request(
            head=head, base=base, merged_at=at, merge_commit=merge, number=number
        )

    def pull_request(
        self,
        *,
        head: str,
        base: str,
        merged_at: datetime | None,
        merge_commit: str | None = None,
        closed_at: datetime | None = None,
        number: int = 7,
    ) -> PullRequestInfo:
        return PullRequestInfo(
            repo="example/app",
            number=number,
            title="feature",
            url=f"https://example.invalid/example/app/pull/{number}",
            clone_url=str(self.path),
            default_branch="main",
            base_sha=base,
            head_sha=head,
            author="agent-bot",
            is_agent=True,
            created_at=day(-1),
            repo_created_at=date(2020, 1, 1),
            merged_at=merged_at,
            closed_at=closed_at or merged_at,
            merge_commit_sha=merge_commit,
        )


def indent(lines: list[str], prefix: str = "    ") -> list[str]:
    return [prefix + line for line in lines]


CLAUDE_TRAILER = "Co-authored-by: Claude <noreply@anthropic.com>"
COPILOT = Person("Copilot", "198982749+Copilot@users.noreply.github.com")
HUMAN = Person("Ada Human", "ada@example.com")


def _lines(tag: str) -> str:
    return "".join(line.replace("feature", tag) for line in ADDED)


@dataclass(frozen=True)
class MixedProject:
    """What ``mixed_project`` made, and what each change should be labelled at day 60."""

    history: History
    merged_pr: str  # PR 1: a merge commit, agent co-authored, untouched: accepted
    squashed_pr: str  # PR 2: a squash by a person, reverted on day 10: rejected
    revert: str
    agent_commit: str  # never a PR, written by the Copilot agent: accepted
    late_pr: str  # PR 5: merged on day 50: pending at day 60
    human_commit: str  # never a PR, by a person: not a change
    sync_merge: str  # a merge naming no pull request: not a change


def mixed_project(path: Path) -> MixedProject:
    """Merge commits, squashes, agent trailers and the noise around them, on fixed dates."""
    history = History.create(path)
    history.checkout("agent/feature", new=True)
    history.commit(
        {"one.txt": _lines("one")}, f"Add one\n\n{CLAUDE_TRAILER}\n", day(0.5), author=HUMAN
    )
    history.checkout("main")
    merged = history.merge_as("agent/feature", "Merge pull request #1 from octo/agent-feature", 1)
    squashed = history.commit({"two.txt": _lines("two")}, "Bump the thing (#2)", day(2), HUMAN)
    agent = history.commit({"three.txt": _lines("three")}, "Fix three", day(3), COPILOT)
    human = history.commit({"four.txt": "by hand\n"}, "Tidy", day(4), HUMAN)
    history.git("revert", "--no-edit", squashed, at=day(10))
    revert = history.head()
    history.checkout("topic", new=True)
    history.commit({"topic.txt": "topic\n"}, "topic work", day(11), HUMAN)
    history.checkout("main")
    sync = history.merge_as("topic", "Merge branch 'topic'", 12)
    late = history.commit({"five.txt": _lines("five")}, "Late change (#5)", day(50), HUMAN)
    return MixedProject(history, merged, squashed, revert, agent, late, human, sync)
