"""Composition for mining: the GitHub provider in each mode, mirrors, the grader, the store.

``--mode replay`` (the default) serves GitHub from ``cassettes/github``; ``record`` forwards
to ``MIGRATION_EVALS_GITHUB_API_URL`` and writes cassettes; ``live`` just calls it. The
grader runs the cascade over the same store, so gold verdicts land in the ledger too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Any

import requests
from github import Auth, Github

from bot.wiring import build_cascade
from core.cassette import CassetteLibrary
from core.clock import Clock, SystemClock, as_utc
from core.errors import ConfigError
from core.model import Changeset, Trial
from core.settings import CassetteMode, Settings
from core.specs import SpecSet
from core.store import Store
from miners import tables
from miners.clones import MirrorCache
from miners.funnel import Grader
from miners.github import GitHubProvider
from miners.github_cassettes import GitHubCassetteServer, RequestsUpstream
from oracles.cascade import Budget
from oracles.runner import Runner

__all__ = [
    "FixedClock",
    "github_client",
    "github_provider",
    "make_grader",
    "mirror_cache",
    "open_mining_store",
]

USER_AGENT = "migration-evals"


class FixedClock:
    """Labels as of a chosen time (``--as-of``); waiting still takes real time."""

    def __init__(self, at: datetime, sleeper: Clock | None = None) -> None:
        self.at = as_utc(at)
        self.sleeper = sleeper or SystemClock()

    def now(self) -> datetime:
        return self.at

    def sleep(self, seconds: float) -> None:
        self.sleeper.sleep(seconds)


def open_mining_store(settings: Settings) -> Store:
    return Store.open(settings.db_url, extra_metadata=[tables.metadata])


def mirror_cache(settings: Settings) -> MirrorCache:
    return MirrorCache(settings.cache_dir / "mirrors")


def github_client(base_url: str, token: str | None, *, polite: bool) -> Github:
    """A PyGithub client; rate limits are waited out by the provider, not by urllib3."""
    return Github(
        auth=Auth.Token(token) if token else None,
        base_url=base_url,
        user_agent=USER_AGENT,
        per_page=100,
        timeout=30,
        retry=None,
        # Pause between requests only towards the real API; replay answers locally.
        seconds_between_requests=0.25 if polite else None,
    )


@contextmanager
def github_provider(settings: Settings, clock: Clock | None = None) -> Iterator[GitHubProvider]:
    """The provider for ``settings.mode``; replay and record run a loopback server meanwhile."""
    clock = clock or SystemClock()
    if settings.mode is CassetteMode.LIVE:
        client = github_client(settings.github_app.api_url, settings.github_token, polite=True)
        with closing(client):
            yield GitHubProvider(client, clock=clock, agent_authors=settings.agent_authors)
        return
    cassettes = CassetteLibrary(settings.cassette_dir)
    upstream = None
    if settings.mode is CassetteMode.RECORD:
        upstream = RequestsUpstream(requests.Session(), settings.github_app.api_url)
    recording = upstream is not None
    with GitHubCassetteServer(cassettes, upstream=upstream) as server:
        token = settings.github_token if recording else None
        client = github_client(server.base_url, token, polite=recording)
        with closing(client):
            yield GitHubProvider(client, clock=clock, agent_authors=settings.agent_authors)


def make_grader(
    settings: Settings, store: Store, specs: SpecSet, options: Mapping[str, Any]
) -> Grader:
    """Grades through the cascade into ``store``.

    The cascade is built now, before any mining, so a mode it cannot serve fails at once
    instead of after an hour of labelling.
    """
    try:
        cascade = build_cascade(settings, store=store, specs=specs)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (or add --no-grade to label without grading)") from exc

    def grade(changesets: Sequence[Changeset]) -> list[Trial]:
        runner = Runner(cascade, store, jobs=settings.jobs)
        outcome = runner.run(
            list(changesets), budget=Budget(settings.budget_usd), options=dict(options)
        )
        return outcome.trials

    return grade
