"""Fixtures of the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIGRATION_EVALS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'results.db'}")
    # The demo would go live on a machine with a Docker engine; these tests replay.
    monkeypatch.setenv("MIGRATION_EVALS_SANDBOX_MODE", "replay")
    monkeypatch.chdir(tmp_path)
    return tmp_path
