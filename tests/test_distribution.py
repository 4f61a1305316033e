"""The distribution installs one top-level package, ``migration_evals``: a wheel is built
from a copy of the project (pip, without build isolation, so offline) and its contents read.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "migration_evals")


def _copy_project(to: Path) -> None:
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, to / name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    project = tmp_path_factory.mktemp("project")
    out = tmp_path_factory.mktemp("wheel")
    _copy_project(project)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*command, "--quiet", "-w", str(out), str(project)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("migration_evals-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_installs_one_top_level_package(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    tops = {top for top in tops if not top.endswith((".dist-info", ".data"))}
    assert tops == {"migration_evals"}


def test_the_wheel_carries_the_code_the_cli_needs(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for needed in (
        "migration_evals/bot/cli.py",
        "migration_evals/core/migrations/versions",
        "migration_evals/gate/report/templates",
    ):
        assert any(name.startswith(needed) for name in names), needed
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(entry_points).decode()
    assert "migration-evals = migration_evals.bot.cli:command_line" in text


def test_the_deployment_image_copies_the_package_it_runs() -> None:
    """docs/Dockerfile runs the code from the checkout (PYTHONPATH): it must copy the one
    package, and its entry point must be a module of it."""
    lines = (ROOT / "docs" / "Dockerfile").read_text().splitlines()
    copied = {line.split()[1] for line in lines if line.startswith("COPY ")}
    assert "migration_evals" in copied
    (entry,) = (line for line in lines if line.startswith("ENTRYPOINT"))
    module = entry.split('"-m", "')[1].split('"')[0]
    assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file(), module
