"""Building the one ``Settings`` object from the environment and command-line overrides.

Variables are prefixed ``MIGRATION_EVALS_``; judge keys use the SDKs' own names
(``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``); ``DOCKER_HOST`` as the docker SDK reads it.
``MIGRATION_EVALS_SANDBOX_MODE`` sets the sandbox port apart from the others (e.g. record
sandbox runs while the judges replay).
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


def _mode(value: str, name: str = "MODE") -> CassetteMode:
    try:
        return CassetteMode(value)
    except ValueError:
        choices = ", ".join(m.value for m in CassetteMode)
        raise ConfigError(f"{PREFIX}{name}={value!r} is not one of {choices}") from None


def _sandbox_mode(env: Mapping[str, str]) -> CassetteMode | None:
    """An explicit sandbox mode, else an explicit general mode, else None (decide later)."""
    for name in ("SANDBOX_MODE", "MODE"):
        if env.get(PREFIX + name):
            return _mode(env[PREFIX + name], name)
    return None


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{PREFIX}JOBS={value!r} must be a positive integer")
    return int(value)


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
        sandbox_mode=_sandbox_mode(env),
        jobs=_jobs(get("JOBS", "1")),
        anthropic_api_key=env.get("ANTHROPIC_API_KEY") or None,
        openai_api_key=env.get("OPENAI_API_KEY") or None,
        docker_host=env.get("DOCKER_HOST") or None,
        apt_mirror=env.get(PREFIX + "APT_MIRROR") or None,
    )
