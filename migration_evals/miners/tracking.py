"""Tracked pull requests: the agent PRs the bot graded, followed until their label is final.

The bot calls ``track_pr`` whenever it sees a pull request (opened, synchronised, closed,
merged); calling it again for the same (repo, number) updates the merge state rather than
adding a row. ``migration_evals.miners.survival.refresh`` reads these rows every night.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from migration_evals.core.clock import as_utc
from migration_evals.core.database import Database
from migration_evals.core.ledger import Ledger
from migration_evals.core.ports import PullRequestInfo
from migration_evals.core.records import TRACKED_PR
from migration_evals.core.schema import tracked_prs_table

__all__ = ["TrackedPR", "note_check", "track_pr", "tracked_pr", "tracked_prs"]

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
# Set once known and never forgotten: a later event that lacks them must not erase them.
_STICKY = ("changeset_id", "merge_commit_sha")


def _iso(value: datetime | None) -> str | None:
    return as_utc(value).isoformat() if value is not None else None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass(frozen=True, slots=True)
class TrackedPR:
    """One agent-authored (or at least bot-graded) pull request and its merge state."""

    repo: str  # "owner/name"
    number: int
    head_sha: str
    base_sha: str
    author: str
    is_agent: bool
    opened_at: datetime
    merged_at: datetime | None
    closed_at: datetime | None
    changeset_id: str | None
    merge_commit_sha: str | None = None

    def __post_init__(self) -> None:
        if not _REPO.match(self.repo):
            raise ValueError(f"repo must look like 'owner/name', not {self.repo!r}")
        if self.number < 1:
            raise ValueError(f"pull request number must be positive, not {self.number}")

    @property
    def key(self) -> str:
        return f"{self.repo}#{self.number}"

    @classmethod
    def from_info(cls, info: PullRequestInfo, changeset_id: str | None = None) -> TrackedPR:
        return cls(
            repo=info.repo,
            number=info.number,
            head_sha=info.head_sha,
            base_sha=info.base_sha,
            author=info.author,
            is_agent=info.is_agent,
            opened_at=info.created_at,
            merged_at=info.merged_at,
            closed_at=info.closed_at,
            changeset_id=changeset_id,
            merge_commit_sha=info.merge_commit_sha,
        )

    def to_row(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "number": self.number,
            "head_sha": self.head_sha,
            "base_sha": self.base_sha,
            "author": self.author,
            "is_agent": self.is_agent,
            "opened_at": _iso(self.opened_at),
            "merged_at": _iso(self.merged_at),
            "closed_at": _iso(self.closed_at),
            "changeset_id": self.changeset_id,
            "merge_commit_sha": self.merge_commit_sha,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TrackedPR:
        opened = _parse(row["opened_at"])
        assert opened is not None
        return cls(
            repo=row["repo"],
            number=int(row["number"]),
            head_sha=row["head_sha"],
            base_sha=row["base_sha"],
            author=row["author"],
            is_agent=bool(row["is_agent"]),
            opened_at=opened,
            merged_at=_parse(row["merged_at"]),
            closed_at=_parse(row["closed_at"]),
            changeset_id=row["changeset_id"],
            merge_commit_sha=row["merge_commit_sha"],
        )


def _where(repo: str, number: int) -> sa.ColumnElement[bool]:
    return (tracked_prs_table.c.repo == repo) & (tracked_prs_table.c.number == number)


def _insert_new(ledger: Ledger, conn: Connection, row: Mapping[str, Any]) -> bool:
    """Insert ``row``; False when another writer inserted the same PR first."""
    try:
        with conn.begin_nested():
            conn.execute(tracked_prs_table.insert().values(**row))
    except IntegrityError:
        return False
    ledger.record(conn, TRACKED_PR, row)
    return True


def track_pr(ledger: Ledger, pr: TrackedPR) -> None:
    """Register ``pr``, or update its head, merge state and changeset if already tracked."""
    row = pr.to_row()
    where = _where(pr.repo, pr.number)
    with ledger.writing() as conn:
        exists = conn.execute(sa.select(tracked_prs_table.c.repo).where(where)).first()
        if exists is None and _insert_new(ledger, conn, row):
            return
        changes = {k: v for k, v in row.items() if k not in ("repo", "number")}
        for name in _STICKY:
            if changes[name] is None:
                del changes[name]
        conn.execute(tracked_prs_table.update().where(where).values(**changes))
        ledger.record(conn, TRACKED_PR, row)


def tracked_pr(db: Database, repo: str, number: int) -> TrackedPR | None:
    query = sa.select(tracked_prs_table).where(_where(repo, number))
    with db.reading() as conn:
        row = conn.execute(query).mappings().first()
    return TrackedPR.from_row(dict(row)) if row is not None else None


def tracked_prs(db: Database, *, agents_only: bool = False) -> list[TrackedPR]:
    """Every tracked PR, in (repo, number) order."""
    query = sa.select(tracked_prs_table).order_by(
        tracked_prs_table.c.repo, tracked_prs_table.c.number
    )
    if agents_only:
        query = query.where(tracked_prs_table.c.is_agent.is_(True))
    with db.reading() as conn:
        return [TrackedPR.from_row(dict(row)) for row in conn.execute(query).mappings()]


def note_check(ledger: Ledger, pr: TrackedPR, at: datetime, error: str | None = None) -> None:
    """Remember when the nightly refresh last looked at ``pr`` and what went wrong, if anything."""
    values = {"last_checked_at": _iso(at), "last_error": error}
    with ledger.writing() as conn:
        conn.execute(tracked_prs_table.update().where(_where(pr.repo, pr.number)).values(**values))
        ledger.record(conn, TRACKED_PR, {"repo": pr.repo, "number": pr.number})
