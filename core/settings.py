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
    jobs: int = 1
    budget_usd: float | None = None
    strict_judge: bool = False
    # Secrets and service locations for the live adapters; never written to cassettes.
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None  # None: the SDK's own default endpoint
    openai_base_url: str | None = None
    docker_host: str | None = None

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
