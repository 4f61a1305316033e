"""From a pull request to a ``Changeset``: its base sha, head sha, diff and the repo config.

The bot owns no grading logic: it only turns what GitHub says about a PR into the same
``Changeset`` the command line reads from JSONL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from bot.app.repo_config import AgentRule, RecipeRule
from core.model import Changeset
from oracles.diffscreen import diff_sections

__all__ = ["PullInfo", "changeset_for", "filter_diff", "parse_time", "pull_info"]


@dataclass(frozen=True, slots=True)
class PullInfo:
    """The parts of a pull request (REST or webhook shape) the bot uses."""

    repo: str
    number: int
    head_sha: str
    base_sha: str
    author: str
    labels: tuple[str, ...]
    branch: str
    title: str
    state: str
    merged: bool
    clone_url: str
    repo_created_at: date | None
    html_url: str
    opened_at: datetime
    merged_at: datetime | None
    closed_at: datetime | None
    merge_commit_sha: str | None = None


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def pull_info(data: Mapping[str, Any]) -> PullInfo:
    base_repo = data["base"]["repo"]
    created = parse_time(base_repo.get("created_at"))
    opened = parse_time(data.get("created_at"))
    return PullInfo(
        repo=str(base_repo["full_name"]),
        number=int(data["number"]),
        head_sha=str(data["head"]["sha"]),
        base_sha=str(data["base"]["sha"]),
        author=str((data.get("user") or {}).get("login", "")),
        labels=tuple(str(label["name"]) for label in data.get("labels") or ()),
        branch=str(data["head"].get("ref", "")),
        title=str(data.get("title", "")),
        state=str(data.get("state", "")),
        merged=bool(data.get("merged")),
        clone_url=str(base_repo.get("clone_url", "")),
        repo_created_at=created.date() if created else None,  # unknown, never invented
        html_url=str(data.get("html_url", "")),
        opened_at=opened or datetime.fromtimestamp(0).astimezone(),
        merged_at=parse_time(data.get("merged_at")),
        closed_at=parse_time(data.get("closed_at")),
        merge_commit_sha=data.get("merge_commit_sha") or None,
    )


def filter_diff(diff: str, skip: Callable[[str], bool]) -> str:
    """``diff`` without the file sections that ``skip`` accepts on every path they name.

    A rename or copy across the boundary (a test moved into ``vendor/``, code moved out of
    it) names one path outside it, so it stays and is graded. The sections come from the
    diff parser tier 1 uses; a diff it cannot read is left whole, for tier 1 to refuse.
    """
    raw = diff.encode("utf-8", "surrogateescape")
    split = diff_sections(raw)
    if split is None:
        return diff
    preamble, sections = split
    kept = [s.text for s in sections if not all(skip(p) for p in s.change.paths())]
    return b"".join([preamble, *kept]).decode("utf-8", "surrogateescape")


def changeset_for(
    pull: PullInfo, diff: str, agent: AgentRule, rule: RecipeRule, *, base_commit: str
) -> Changeset:
    return Changeset(
        id=f"{pull.repo}/pull/{pull.number}@{pull.head_sha[:12]}",
        repo=pull.clone_url,
        base_commit=base_commit,
        patch=diff,
        recipe=rule.recipe,
        model=agent.model,
        repo_created_at=pull.repo_created_at,
        recipe_params=dict(rule.params),
        source=pull.html_url or None,
    )
