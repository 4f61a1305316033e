"""Walking and deleting hostile folders: no recursion, no link followed, bounded, and
gone afterwards whatever was in them."""

from __future__ import annotations

import os
import socket
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from migration_evals.oracles import folders
from migration_evals.oracles.folders import Walk, WalkLimits, remove_small_tree, remove_tree
from tests.conftest import PAST_PATH_MAX, PAST_RECURSION, bind_unix_socket, deep_chain


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    """A folder for a hostile tree, removed with ``remove_tree`` and checked gone."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    yield folder
    remove_tree(folder)
    assert not folder.exists()


def _kinds(walk: Walk) -> dict[str, str]:
    return {entry.relative: entry.kind for entry in walk}


def test_a_chain_deeper_than_python_recurses_is_walked_to_its_depth_limit(
    chain_past_recursion: Path,
) -> None:
    walk = Walk(chain_past_recursion)
    found = [entry for entry in walk if entry.kind == "file"]
    assert [entry.relative.count("/") for entry in found] == [PAST_RECURSION]
    assert walk.cut == ""
    capped = Walk(chain_past_recursion, WalkLimits(max_depth=10))
    assert max(entry.depth for entry in capped) == 10
    assert capped.cut == "10 folders deep"


def test_a_chain_past_the_longest_path_is_cut_where_paths_end_and_removed(
    hostile: Path,
) -> None:
    deep_chain(hostile, PAST_PATH_MAX)
    walk = Walk(hostile, WalkLimits(max_depth=2 * PAST_PATH_MAX))
    deepest = max(entry.depth for entry in walk)
    # Past the longest path the kernel takes, a folder cannot be listed: said, not raised.
    assert deepest < PAST_PATH_MAX
    assert walk.unreadable and walk.unreadable[0].count("/") == deepest


def test_many_entries_stop_the_walk_with_little_memory(hostile: Path) -> None:
    for index in range(2_000):
        (hostile / f"e{index:05d}").touch()
    tracemalloc.start()
    try:
        walk = Walk(hostile, WalkLimits(max_entries=100))
        count = sum(1 for _ in walk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 100
    assert walk.cut == "100 entries"
    # One folder of 2,000 is never listed whole: that takes over 400 KB, a walk of 100 of
    # its entries about 25 KB.
    assert peak < 100_000


def test_fifos_sockets_and_links_are_named_never_opened_or_followed(
    hostile: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    os.mkfifo(hostile / "fifo")
    with socket.socket(socket.AF_UNIX) as server:
        bind_unix_socket(server, hostile / "socket")
        (hostile / "to-outside").symlink_to(outside)
        (hostile / "loop").symlink_to(hostile / "loop")
        (hostile / "a").mkdir()
        (hostile / "a" / "up").symlink_to(hostile)
        assert _kinds(Walk(hostile)) == {
            "a": "dir",
            "a/up": "link",
            "fifo": "other",
            "loop": "link",
            "socket": "other",
            "to-outside": "link",
        }
    remove_tree(hostile / "a")
    assert (outside / "secret").read_text() == "s"  # a link removed, not what it points at


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_reported_and_still_removed(hostile: Path) -> None:
    (hostile / "closed" / "inner").mkdir(parents=True)
    (hostile / "closed" / "inner" / "file").write_text("x")
    (hostile / "closed").chmod(0)
    walk = Walk(hostile)
    assert [entry.relative for entry in walk] == ["closed"]
    assert walk.unreadable == ["closed"]
    remove_tree(hostile / "closed")
    assert not (hostile / "closed").exists()


def test_remove_tree_opens_up_folders_without_permissions(hostile: Path) -> None:
    deep_chain(hostile / "chain", PAST_PATH_MAX)
    (hostile / "locked" / "inner").mkdir(parents=True)
    (hostile / "locked" / "inner" / "file").write_text("x")
    (hostile / "locked" / "inner").chmod(0)
    (hostile / "locked").chmod(0o500)
    os.mkfifo(hostile / "fifo")
    remove_tree(hostile)
    assert not hostile.exists()
    hostile.mkdir()  # for the fixture's own check


def test_remove_tree_of_a_link_removes_the_link_only(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("k")
    (tmp_path / "link").symlink_to(target)
    remove_tree(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink()
    assert (target / "kept").read_text() == "k"


def _tree_linking_out(tmp_path: Path) -> tuple[Path, Path]:
    """A small tree (a file two folders down) with a link to a folder outside it."""
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("k")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "file").write_text("x")
    (tree / "a" / "out").symlink_to(target)
    return tree, target


def test_a_small_tree_is_removed_without_following_its_links(tmp_path: Path) -> None:
    tree, target = _tree_linking_out(tmp_path)
    os.mkfifo(tree / "fifo")
    remove_small_tree(tree)
    assert not tree.exists()
    assert (target / "kept").read_text() == "k"
    remove_small_tree(tmp_path / "link-free and absent")  # nothing to do, no error


def test_a_small_tree_already_walked_is_removed_from_that_walk(tmp_path: Path) -> None:
    tree, target = _tree_linking_out(tmp_path)
    remove_small_tree(tree, list(Walk(tree)))
    assert not tree.exists()
    assert (target / "kept").read_text() == "k"


def test_a_walked_tree_past_the_small_limits_is_removed_all_the_same(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    deep_chain(tree, 100)
    remove_small_tree(tree, list(Walk(tree)))
    assert not tree.exists()


def test_a_tree_too_deep_or_closed_for_the_small_removal_is_removed_all_the_same(
    hostile: Path,
) -> None:
    deep_chain(hostile / "chain", 2 * folders._SMALL.max_depth)
    (hostile / "locked" / "inner").mkdir(parents=True)
    (hostile / "locked" / "inner" / "file").write_text("x")
    (hostile / "locked").chmod(0o500)
    remove_small_tree(hostile)
    assert not hostile.exists()
    hostile.mkdir()  # for the fixture's own check


def test_the_small_removal_of_a_link_removes_the_link_only(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("k")
    (tmp_path / "link").symlink_to(target)
    remove_small_tree(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink()
    assert (target / "kept").read_text() == "k"
