"""Fixtures of the command-line tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from migration_evals.core.specs import SpecSet, load_specs
from tests.conftest import SPECS_DIR


def use_folder(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the commands in ``folder``, with their cache and database in it."""
    monkeypatch.setenv("MIGRATION_EVALS_CACHE_DIR", str(folder / "cache"))
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{folder / 'results.db'}")
    # The demo would go live on a machine with a Docker engine; these tests replay.
    monkeypatch.setenv("MIGRATION_EVALS_SANDBOX_MODE", "replay")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_folder(tmp_path, monkeypatch)


@pytest.fixture
def specs_dir(tmp_path: Path) -> Path:
    """The real specs, hypotheses registered long before the results the tests write."""
    folder = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, folder)
    for path in (folder / "hypotheses").glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        data["registered_at"] = "2000-01-01"
        path.write_text(yaml.safe_dump(data))
    return folder


@pytest.fixture
def gate_env(tmp_path: Path, specs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> SpecSet:
    """A database and those specs for the gate's commands, run in ``tmp_path``."""
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'results.db'}")
    monkeypatch.setenv("MIGRATION_EVALS_SPECS_DIR", str(specs_dir))
    monkeypatch.chdir(tmp_path)
    return load_specs(specs_dir)
