"""The documentation stays true to the code: the reference pages are what regenerating them
gives, every variable the settings read is documented, links and named files exist, and
the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migration_evals.bot.environment import VARIABLES
from scripts.gen_docs import out_of_step, render, stale, variables_read

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
README_MAX_LINES = 200
# Folders of the repository a page may name files in.
_FOLDERS = "core oracles gate miners bot specs examples benchmarks scripts docs tests cassettes"
_TOP = "(?:" + "|".join([*_FOLDERS.split(), r"\.ci", r"\.github"]) + ")"
_NAMED_FILE = re.compile(rf"`({_TOP}/[A-Za-z0-9_./+-]*[A-Za-z0-9_/])`")
# Files of the repositories being graded, and files the CI set-up writes: not in the tree.
_NOT_IN_TREE = {".github/migration-evals.yml", ".ci/services.env"}
_LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped,
    spaces as hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {
        re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        for heading in _HEADING.findall(text)
    }


def test_reference_pages_are_current() -> None:
    outdated = [str(path.relative_to(ROOT)) for path in stale(render())]
    assert outdated == [], f"not current, run `make docs`: {outdated}"


def test_the_pages_name_no_folder_of_this_machine() -> None:
    for path, text in render().items():
        for folder in {str(ROOT), str(Path.home())} - {"/"}:
            assert folder not in text, f"{path.name} names {folder}"


def test_every_variable_the_settings_read_is_documented() -> None:
    read, _ = variables_read()
    assert out_of_step() is None, out_of_step()
    assert sorted(read) == sorted(variable.name for variable in VARIABLES)


def test_a_changed_page_is_reported_stale(tmp_path: Path) -> None:
    page = tmp_path / "cli.md"
    page.write_text("old\n")
    assert stale({page: "new\n", tmp_path / "missing.md": "x\n"}) == [
        page,
        tmp_path / "missing.md",
    ]
    assert stale({page: "old\n"}) == []


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_links_between_pages_resolve(page: Path) -> None:
    broken = []
    for target, anchor in _LINK.findall(page.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        linked = (page.parent / target) if target else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}#{anchor}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_files_the_pages_name_exist(page: Path) -> None:
    missing = [
        name
        for name in _NAMED_FILE.findall(page.read_text())
        if not any(mark in name for mark in "*<")
        and name not in _NOT_IN_TREE
        and not (ROOT / name).exists()
        and not (ROOT / name.rstrip("/")).exists()
    ]
    assert missing == [], f"{page.name} names files that do not exist: {missing}"
