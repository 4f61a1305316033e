"""Reading a sandbox's tree copy back: no links followed, nothing outside, capped."""

from __future__ import annotations

import os
from pathlib import Path

from oracles.sandbox.files import collect_text, file_heads, prepare_tree, tree_bytes


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    reports = root / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-a.xml").write_text("<testsuite/>")
    (reports / "notes.txt").write_text("not a report")
    secret = tmp_path / "host-secret"
    secret.write_text("root:x:0:0")
    (reports / "TEST-link.xml").symlink_to(secret)
    (root / "target" / "linked").symlink_to(tmp_path)
    return root


def test_collect_reads_matching_regular_files_only(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    found = collect_text(root, ["target/surefire-reports/TEST-*.xml"], per_file=100, total=1000)
    assert found == {"target/surefire-reports/TEST-a.xml": "<testsuite/>"}


def test_collect_never_descends_into_linked_directories(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    found = collect_text(root, ["**/*"], per_file=100, total=1000)
    assert "root:x" not in "".join(found.values())
    assert not any(path.startswith("target/linked") for path in found)


def test_collect_caps_each_file_and_the_total(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.xml").write_text("x" * 50)
    (root / "b.xml").write_text("y" * 50)
    found = collect_text(root, ["*.xml"], per_file=20, total=30)
    assert found["a.xml"] == "x" * 20 + "\n[truncated]"
    assert found["b.xml"] == "y" * 10 + "\n[truncated]"


def test_file_heads_are_hex_of_the_first_bytes(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "target" / "classes").mkdir(parents=True)
    (root / "target" / "classes" / "A.class").write_bytes(bytes.fromhex("cafebabe0000003d") + b"x")
    (root / "target" / "classes" / "B.class").symlink_to(tmp_path / "elsewhere")
    heads = file_heads(root, ["**/target/classes/**/*.class"])
    assert heads == {"target/classes/A.class": "cafebabe0000003d"}


def test_tree_bytes_counts_until_the_limit(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    for n in range(4):
        (root / f"f{n}").write_bytes(os.urandom(64 * 1024))
    assert tree_bytes(root, 10**9) >= 4 * 64 * 1024
    assert tree_bytes(root, 1024) <= 2 * 64 * 1024 + 8192


def test_prepare_does_nothing_unless_root(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = os.stat(root).st_uid
    prepare_tree(root, 65534, 65534, as_root=False)
    assert os.stat(root).st_uid == before
