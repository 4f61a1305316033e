"""Reading the dependency caches resolution runs wrote: hostile folders cannot hurt it."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from migration_evals.oracles.sandbox.files import (
    WalkLimits,
    jar_packages,
    link_to_store,
    regular_files,
    remove_tree,
)
from tests.conftest import PAST_PATH_MAX, PAST_RECURSION, deep_chain


def _jar(path: Path, names: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, b"x")


def test_regular_files_are_listed_without_following_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("1")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "file").write_text("f")
    (tmp_path / "tree" / "to-outside").symlink_to(tmp_path / "outside")
    (tmp_path / "tree" / "to-file").symlink_to(tmp_path / "outside" / "secret")
    os.mkfifo(tmp_path / "tree" / "fifo")
    found = [relative for relative, _ in regular_files(tmp_path / "tree")]
    assert found == ["file"]


@pytest.fixture
def chain_folder(tmp_path: Path) -> Iterator[Path]:
    """Where a test builds a deep chain; removed with ``remove_tree`` (pytest's own clean-up
    recurses and would fail on it)."""
    yield tmp_path / "chain"
    remove_tree(tmp_path / "chain")
    assert not (tmp_path / "chain").exists()


def test_a_chain_deeper_than_the_recursion_limit_is_walked_and_capped(
    chain_past_recursion: Path,
) -> None:
    assert [r.count("/") for r, _ in regular_files(chain_past_recursion)] == [PAST_RECURSION]
    assert list(regular_files(chain_past_recursion, WalkLimits(max_depth=10))) == []


def test_a_chain_past_the_longest_path_is_left_unread_and_still_removed(
    chain_folder: Path,
) -> None:
    deep_chain(chain_folder, PAST_PATH_MAX)
    (chain_folder / "top").write_text("t")
    assert [r for r, _ in regular_files(chain_folder)] == ["top"]


def test_the_entry_limit_stops_the_walk(tmp_path: Path) -> None:
    for index in range(50):
        (tmp_path / f"f{index:02d}").write_text("x")
    assert len(list(regular_files(tmp_path, WalkLimits(max_entries=10)))) == 10


def test_jar_packages_read_only_the_zip_directory(tmp_path: Path) -> None:
    _jar(tmp_path / "repository/junit/junit.jar", ["org/junit/Assert.class", "META-INF/x.class"])
    _jar(tmp_path / "repository/lib/lib.jar", ["com/acme/util/Strings.class", "README.txt"])
    (tmp_path / "repository/broken.jar").write_bytes(b"not a zip")
    (tmp_path / "repository/linked.jar").symlink_to(tmp_path / "repository/lib/lib.jar")
    assert jar_packages(tmp_path) == ["com.acme.util", "org.junit"]


def test_files_the_store_has_become_links_to_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    cache = tmp_path / "cache"
    for root, content in ((store, b"from the registry"), (cache, b"rewritten by the run")):
        (root / "g/a/1").mkdir(parents=True)
        (root / "g/a/1/a-1.jar").write_bytes(content)
    (cache / "g/a/1/_remote.repositories").write_text("only here")
    assert link_to_store(cache, store) == 1
    assert (cache / "g/a/1/a-1.jar").read_bytes() == b"from the registry"
    assert os.stat(cache / "g/a/1/a-1.jar").st_ino == os.stat(store / "g/a/1/a-1.jar").st_ino
    assert (cache / "g/a/1/_remote.repositories").read_text() == "only here"
    assert not any(name.endswith(".me-link") for name in os.listdir(cache / "g/a/1"))
