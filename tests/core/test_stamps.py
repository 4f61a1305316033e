"""Stamps survive reformatting and move with any semantic change."""

from __future__ import annotations

import shutil
from pathlib import Path

from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json, stamp
from migration_evals.core.yamlio import load_yaml_text
from migration_evals.oracles.ecosystems.registry import load_specs
from tests.conftest import SPECS_DIR


def test_canonical_json_sorts_keys_and_drops_whitespace() -> None:
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


def test_reformatted_yaml_keeps_its_stamp() -> None:
    compact = load_yaml_text("a: 1\nb: {c: [1, 2], d: x}\n", name="x")
    spread = load_yaml_text("# comment\nb:\n  d: 'x'\n  c:\n    - 1\n    - 2\na:   1\n", name="y")
    assert stamp(compact) == stamp(spread)


def test_semantic_edit_changes_the_stamp() -> None:
    before = load_yaml_text("a: 1\nb: [1, 2]\n", name="x")
    after = load_yaml_text("a: 1\nb: [2, 1]\n", name="x")
    assert stamp(before) != stamp(after)


def _copy_specs(tmp_path: Path) -> Path:
    target = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, target)
    return target


def test_reformatting_the_oracle_spec_keeps_every_stamp(specs: SpecSet, tmp_path: Path) -> None:
    original = specs.stamp_report()
    root = _copy_specs(tmp_path)
    oracle = root / "oracle.yaml"
    # Strip comments and reorder top-level blocks: same meaning, different bytes.
    lines = [line for line in oracle.read_text().splitlines() if not line.lstrip().startswith("#")]
    text = "\n".join(lines) + "\n"
    head, _, gold = text.partition("gold:")
    oracle.write_text("gold:" + gold + "\n" + head)
    assert load_specs(root).stamp_report() == original


def test_changing_a_list_cost_moves_only_the_oracle_stamp(specs: SpecSet, tmp_path: Path) -> None:
    original = specs.stamp_report()
    root = _copy_specs(tmp_path)
    oracle = root / "oracle.yaml"
    oracle.write_text(oracle.read_text().replace("list_cost_usd: 0.08", "list_cost_usd: 0.09"))
    changed = load_specs(root).stamp_report()
    assert changed["oracle"] != original["oracle"]
    assert changed["recipes"] == original["recipes"]
    assert changed["hypotheses"] == original["hypotheses"]


def test_editing_the_judge_prompt_moves_the_oracle_stamp(specs: SpecSet, tmp_path: Path) -> None:
    original = specs.oracle_stamp
    root = _copy_specs(tmp_path)
    prompt = root / "prompts" / "judge.md.j2"
    prompt.write_text(prompt.read_text() + "\nBe brief.\n")
    assert load_specs(root).oracle_stamp != original


def test_recipe_edit_moves_only_that_recipe(specs: SpecSet, tmp_path: Path) -> None:
    original = specs.stamp_report()
    root = _copy_specs(tmp_path)
    recipe = root / "recipes" / "java8-to-17.yaml"
    recipe.write_text(recipe.read_text().replace("target_release: 17", "target_release: 21"))
    changed = load_specs(root).stamp_report()
    assert changed["recipes"]["java8-to-17"] != original["recipes"]["java8-to-17"]
    assert changed["recipes"]["go-import-rewrite"] == original["recipes"]["go-import-rewrite"]
