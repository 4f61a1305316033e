"""Merged changes found in git alone: listed in a commit file, or discovered from history.

Discovery walks the branch's first-parent history, oldest first, and takes

* a merge commit whose subject is ``Merge pull request #N from …``: pull request N,
  whose commits are those the merge brought in (``M --not M^1``);
* a single-parent commit whose subject ends ``(#N)``: pull request N, squashed;
* any other single-parent commit an agent wrote (``migration_evals.miners.agents``): a change that
was
  never a pull request.

A commit list (JSONL: ``commit``, and optionally ``pr``, ``merged_at``, ``recipe``,
``model``) names the changes instead. A listed commit on the branch's first-parent line is
where its change landed; one made on a branch that a merge brought in landed with that
merge, and is labelled as that merge's change. A change is listed once, however many of
its commits the list names. Without a ``merged_at`` from the list, a change merged when
its landing commit was committed, and the evidence says so; a ``merged_at`` before the
commit was made is refused, and so is a root commit (there is nothing before it to
compare with). Authorship is read from every commit of the change
(authors, committers, ``Co-authored-by:`` trailers, generator lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jsonschema

from migration_evals.core.clock import as_utc
from migration_evals.core.errors import ChangesetError, RepositoryError
from migration_evals.core.git import git
from migration_evals.miners.agents import AgentMatch, Agents, Person, people_in
from migration_evals.miners.history import git_text, is_ancestor, landing_commit
from migration_evals.miners.labels import MergedAtSource

__all__ = [
    "GitChange",
    "ListedCommit",
    "change_diff",
    "discover_changes",
    "first_commit_date",
    "listed_changes",
    "read_commit_list",
]

_MERGED_PR = re.compile(r"^Merge pull request #(\d+) from \S+")
_SQUASHED_PR = re.compile(r"\(#(\d+)\)\s*$")
_FIELDS = ("%H", "%P", "%cI", "%an", "%ae", "%cn", "%ce", "%B")
_FORMAT = "%x1f".join(_FIELDS) + "%x1e"

_LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commit": {"type": "string", "pattern": "^[0-9a-fA-F]{7,64}$"},
        "pr": {"type": ["integer", "null"], "minimum": 1},
        "merged_at": {"type": ["string", "null"], "minLength": 1},
        "recipe": {"type": "string", "minLength": 1},
        "model": {"type": "string", "minLength": 1},
    },
    "required": ["commit"],
}
_LIST_VALIDATOR = jsonschema.Draft202012Validator(
    _LIST_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


@dataclass(frozen=True, slots=True)
class ListedCommit:
    """One line of a commit list."""

    commit: str
    pr: int | None = None
    merged_at: datetime | None = None
    recipe: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class GitChange:
    """A change that landed on the branch, as git (and the list, if any) describes it."""

    commit: str  # where it landed: the merge commit, the squash, the commit itself
    pr: int | None
    merged_at: datetime
    merged_at_source: MergedAtSource
    subject: str
    author: str
    agent: AgentMatch | None
    recipe: str | None = None
    model: str | None = None
    listed: tuple[str, ...] = ()  # the list's commits, when it named others than ``commit``


@dataclass(frozen=True, slots=True)
class _Commit:
    sha: str
    parents: tuple[str, ...]
    committed_at: datetime
    author: Person
    committer: Person
    message: str

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def people(self) -> list[Person]:
        return people_in(self.author, self.committer, self.message)


def _log(git_dir: Path, *args: str) -> Iterator[_Commit]:
    for record in git_text(git_dir, "log", f"--format={_FORMAT}", *args).split("\x1e"):
        fields = record.lstrip("\n").split("\x1f")
        if len(fields) != len(_FIELDS):
            continue
        sha, parents, when, an, ae, cn, ce, message = fields
        yield _Commit(
            sha,
            tuple(parents.split()),
            as_utc(datetime.fromisoformat(when)),
            Person(an, ae),
            Person(cn, ce),
            message,
        )


def _own_commits(git_dir: Path, landed: _Commit) -> list[_Commit]:
    """The commits a merge brought in, or the landing commit itself."""
    if len(landed.parents) > 1:
        brought = _log(git_dir, landed.sha, "--not", landed.parents[0])
        return [c for c in brought if c.sha != landed.sha] or [landed]
    return [landed]


def _pr_number(commit: _Commit) -> int | None:
    pattern = _MERGED_PR if len(commit.parents) > 1 else _SQUASHED_PR
    found = pattern.search(commit.subject)
    return int(found.group(1)) if found else None


def _change(
    git_dir: Path, commit: _Commit, agents: Agents, listed: ListedCommit | None = None
) -> GitChange:
    own = _own_commits(git_dir, commit)
    agent = agents.recognise((c.people, c.message) for c in own)
    merged_at, source = commit.committed_at, MergedAtSource.COMMITTER_DATE
    if listed is not None and listed.merged_at is not None:
        merged_at, source = as_utc(listed.merged_at), MergedAtSource.COMMIT_LIST
    return GitChange(
        commit=commit.sha,
        pr=listed.pr if listed is not None and listed.pr is not None else _pr_number(commit),
        merged_at=merged_at,
        merged_at_source=source,
        subject=commit.subject,
        author=own[-1].author.name,  # the oldest own commit: who started the change
        agent=agent,
        recipe=listed.recipe if listed else None,
        model=listed.model if listed else None,
    )


def discover_changes(
    git_dir: Path, tip: str, agents: Agents, *, agents_only: bool = False
) -> Iterator[GitChange]:
    """Every merged pull request (and agent commit) on ``tip``'s first-parent history,
    oldest first, found as the caller asks for them."""
    for commit in _log(git_dir, "--first-parent", "--reverse", tip):
        if not commit.parents:
            continue
        pr = _pr_number(commit)
        if pr is None and len(commit.parents) > 1:
            continue  # a merge that names no pull request (a branch sync, a release merge)
        change = _change(git_dir, commit, agents)
        if (pr is None or agents_only) and change.agent is None:
            continue
        yield change


def listed_changes(
    git_dir: Path, tip: str, listed: Sequence[ListedCommit], agents: Agents
) -> tuple[list[GitChange], list[tuple[str, str]]]:
    """The listed changes, each once, and ``(commit, why)`` for each entry git cannot place
    or whose ``merged_at`` cannot be."""
    changes: dict[str, GitChange] = {}
    firsts: dict[str, ListedCommit] = {}
    problems: list[tuple[str, str]] = []
    for entry in listed:
        try:
            named, landed = _resolve(git_dir, tip, entry.commit)
            _check_merged_at(entry, named, landed)
        except (RepositoryError, ChangesetError) as exc:
            problems.append((entry.commit, str(exc)))
            continue
        if landed.sha not in changes:
            firsts[landed.sha] = entry
            changes[landed.sha] = _listed_change(git_dir, named, landed, agents, entry)
            continue
        # The same change named again (the same commit, or another of its commits).
        if _details(entry) != _details(firsts[landed.sha]):
            problems.append((entry.commit, _listed_again(firsts[landed.sha], landed)))
        known = changes[landed.sha]
        if named.sha != landed.sha and named.sha not in known.listed:
            changes[landed.sha] = replace(known, listed=(*known.listed, named.sha))
    return list(changes.values()), problems


def _details(entry: ListedCommit) -> tuple[object, ...]:
    return (entry.pr, entry.merged_at, entry.recipe, entry.model)


def _listed_again(first: ListedCommit, landed: _Commit) -> str:
    return (
        f"the change that landed with {landed.sha[:12]} is listed already (as {first.commit}) "
        "with another pr, merged_at, recipe or model; the first listing is kept"
    )


def _listed_change(
    git_dir: Path, named: _Commit, landed: _Commit, agents: Agents, entry: ListedCommit
) -> GitChange:
    change = _change(git_dir, landed, agents, entry)
    return change if named.sha == landed.sha else replace(change, listed=(named.sha,))


def _check_merged_at(entry: ListedCommit, named: _Commit, landed: _Commit) -> None:
    """A change cannot have merged before its commits were made."""
    if entry.merged_at is None:
        return
    merged_at = as_utc(entry.merged_at)
    for commit in (named, landed):
        if merged_at < commit.committed_at:
            raise ChangesetError(
                f"merged_at {merged_at.isoformat()} is before commit {commit.sha[:12]} was "
                f"made ({commit.committed_at.isoformat()}); a change cannot merge before it "
                "exists: check the list's merged_at"
            )


def _resolve(git_dir: Path, tip: str, sha: str) -> tuple[_Commit, _Commit]:
    """The commit ``sha`` names, and the commit of ``tip``'s first-parent line it landed with."""
    done = git(
        ["--git-dir", str(git_dir), "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"],
        check=False,
    )
    full = done.stdout.decode().strip()
    if done.returncode != 0 or not full:
        raise RepositoryError(f"commit {sha} is not in this repository")
    if not is_ancestor(git_dir, full, tip):
        raise RepositoryError(f"commit {sha} is not on {tip}")
    named = next(_log(git_dir, "-1", full))
    if not named.parents:
        raise RepositoryError(
            f"commit {sha} is a root commit (it starts the history, with no parent): there "
            "is no branch before it to compare with, so it is no change to label"
        )
    landed = landing_commit(git_dir, tip, full)
    return named, named if landed == full else next(_log(git_dir, "-1", landed))


