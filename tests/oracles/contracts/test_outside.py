"""What the ecosystems' outside-the-recipe checks share: counting against the base, the
recipe's declaration of its families, and the bundled examples staying as they were."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from migration_evals.core.errors import SpecError
from migration_evals.core.specs import SpecSet, validate
from migration_evals.core.yamlio import load_yaml_file
from migration_evals.oracles.contracts.outside import Construct, Family, added, declared_families
from migration_evals.oracles.ecosystems.go.outside import check_go_outside
from migration_evals.oracles.ecosystems.maven.outside import check_java_outside
from migration_evals.oracles.ecosystems.registry import recipe_spec_schema
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.conftest import ROOT, clone_example, run_git


def _construct(scope: str, line: int, shown: str = "os.Exit", context: str = "") -> Construct:
    return Construct(
        Family.PROCESS_CONTROL, "ends the process", shown, scope, "a.go", line, 1, context
    )


def test_a_construct_the_base_has_in_the_same_declaration_is_the_base_s() -> None:
    base = [_construct("func main", 10, context="os.Exit(1)")]
    moved = [_construct("func main", 14, context="os.Exit(1)")]
    assert added(base, moved) == []


def test_one_more_than_the_base_names_the_new_line() -> None:
    base = [_construct("func main", 10, context="os.Exit(1)")]
    patched = [
        _construct("func main", 4, context="os.Exit(0)"),
        _construct("func main", 12, context="os.Exit(1)"),
    ]
    assert added(base, patched) == [patched[0]]


def test_a_construct_moved_to_another_declaration_is_the_patch_s() -> None:
    base = [_construct("func main", 10, context="os.Exit(1)")]
    patched = [_construct("func (*Store).Get", 30, context="os.Exit(1)")]
    assert added(base, patched) == patched


def test_schema_names_every_family() -> None:
    contract = recipe_spec_schema()["properties"]["contract"]["properties"]["outside"]
    assert contract["items"]["enum"] == [f.value for f in Family]


def test_schema_refuses_an_unknown_family(specs: SpecSet) -> None:
    del specs  # the schema is checked against the recipe's file as written
    raw = dict(load_yaml_file(ROOT / "specs" / "recipes" / "go-import-rewrite.yaml"))
    raw["contract"] = {**raw["contract"], "outside": ["load-time-code", "network-access"]}
    with pytest.raises(SpecError, match=r"contract\.outside"):
        validate(raw, recipe_spec_schema(), file="go-import-rewrite.yaml")


def test_a_family_the_ecosystem_cannot_look_for_is_a_broken_spec(specs: SpecSet) -> None:
    java = specs.recipe("java8-to-17")
    broken = replace(java, contract=replace(java.contract, outside=("new-dependencies",)))
    with pytest.raises(SpecError, match="families among"):
        check_java_outside(broken, {}, MemoryTree(base={}, patched={}))


def test_the_recipes_declare_their_families(specs: SpecSet) -> None:
    go = declared_families(specs.recipe("go-import-rewrite"), set(Family))
    java = declared_families(specs.recipe("java8-to-17"), set(Family))
    assert Family.LOAD_TIME_CODE in go
    assert Family.NEW_DEPENDENCIES in go
    assert Family.TEST_FRAMEWORK_HOOKS in java


EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())


def _bundled() -> list[dict[str, str]]:
    lines = []
    for name in ("go.jsonl", "java.jsonl"):
        text = (ROOT / "examples" / "changesets" / name).read_text()
        lines += [json.loads(line) for line in text.splitlines() if line.strip()]
    return lines


def _applied(tmp_path: Path, changeset: dict[str, str]) -> MemoryTree | None:
    """The example's base and patched trees, or None when its patch does not apply."""
    project = Path(changeset["repo"]).name.removesuffix(".bundle")
    repo, _commit = clone_example(tmp_path, project)
    patch = (ROOT / "examples" / "changesets" / changeset["patch_file"]).resolve()
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    if subprocess.run(["git", "apply", str(patch)], cwd=repo, check=False).returncode:
        return None
    status = run_git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    changes = []
    for line in status:
        path = line[3:]
        kind = {"D": ChangeKind.DELETE, "?": ChangeKind.ADD}.get(line[1], ChangeKind.MODIFY)
        old = None if kind is ChangeKind.ADD else path
        changes.append(FileChange(kind, old, None if kind is ChangeKind.DELETE else path))
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    return MemoryTree(
        base={str(p.relative_to(repo)): c for p, c in before.items()},
        patched={str(p.relative_to(repo)): c for p, c in after.items()},
        changes=changes,
    )


@pytest.mark.parametrize("changeset", _bundled(), ids=lambda c: c["id"])
def test_no_bundled_example_adds_anything_outside_its_recipe(
    specs: SpecSet, tmp_path: Path, changeset: dict[str, str]
) -> None:
    # The demo's verdicts (examples/expected.json) rest on these patches being honest
    # about this: none is an attack of this kind, so none may be refused for one.
    tree = _applied(tmp_path, changeset)
    if tree is None:  # refused at tier 1 before any contract is read, as designed
        assert EXPECTED[changeset["id"]]["stops_at"] == "apply"
        return
    recipe = specs.recipe(changeset["recipe"])
    check = check_go_outside if recipe.contract.kind == "go-imports" else check_java_outside
    assert tree.changes
    assert check(recipe, {}, tree) == []
