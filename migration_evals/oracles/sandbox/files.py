"""The harness's reading of the dependency caches resolution runs wrote.

A resolution run's cache is a host folder written by untrusted code (its build files chose
the plugins that ran), so reading it follows no symbolic link, walks iteratively (no
recursion limit), stops at a number of entries, reads regular files only and, for jars,
only the zip directory, never the contents.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from migration_evals.oracles.folders import Walk, WalkLimits, remove_tree
from migration_evals.oracles.grading import path_matches

__all__ = ["WalkLimits", "jar_packages", "link_to_store", "regular_files", "remove_tree"]


def regular_files(root: Path, limits: WalkLimits | None = None) -> Iterator[tuple[str, str]]:
    """(relative path, full path) of the regular files under ``root``, depth first, in
    name order: iterative (no recursion limit), never following a symbolic link, and
    stopping at ``limits``. Entries that vanish or cannot be read are skipped."""
    for entry in Walk(root, limits or WalkLimits()):
        if entry.kind == "file":
            yield entry.relative, entry.path


def _matching(root: Path, patterns: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(relative path, full path) of regular files matching ``patterns``."""
    if not patterns:
        return
    for relative, full in regular_files(root):
        if path_matches(relative, patterns):
            yield relative, full


def jar_packages(root: Path, *, max_jars: int = 20_000, max_entries: int = 200_000) -> list[str]:
    """The Java packages of the classes in the jars under ``root`` (a local Maven
    repository a resolution run filled). Only the zip directories are read, never the
    contents, and links and oversized archives are skipped."""
    packages: set[str] = set()
    jars = 0
    for relative, full in _matching(root, ["**/*.jar"]):
        jars += 1
        if jars > max_jars:
            break
        try:
            with zipfile.ZipFile(full) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile, ValueError):
            continue  # not a jar the build could use either
        for name in names[:max_entries]:
            folder, _, leaf = name.rpartition("/")
            if leaf.endswith(".class") and folder and not folder.startswith("META-INF"):
                packages.add(folder.replace("/", "."))
        del relative
    return sorted(packages)


def link_to_store(folder: Path, store: Path) -> int:
    """Replace each file under ``folder`` that the store also has (same relative path)
    with a hard link to the store's copy; returns how many were linked.

    A resolution run's local repository holds what the registry gate served it from its
    store: linking keeps one copy on disk, and what builds read is what the registry sent,
    whatever the run wrote. Files of another file system, or that vanish, stay as they are.
    """
    linked = 0
    for relative, full in regular_files(folder):
        original = store / relative
        try:
            if not original.is_file() or original.is_symlink():
                continue
            temporary = f"{full}.me-link"
            os.link(original, temporary)
            os.replace(temporary, full)
        except OSError:
            continue
        linked += 1
    return linked
