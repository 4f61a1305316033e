"""The one frozen settings object. Built in ``bot/`` (from the environment and the command
line) and passed down; nothing below ``bot/`` reads the environment itself."""

from __future__ import annotations

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
    # The sandbox port's own mode; None follows ``mode`` (the demo picks live or replay
    # itself, depending on whether a Docker engine with the images is reachable).
    sandbox_mode: CassetteMode | None = None
    jobs: int = 1
    budget_usd: float | None = None
    strict_judge: bool = False
    # Secrets and service locations for the live adapters; never written to cassettes.
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)
    docker_host: str | None = None
    apt_mirror: str | None = None  # for building images; default: the host's apt sources

    @property
    def effective_sandbox_mode(self) -> CassetteMode:
        return self.sandbox_mode or self.mode

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