def change_diff(git_dir: Path, change: GitChange) -> tuple[str, str, str]:
    """``(base, head, patch)``: what the change's author produced, on what it forked from."""
    parents = git_text(git_dir, "rev-list", "--parents", "-n", "1", change.commit).split()[1:]
    if not parents:
        raise RepositoryError(f"{change.commit} has no parent; it has no diff to grade")
    if len(parents) > 1:
        base = git_text(git_dir, "merge-base", parents[0], parents[1]).strip()
        head = parents[1]
    else:
        base, head = parents[0], change.commit
    patch = git_text(git_dir, "diff", "--no-color", "--no-ext-diff", "--binary", base, head)
    return base, head, patch


def first_commit_date(git_dir: Path, tip: str) -> date:
    """When the repository began, as its history tells: its oldest root commit's date."""
    roots = git_text(git_dir, "log", "--max-parents=0", "--format=%aI", tip).split()
    if not roots:
        raise RepositoryError(f"{tip} has no root commit")
    return min(as_utc(datetime.fromisoformat(when)) for when in roots).date()


def read_commit_list(path: Path) -> list[ListedCommit]:
    """The commit list, all or nothing: a bad line is named with its number."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ChangesetError(f"{path}: cannot read the commit list: {exc}") from exc
    entries = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        entries.append(_listed(path, number, raw))
    return entries


def _listed(path: Path, number: int, raw: str) -> ListedCommit:
    where = f"{path}:{number}"
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ChangesetError(f"{where}: not JSON: {exc.msg}") from None
    error = jsonschema.exceptions.best_match(_LIST_VALIDATOR.iter_errors(data))
    if error is not None:
        raise ChangesetError(f"{where}: {error.message}")
    merged = data.get("merged_at")
    try:
        merged_at = datetime.fromisoformat(merged) if merged else None
    except ValueError:
        raise ChangesetError(f"{where}: merged_at {merged!r} is not an ISO date-time") from None
    if merged_at is not None and merged_at.tzinfo is None:
        raise ChangesetError(f"{where}: merged_at {merged!r} names no time zone")
    return ListedCommit(
        commit=data["commit"].lower(),
        pr=data.get("pr"),
        merged_at=merged_at,
        recipe=data.get("recipe"),
        model=data.get("model"),
    )
