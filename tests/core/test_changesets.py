"""Changeset JSONL: all-or-nothing, with the file and line of the first bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.changesets import check_against_specs, read_changesets
from core.errors import ChangesetError
from core.specs import SpecSet

GOOD = {
    "id": "a/1",
    "repo": "https://github.com/example/a.git",
    "base_commit": "a" * 40,
    "patch": "diff --git a/x b/x\n",
    "recipe": "java8-to-17",
    "model": "gpt-5",
    "repo_created_at": "2022-03-04",
}


def _write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "changesets.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_reads_good_lines_and_skips_blank_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD, "", {**GOOD, "id": "a/2"})
    located = read_changesets(path)
    assert [c.changeset.id for c in located] == ["a/1", "a/2"]
    assert [c.line for c in located] == [1, 3]


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD, '{"id": ')
    with pytest.raises(ChangesetError, match=r"changesets\.jsonl:2: not valid JSON"):
        read_changesets(path)


def test_missing_key_reports_line_and_key(tmp_path: Path) -> None:
    row = dict(GOOD)
    del row["base_commit"]
    with pytest.raises(ChangesetError, match=r":1: 'base_commit' is a required property"):
        read_changesets(_write(tmp_path, row))


def test_unknown_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="Additional properties are not allowed"):
        read_changesets(_write(tmp_path, {**GOOD, "pach": "x"}))


def test_patch_and_patch_file_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="exactly one of 'patch'"):
        read_changesets(_write(tmp_path, {**GOOD, "patch_file": "x.diff"}))


def test_short_base_commit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match=r"base_commit: 'abc123' does not match"):
        read_changesets(_write(tmp_path, {**GOOD, "base_commit": "abc123"}))


def test_bad_date(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="repo_created_at"):
        read_changesets(_write(tmp_path, {**GOOD, "repo_created_at": "2022-13-01"}))


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match=r":2: duplicate id 'a/1' \(first on line 1\)"):
        read_changesets(_write(tmp_path, GOOD, GOOD))


def test_patch_file_and_local_repo_resolve_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "p.diff").write_text("the patch\n")
    row = {**GOOD, "repo": "repos/a", "patch_file": "p.diff"}
    del row["patch"]
    changeset = read_changesets(_write(tmp_path, row))[0].changeset
    assert changeset.patch == "the patch\n"
    assert changeset.repo == str(tmp_path / "repos" / "a")


def test_missing_patch_file(tmp_path: Path) -> None:
    row = {**GOOD, "patch_file": "nope.diff"}
    del row["patch"]
    with pytest.raises(ChangesetError, match="patch_file 'nope.diff' not found"):
        read_changesets(_write(tmp_path, row))


def test_empty_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="no changesets"):
        read_changesets(_write(tmp_path, ""))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="file not found"):
        read_changesets(tmp_path / "none.jsonl")


def test_unknown_recipe_and_model_are_refused(tmp_path: Path, specs: SpecSet) -> None:
    located = read_changesets(_write(tmp_path, GOOD, {**GOOD, "id": "b", "recipe": "java9"}))
    with pytest.raises(ChangesetError, match=r":2: unknown recipe 'java9'"):
        check_against_specs(located, specs)
    located = read_changesets(_write(tmp_path, {**GOOD, "model": "gpt-9"}))
    with pytest.raises(ChangesetError, match="model 'gpt-9' is not in specs/models.yaml"):
        check_against_specs(located, specs)


def test_recipe_params_are_validated_against_the_recipe(tmp_path: Path, specs: SpecSet) -> None:
    row = {**GOOD, "recipe": "go-import-rewrite", "recipe_params": {"rewrites": ["io/nope"]}}
    with pytest.raises(
        ChangesetError, match=r"recipe_params\.rewrites\.0: 'io/nope' is not one of"
    ):
        check_against_specs(read_changesets(_write(tmp_path, row)), specs)
