"""Specs are read through their typed views (``migration_evals.core.spec_types``): only the
parser, ``migration_evals/core/specs.py``, reads a spec section by string key. A contract
kind reads its own settings through ``ContractSpec.setting``. What counts as such a read is
``tests.project_code.spec_key_reads``, beside the other readings of the project's code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project_code import READS_THE_CODE, read_module, spec_key_reads

pytestmark = pytest.mark.xdist_group(READS_THE_CODE)

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "migration_evals"
PARSER = SOURCE / "core" / "specs.py"


def _readers(root: Path) -> dict[str, list[str]]:
    readers = {}
    for path in sorted(root.rglob("*.py")):
        if path == PARSER:
            continue
        reads = read_module(path).spec_key_reads
        if reads:
            readers[str(path.relative_to(ROOT))] = list(reads)
    return readers


def test_only_the_parser_reads_spec_sections_by_key() -> None:
    assert _readers(SOURCE) == {}


@pytest.mark.parametrize(
    "source",
    [
        'image = recipe.sandbox["image"]',
        'step = context.recipe.sandbox["tests"]["coverage"]',
        'exit = recipe.sandbox["compile"].get("findings_exit")',
        'drop = recipe.test_policy.get("max_coverage_drop", 1)',
        "pairs = recipe.contract.items()",
        'release = recipe.contract.settings["target_release"]',
        'moves = recipe.contract.settings.get("family_moves")',
        'rate = specs.oracle.section("sandbox")["usd_per_second"]',
        'floor = specs.oracle.gate["judge_kappa_floor"]',
        'title = recipe.raw["title"]',
        'alpha = hypothesis.raw.get("alpha")',
        "document = dict(specs.oracle.raw)",
    ],
)
def test_every_spelling_of_a_key_read_is_found(source: str) -> None:
    assert spec_key_reads(source) != []


def test_typed_reads_and_other_mappings_are_not_key_reads() -> None:
    source = (
        "image = recipe.sandbox.image\n"
        "tools = recipe.sandbox.tests.coverage.tools\n"
        'release = recipe.contract.setting("target_release", int)\n'
        "floor = specs.oracle.gate.judge_kappa_floor\n"
        'rewrites = changeset.recipe_params.get("rewrites")\n'
        'answer = envelope.details["judge"]\n'
        "connection = response.raw\n"
    )
    assert spec_key_reads(source) == []


def test_the_check_fails_on_a_module_that_reads_a_section_by_key(tmp_path: Path) -> None:
    module = tmp_path / "tiers.py"
    module.write_text('def image(recipe):\n    return recipe.sandbox["image"]\n')
    assert spec_key_reads(module.read_text()) == ["2: subscript"]
