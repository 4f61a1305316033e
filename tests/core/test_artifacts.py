"""Artifacts: content-addressed, compressed, capped with the cut said, where the store is."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from migration_evals.core.artifacts import (
    ArtifactError,
    ArtifactKind,
    ArtifactRef,
    FolderArtifacts,
    HeldArtifacts,
    TableArtifacts,
    artifacts_folder,
    prepare,
)
from migration_evals.core.store import Store


def test_an_artifact_is_named_by_the_digest_of_what_it_keeps(tmp_path: Path) -> None:
    found = FolderArtifacts(tmp_path / "a")
    text = b"[INFO] BUILD SUCCESS\n" * 100
    ref = found.put(text, ArtifactKind.LOG)
    assert ref.sha256 == hashlib.sha256(text).hexdigest()
    assert (ref.size, ref.source_bytes, ref.truncated) == (len(text), len(text), False)
    stored = tmp_path / "a" / ref.sha256[:2] / f"{ref.sha256}.gz"
    assert len(stored.read_bytes()) < len(text)  # compressed
    assert gzip.decompress(stored.read_bytes()) == text
    assert found.get(ref.sha256) == text
    assert found.get("0" * 64) is None


def test_a_text_over_the_cap_is_cut_and_says_so_inside_and_in_its_ref() -> None:
    ref, kept = prepare(b"x" * 500, ArtifactKind.LOG, cap=200)
    assert len(kept) == 200 == ref.size
    assert kept.endswith(b"\n[artifact truncated at 200 bytes of 500]\n")
    assert ref.truncated and ref.source_bytes == 500 and ref.cap_bytes == 200
    assert ArtifactRef.from_dict(ref.to_dict()) == ref


def test_a_changed_artifact_is_refused_not_shown(tmp_path: Path) -> None:
    found = FolderArtifacts(tmp_path)
    ref = found.put(b"the patch", ArtifactKind.PATCH)
    path = tmp_path / ref.sha256[:2] / f"{ref.sha256}.gz"
    path.write_bytes(gzip.compress(b"another patch"))
    with pytest.raises(ArtifactError, match="does not match its digest"):
        found.get(ref.sha256)


def test_a_sqlite_file_keeps_them_in_a_folder_beside_it(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    try:
        assert isinstance(store.artifacts, FolderArtifacts)
        assert store.artifacts.location == str(tmp_path / "results.db.artifacts")
        ref = store.artifacts.put(b"diff --git a/x b/x\n", ArtifactKind.PATCH)
        assert (artifacts_folder(tmp_path / "results.db") / ref.sha256[:2]).is_dir()
    finally:
        store.close()


def test_other_databases_keep_them_in_their_table() -> None:
    store = Store.open("sqlite://")
    try:
        assert isinstance(store.artifacts, TableArtifacts)
        ref = store.artifacts.put(b"go test output\n", ArtifactKind.LOG)
        again = store.artifacts.put(b"go test output\n", ArtifactKind.LOG)  # kept once
        assert again == ref
        assert store.artifacts.get(ref.sha256) == b"go test output\n"
        assert store.artifacts.get("f" * 64) is None
    finally:
        store.close()


@pytest.mark.postgres
def test_a_postgresql_store_keeps_them_in_its_table(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        assert isinstance(store.artifacts, TableArtifacts)
        text = b"[INFO] BUILD FAILURE\n" * 1000
        ref = store.artifacts.put(text, ArtifactKind.LOG)
        assert store.artifacts.put(text, ArtifactKind.LOG) == ref  # kept once
        assert store.artifacts.get(ref.sha256) == text
    finally:
        store.close()


def test_several_are_kept_at_once_each_once() -> None:
    store = Store.open("sqlite://")
    try:
        already = store.artifacts.put(b"kept before\n", ArtifactKind.LOG)
        batch = [
            store.artifacts.prepare(text, ArtifactKind.LOG)
            for text in (b"kept before\n", b"first\n", b"second\n", b"first\n")
        ]
        store.artifacts.keep(batch)
        assert batch[0][0] == already
        for ref, kept in batch:
            assert store.artifacts.get(ref.sha256) == kept
    finally:
        store.close()


def test_held_artifacts_are_named_at_once_and_written_when_kept(tmp_path: Path) -> None:
    store = FolderArtifacts(tmp_path)
    held = HeldArtifacts(store)
    ref = held.put(b"the patch", ArtifactKind.PATCH)
    assert held.put(b"the patch", ArtifactKind.PATCH) == ref and len(held.held) == 1
    assert ref == prepare(b"the patch", ArtifactKind.PATCH)[0]
    assert held.get(ref.sha256) == b"the patch"  # served while held
    assert store.get(ref.sha256) is None  # nothing written yet
    store.keep(held.held)
    assert store.get(ref.sha256) == b"the patch"
