"""Hooks to survival mining (the miners package, issue 6): the bot's only calls into it.

On a merged agent PR the bot builds a ``MergedAgentPR`` (the same fields, in the same
order, as ``miners.tracking.TrackedPR``) and calls ``track_pr``; the nightly job calls
``refresh``. Until the miners package provides them these report that survival mining is
not installed, and the job says so in its result. Wiring them in after that lands:

- ``track_pr``: ``miners.tracking.track_pr(store, TrackedPR(**asdict(pr)))``
- ``refresh``: ``miners.survival.refresh(store, provider, clock)``
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from core.store import Store

__all__ = ["SURVIVAL_INSTALLED", "MergedAgentPR", "refresh", "track_pr"]

log = logging.getLogger(__name__)

SURVIVAL_INSTALLED = False


@dataclass(frozen=True, slots=True)
class MergedAgentPR:
    """A pull request handed to survival mining; mirrors ``miners.tracking.TrackedPR``."""

    repo: str
    number: int
    head_sha: str
    base_sha: str
    author: str
    is_agent: bool
    opened_at: datetime
    merged_at: datetime | None
    closed_at: datetime | None
    changeset_id: str | None


def track_pr(store: Store, pr: MergedAgentPR) -> str:
    """Register ``pr`` for 30-day survival mining; returns what happened, for the job log."""
    log.warning("survival mining is not installed; %s#%d is not tracked", pr.repo, pr.number)
    return f"not tracked: survival mining is not installed ({pr.repo}#{pr.number})"


def refresh(store: Store, provider: object, clock: Callable[[], datetime]) -> str:
    """The nightly survival-mining pass; returns what happened, for the log."""
    log.warning("survival mining is not installed; nightly refresh skipped")
    return "skipped: survival mining is not installed"
