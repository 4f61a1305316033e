"""Imports flow bot -> {gate, oracles, miners} -> core; nothing imports bot."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "oracles", "gate", "miners", "bot")
ALLOWED = {
    "core": set(),
    "oracles": {"core"},
    "gate": {"core"},
    "miners": {"core"},
    "bot": {"core", "oracles", "gate", "miners"},
}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_import_direction(package: str) -> None:
    offenders = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        wrong = _imported_packages(path) - ALLOWED[package] - {package}
        if wrong:
            offenders[str(path.relative_to(ROOT))] = sorted(wrong)
    assert offenders == {}


def test_nothing_below_bot_reads_the_environment() -> None:
    readers = [
        str(path.relative_to(ROOT))
        for package in ("core", "oracles", "gate", "miners")
        for path in (ROOT / package).rglob("*.py")
        if "os.environ" in path.read_text() or "getenv(" in path.read_text()
    ]
    # core/git.py only hands the process environment through to git (PATH, HOME,
    # credential helpers) with its no-prompt guards added; it reads no setting from it.
    assert readers == ["core/git.py"]
