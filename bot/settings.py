"""Building the one ``Settings`` object from the environment and command-line overrides.

Variables are prefixed ``MIGRATION_EVALS_``; judge keys use the SDKs' own names
(``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``); ``DOCKER_HOST`` as the docker SDK reads it.
``MIGRATION_EVALS_AGENT_AUTHORS`` lists the pull-request authors that are agents, comma
separated, each optionally with the model it runs: ``codex-bot[bot]=gpt-5,fixer-bot``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from core.errors import ConfigError
from core.settings import CassetteMode, Settings

__all__ = ["PROJECT_ROOT", "settings_from_env"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "MIGRATION_EVALS_"


def _default_cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migration-evals"


def _mode(value: str) -> CassetteMode:
    try:
        return CassetteMode(value)
    except ValueError:
        choices = ", ".join(m.value for m in CassetteMode)
        raise ConfigError(f"{PREFIX}MODE={value!r} is not one of {choices}") from None


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{PREFIX}JOBS={value!r} must be a positive integer")
    return int(value)


def _agent_authors(value: str) -> dict[str, str]:
    authors: dict[str, str] = {}
    for item in value.split(","):
        login, _, model = (part.strip() for part in item.strip().partition("="))
        if not login:
            if item.strip():
                raise ConfigError(f"{PREFIX}AGENT_AUTHORS: {item.strip()!r} names no author")
            continue
        authors[login] = model
    return authors


def settings_from_env(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env

    def get(name: str, default: str) -> str:
        return env.get(PREFIX + name) or default

    return Settings(
        specs_dir=Path(get("SPECS_DIR", str(PROJECT_ROOT / "specs"))),
        cassette_dir=Path(get("CASSETTES_DIR", str(PROJECT_ROOT / "cassettes"))),
        cache_dir=Path(get("CACHE_DIR", str(_default_cache_dir(env)))),
        db_url=get("DB_URL", "sqlite:///./migration-evals.db"),
        mode=_mode(get("MODE", CassetteMode.REPLAY.value)),
        jobs=_jobs(get("JOBS", "1")),
        anthropic_api_key=env.get("ANTHROPIC_API_KEY") or None,
        openai_api_key=env.get("OPENAI_API_KEY") or None,
        docker_host=env.get("DOCKER_HOST") or None,
        github_api_url=get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
        github_token=env.get(PREFIX + "GITHUB_TOKEN") or None,
        agent_authors=_agent_authors(get("AGENT_AUTHORS", "")),
    )
