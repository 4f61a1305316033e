"""Fixtures of the command-line tests."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from migration_evals.bot.cli import main
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.registry import load_specs
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


@dataclass(frozen=True)
class DemoRun:
    """``migration-evals demo --jobs 2`` as run in ``folder`` with ``env``'s settings (the
    sandbox replaying, as asked), and what it printed: its tables on stdout, what it said
    on stderr. It exited 0."""

    folder: Path
    printed: str
    told: str

    def document(self) -> dict[str, Any]:
        """The results it wrote in ``folder`` (the document ``--json`` prints)."""
        written: dict[str, Any] = json.loads(
            (self.folder / "migration-evals-demo.json").read_text()
        )
        return written


@pytest.fixture(scope="session")
def graded_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo run once (per worker): a demo takes about a second of CPU. Tests of what
    it printed read this run; those of what follows a demo start from a copy of its folder
    (``demo_graded``); a test of another kind of demo run runs its own."""
    folder = tmp_path_factory.mktemp("graded-demo")
    printed, told = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        use_folder(folder, patch)
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(told):
            code = main(["demo", "--jobs", "2"])
    assert code == 0, f"the shared demo run failed:\n{told.getvalue()}"
    return DemoRun(folder, printed.getvalue(), told.getvalue())


@pytest.fixture
def demo_graded(graded_demo: DemoRun, env: Path) -> Path:
    """``env`` after a ``demo`` run: its database, artifacts, cache and results are a copy
    of ``graded_demo``'s."""
    shutil.copytree(graded_demo.folder, env, dirs_exist_ok=True)
    return env


@pytest.fixture
def specs_dir(tmp_path: Path) -> Path:
    """The real specs, hypotheses registered long before the results the tests write."""
    folder = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, folder)
    for path in (folder / "hypotheses").glob("*.yaml"):
        data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)  # libyaml: a tenth the time
        data["registered_at"] = "2000-01-01"
        path.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper))
    return folder


@pytest.fixture
def gate_env(tmp_path: Path, specs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> SpecSet:
    """A database and those specs for the gate's commands, run in ``tmp_path``."""
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'results.db'}")
    monkeypatch.setenv("MIGRATION_EVALS_SPECS_DIR", str(specs_dir))
    monkeypatch.chdir(tmp_path)
    return load_specs(specs_dir)
