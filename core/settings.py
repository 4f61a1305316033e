"""The one frozen settings object. Built in ``bot/`` (from the environment and the command
line) and passed down; nothing below ``bot/`` reads the environment itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

__all__ = ["CassetteMode", "Settings"]


class CassetteMode(StrEnum):
    """How ports with cassettes behave: replay recordings, record live calls, or go live."""

    REPLAY = "replay"
    RECORD = "record"
    LIVE = "live"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything configurable about a run or a server, resolved once."""

    specs_dir: Path
    cassette_dir: Path
    cache_dir: Path
    db_url: str = "sqlite:///./migration-evals.db"
    mode: CassetteMode = CassetteMode.REPLAY
    jobs: int = 1
    budget_usd: float | None = None
    strict_judge: bool = False
    # Secrets and service locations for the live adapters; never written to cassettes.
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)
    docker_host: str | None = None
    # Mining: the GitHub REST API root (GitHub Enterprise, or a local server in tests), its
    # token, and which pull-request authors are agents (login -> model id, "" if unknown).
    github_api_url: str = "https://api.github.com"
    github_token: str | None = field(default=None, repr=False)
    agent_authors: Mapping[str, str] = field(default_factory=dict)

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
