"""Composition for mining: the GitHub provider in each mode, mirrors, git sources, the
agents spec, the grader, the store.

``--mode replay`` (the default) serves GitHub from ``cassettes/github``; ``record`` calls
``MIGRATION_EVALS_GITHUB_API_URL`` and writes cassettes; ``live`` just calls it. The
grader runs the cascade over the same store, so gold verdicts land in the ledger too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from migration_evals.bot import grading
from migration_evals.bot.grading import Grading
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.plan import plan_of
from migration_evals.core.changesets import is_remote_url
from migration_evals.core.clock import Clock, SystemClock, as_utc
from migration_evals.core.errors import ChangesetProviderError, ConfigError
from migration_evals.core.github import GitHubApi
from migration_evals.core.github.modes import transport_for
from migration_evals.core.model import Changeset, Trial
from migration_evals.core.settings import CassetteMode, Executor, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.miners.agents import Agents
from migration_evals.miners.clones import MirrorCache, branch_ref, find_git_dir, repository_name
from migration_evals.miners.funnel import Grader
from migration_evals.miners.git_gold import GitSource
from migration_evals.miners.github import GitHubProvider

__all__ = [
    "FixedClock",
    "git_source",
    "github_api",
    "github_provider",
    "load_agents",
    "make_grader",
    "mirror_cache",
    "open_mining_store",
]


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
    return open_store(settings)


def mirror_cache(settings: Settings) -> MirrorCache:
    return MirrorCache(settings.cache_dir / "mirrors")


def load_agents(settings: Settings, specs: SpecSet) -> Agents:
    """The agents spec, plus the deployment's own (``MIGRATION_EVALS_AGENT_AUTHORS``)."""
    return Agents.load(specs.root / "agents.yaml", settings.agent_authors)


def git_source(
    settings: Settings,
    location: str,
    *,
    branch: str | None = None,
    name: str | None = None,
    agents: Agents | None = None,
) -> GitSource:
    """A repository to mine with git alone: a URL is mirrored into the cache, a path on
    disk (a clone, a mirror, or a folder holding one) is read where it is."""
    if is_remote_url(location):
        git_dir, where = mirror_cache(settings).mirror(location), location
    else:
        git_dir = find_git_dir(Path(location).expanduser().resolve())
        where = str(git_dir)
    return GitSource(
        git_dir=git_dir,
        name=name or repository_name(location, git_dir),
        location=where,
        tip=branch_ref(git_dir, branch),
        agents_stamp=agents.stamp if agents else "",
    )


def github_api(settings: Settings) -> GitHubApi:
    """The GitHub client for ``settings.mode``: the API, the API recorded into cassettes,
    or the cassettes alone. Rate limits are waited out by the provider, not by urllib3;
    requests to the real API are spaced ``github_request_interval_s`` apart."""
    transport = transport_for(
        settings.mode,
        base_url=settings.github_app.api_url,
        cassette_dir=settings.cassette_dir,
        recorded_by="migration-evals mine --mode record",
        seconds_between_requests=settings.github_request_interval_s,
    )
    token = settings.github_token
    return GitHubApi(
        transport,
        base_url=settings.github_app.api_url,
        credentials=lambda: f"token {token}" if token else None,
        clock=time.time,
    )


_AUTH_VARIABLE = "MIGRATION_EVALS_GITHUB_TOKEN"

log = logging.getLogger(__name__)


def github_advice(settings: Settings, problem: str) -> str:
    """What to do about a GitHub problem in this mode: a replay that has no recording needs
    the live API (and a token); a live API that refuses or limits needs a token."""
    if settings.mode is CassetteMode.REPLAY:
        token = "" if settings.github_token else f" with {_AUTH_VARIABLE} set"
        return (
            "nothing is recorded for this query: ask the live API with --mode live (or "
            f"--mode record to keep cassettes){token}; add --no-grade to label without the "
            "live judges, or label with git alone: mine gold --git PATH_OR_URL"
        )
    if problem.startswith("cannot reach GitHub"):
        return "check the network (or MIGRATION_EVALS_GITHUB_API_URL for GitHub Enterprise)"
    if settings.github_token:
        return f"check the names asked for, and that the token in {_AUTH_VARIABLE} can read them"
    return (
        f"without {_AUTH_VARIABLE} GitHub allows 60 requests an hour and no private "
        "repository: set it to a token that can read the repositories"
    )


@contextmanager
def github_provider(settings: Settings, clock: Clock | None = None) -> Iterator[GitHubProvider]:
    """The provider for ``settings.mode`` (``github_api``). A GitHub problem that ends the
    command leaves with what to do about it."""
    if settings.mode is not CassetteMode.REPLAY and not settings.github_token:
        log.warning(
            "%s is not set: GitHub allows 60 requests an hour without a token", _AUTH_VARIABLE
        )
    try:
        with _provider(settings, clock or SystemClock()) as provider:
            yield provider
    except ChangesetProviderError as exc:
        raise ChangesetProviderError(f"{exc}; {github_advice(settings, str(exc))}") from exc


@contextmanager
def _provider(settings: Settings, clock: Clock) -> Iterator[GitHubProvider]:
    api = github_api(settings)
    try:
        yield GitHubProvider(api, clock=clock, agent_authors=settings.agent_authors)
    finally:
        api.transport.close()


def make_grader(
    settings: Settings, store: Store, specs: SpecSet, options: Mapping[str, Any]
) -> Grader:
    """Grades through the cascade of the settings' plan into ``store``.

    The cascade is built now, before any mining, so a mode it cannot serve fails at once
    instead of after an hour of labelling.
    """
    # Mining grades in this process: its store has no trial-job tables for workers.
    plan = replace(plan_of(settings, specs), executor=Executor.EMBEDDED)
    where = Grading.of(settings, store, specs)
    try:
        where.cascades.for_plan(plan)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (or add --no-grade to label without grading)") from exc

    def grade(changesets: Sequence[Changeset]) -> list[Trial]:
        return grading.grade(plan, changesets, where, options=options).trials

    return grade
