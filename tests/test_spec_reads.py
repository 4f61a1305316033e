"""Specs are read through their typed views (``migration_evals.core.spec_types``): only the
parser, ``migration_evals/core/specs.py``, reads a spec section by string key. A contract
kind reads its own settings through ``ContractSpec.setting``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "migration_evals"
PARSER = SOURCE / "core" / "specs.py"

# The attributes under which the spec views hold their sections: a subscript or a
# mapping method on one of them is a string-key read of a spec.
SECTIONS = frozenset(
    {"sandbox", "contract", "integrity", "test_policy", "judge", "gate", "gold", "apply", "prompts"}
)
_MAPPING_READS = frozenset({"get", "items", "keys", "values"})
# Names under which code holds a spec view, whose raw document it must not reach.
_SPEC_HOLDERS = frozenset({"recipe", "oracle", "hypothesis", "spec", "found"})


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_section(node: ast.expr) -> bool:
    """``x.sandbox``, ``x.contract.settings``, and the same one subscript deeper."""
    if isinstance(node, ast.Subscript):
        return _is_section(node.value)
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "settings":
        return _name(node.value) == "contract"
    return node.attr in SECTIONS


def _key_read(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and _is_section(node.value):
        return "subscript"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method == "section":
            return ".section()"
        if method in _MAPPING_READS and _is_section(node.func.value):
            return f".{method}()"
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "raw"
        and _name(node.value) in _SPEC_HOLDERS
    ):
        return ".raw"
    return None


def spec_key_reads(source: str) -> list[str]:
    """Each string-key read of a spec section in ``source``: ``"line: how"``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        how = _key_read(node)
        if how is not None:
            found.append(f"{getattr(node, 'lineno', 0)}: {how}")
    return sorted(found, key=lambda entry: int(entry.split(":")[0]))


def _readers(root: Path) -> dict[str, list[str]]:
    readers = {}
    for path in sorted(root.rglob("*.py")):
        if path == PARSER:
            continue
        reads = spec_key_reads(path.read_text())
        if reads:
            readers[str(path.relative_to(ROOT))] = reads
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
