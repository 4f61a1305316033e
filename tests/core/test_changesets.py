"""Changeset JSONL: all-or-nothing, with the file, line and key of every bad line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from migration_evals.core.changesets import check_against_specs, read_changesets
from migration_evals.core.errors import ChangesetError
from migration_evals.core.specs import SpecSet

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
    with pytest.raises(ChangesetError, match=r":1: base_commit: missing; expected a full commit"):
        read_changesets(_write(tmp_path, row))


def test_unknown_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChangesetError, match="pach: unknown key; expected one of base_commit, "):
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
    with pytest.raises(ChangesetError) as raised:
        check_against_specs(located, specs)
    # The message names the specs directory actually loaded, and what chooses it.
    message = str(raised.value)
    assert f"model 'gpt-9' is not in {specs.root / 'models.yaml'}" in message
    assert f"the specs directory loaded is {specs.root}" in message
    assert "MIGRATION_EVALS_SPECS_DIR" in message


def test_recipe_params_are_validated_against_the_recipe(tmp_path: Path, specs: SpecSet) -> None:
    row = {**GOOD, "recipe": "go-import-rewrite", "recipe_params": {"rewrites": ["io/nope"]}}
    with pytest.raises(
        ChangesetError, match=r"recipe_params\.rewrites\.0: 'io/nope' is not one of"
    ):
        check_against_specs(read_changesets(_write(tmp_path, row)), specs)


def test_every_bad_line_is_reported_at_once(tmp_path: Path, specs: SpecSet) -> None:
    rows = [
        {**GOOD, "base_commit": "abc123"},
        '{"id": ',
        GOOD,
        {**GOOD, "id": "a/3", "repo_created_at": "2022-13-01"},
        {**GOOD, "id": "a/4", "recipe": "base-image-bump", "recipe_params": {"rewrites": {}}},
        {k: v for k, v in {**GOOD, "id": "a/5"}.items() if k != "model"},
        {**GOOD, "id": "a/6", "model": "gpt-9"},
    ]
    with pytest.raises(ChangesetError) as raised:
        read_changesets(_write(tmp_path, *rows), specs)
    error = raised.value
    assert [line for line, _ in error.problems] == [1, 2, 4, 5, 6, 7]
    text = str(error).splitlines()
    assert text[0].endswith("6 problems on 6 line(s); nothing was run")
    by_line = dict(error.problems)
    assert by_line[1].startswith("base_commit: 'abc123' does not match")
    assert by_line[1].endswith("expected a full commit sha: 40 (or 64) lowercase hex digits")
    assert by_line[2].startswith("not valid JSON")
    assert by_line[4].startswith("repo_created_at: '2022-13-01' is not a 'date'")
    # recipe_params problems end with the recipe schema's own description of the key.
    assert by_line[5].startswith("recipe_params.rewrites: {} should be non-empty; expected")
    assert "without it the rewrites are read from the diff" in by_line[5]
    assert by_line[6] == "model: missing; expected a model id"
    assert by_line[7].startswith("model 'gpt-9' is not in ")
    assert all(f"changesets.jsonl:{n}: " in str(error) for n in (1, 2, 4, 5, 6, 7))


def test_several_problems_of_one_line_are_each_reported(tmp_path: Path) -> None:
    row = {**GOOD, "base_commit": "xyz", "repo_created_at": 5, "extra": 1}
    with pytest.raises(ChangesetError) as raised:
        read_changesets(_write(tmp_path, row))
    keys = [message.split(":")[0] for _, message in raised.value.problems]
    assert keys == ["extra", "base_commit", "repo_created_at"]


def test_an_unknown_creation_date_is_null_and_stays_unknown(tmp_path: Path) -> None:
    (located,) = read_changesets(_write(tmp_path, {**GOOD, "repo_created_at": None}))
    changeset = located.changeset
    assert changeset.repo_created_at is None
    assert changeset.to_dict()["repo_created_at"] is None


def _with_patch_file(tmp_path: Path, name: str) -> Path:
    row = {k: v for k, v in GOOD.items() if k != "patch"}
    return _write(tmp_path, {**row, "patch_file": name})


def test_a_fifo_patch_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.diff")  # opening it for reading would wait for a writer forever
    with pytest.raises(ChangesetError, match="'p.diff' is not a regular file"):
        read_changesets(_with_patch_file(tmp_path, "p.diff"))


def test_a_device_patch_file_is_refused_before_reading(tmp_path: Path) -> None:
    (tmp_path / "zero.diff").symlink_to("/dev/zero")
    with pytest.raises(ChangesetError, match="is not a regular file"):
        read_changesets(_with_patch_file(tmp_path, "zero.diff"))


def test_a_patch_file_over_the_specs_limit_is_refused(tmp_path: Path, specs: SpecSet) -> None:
    limit = specs.oracle.apply.max_patch_bytes
    (tmp_path / "big.diff").write_bytes(b"+" * (limit + 1))
    with pytest.raises(ChangesetError, match=f"is {limit + 1} bytes; patches of at most {limit}"):
        read_changesets(_with_patch_file(tmp_path, "big.diff"), specs)


def test_patch_file_bytes_that_are_not_utf8_are_kept_for_tier_one(tmp_path: Path) -> None:
    (tmp_path / "latin1.diff").write_bytes(b"diff --git a/x b/x\n+caf\xe9\n")
    (located,) = read_changesets(_with_patch_file(tmp_path, "latin1.diff"))
    assert located.changeset.patch.encode("utf-8", "surrogateescape").endswith(b"caf\xe9\n")


@pytest.mark.parametrize("key", ["id", "base_commit"])
def test_identifiers_with_a_trailing_newline_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ChangesetError, match=key):
        read_changesets(_write(tmp_path, {**GOOD, key: str(GOOD[key]) + "\n"}))


def test_a_directory_or_fifo_given_as_the_changesets_file_is_one_clear_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(ChangesetError, match="not a regular file"):
        read_changesets(tmp_path)
    os.mkfifo(tmp_path / "c.jsonl")
    with pytest.raises(ChangesetError, match="not a regular file"):
        read_changesets(tmp_path / "c.jsonl")
