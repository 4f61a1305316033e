"""The ecosystem registry: the spec schema's enums are exactly the names the registered
ecosystems implement, every shipped recipe belongs to one of them, new parts are found
without an edit, and the tiers reach ecosystems only through the registry."""

from __future__ import annotations

import ast
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from migration_evals.core.errors import SpecError
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.discovery import defined_in
from migration_evals.oracles.ecosystems.go.capture import GoTestEvents
from migration_evals.oracles.ecosystems.interface import Ecosystem, ReportFormat
from migration_evals.oracles.ecosystems.maven.syntax import SYNTAX_FORMS
from migration_evals.oracles.ecosystems.registry import (
    coverage_format,
    ecosystem_of,
    ecosystems,
    gate_routes,
    load_specs,
    output_captures,
    recipe_spec_schema,
    report_format,
)
from tests.conftest import SPECS_DIR
from tests.project_code import READS_THE_CODE, read_module

ROOT = Path(__file__).resolve().parents[3]
TIERS = ROOT / "migration_evals" / "oracles" / "tiers"
ECOSYSTEMS_DIR = ROOT / "migration_evals" / "oracles" / "ecosystems"
ECOSYSTEMS = "migration_evals.oracles.ecosystems"


def _enum(schema: dict[str, Any], *path: str) -> set[str]:
    for key in path:
        schema = schema["properties"][key]
    return set(schema["enum"])


def test_the_schema_names_the_build_systems_the_ecosystems_build() -> None:
    built = {e.build_system for e in ecosystems() if e.build_system is not None}
    assert _enum(recipe_spec_schema(), "sandbox", "build_system") == built == {"maven", "go"}


def test_the_registry_gate_routes_are_the_ecosystems_registries() -> None:
    routes = [route.name for route in gate_routes()]
    assert sorted(routes) == ["go", "maven"]


def test_the_sandbox_s_captures_are_the_report_formats_own() -> None:
    assert output_captures() == {"go-test-json": GoTestEvents}
    declared = {f.output_events: f.capture for e in ecosystems() for f in e.report_formats}
    assert {name: capture for name, capture in declared.items() if name} == output_captures()


def test_a_report_format_names_its_output_events_with_their_capture() -> None:
    with pytest.raises(ValueError, match="output_events needs its capture"):
        ReportFormat("tap", report_format("exit-code").read, output_events="tap")
    with pytest.raises(ValueError, match="output_events needs its capture"):
        ReportFormat("tap", report_format("exit-code").read, capture=GoTestEvents)


@pytest.mark.parametrize("step", ["resolve", "compile", "tests"])
def test_the_schema_names_the_report_formats_the_ecosystems_read(step: str) -> None:
    owned = {f.name for e in ecosystems() for f in e.report_formats}
    names = _enum(recipe_spec_schema(), "sandbox", step, "report_format")
    assert names == owned | {"exit-code"}
    assert all(report_format(name).name == name for name in names)


def test_the_schema_names_the_coverage_formats_the_ecosystems_write() -> None:
    schema = recipe_spec_schema()["properties"]["sandbox"]["properties"]["tests"]
    names = _enum(schema, "coverage", "format")
    assert names == {f.name for e in ecosystems() for f in e.coverage_formats}
    assert all(coverage_format(name).name == name for name in names)  # each one has a reader


def test_the_schema_names_the_contract_kinds_the_ecosystems_check() -> None:
    kinds = {k.name for e in ecosystems() for k in e.contract_kinds()}
    assert _enum(recipe_spec_schema(), "contract", "kind") == kinds
    assert kinds == {"java-release", "junit-jupiter", "go-imports", "base-image"}


def _items(schema: dict[str, Any], *path: str) -> list[str]:
    for key in path:
        schema = schema["properties"][key]
    names: list[str] = schema["items"]["enum"]
    return names


def test_the_schema_names_the_setting_families_the_ecosystems_compare() -> None:
    names = _items(recipe_spec_schema(), "integrity", "settings")
    assert len(names) == len(set(names))  # main-sources is Maven's and Go's, named once
    assert set(names) == {f for e in ecosystems() for f in e.setting_families}
    assert set(names) == {
        "test-sources", "test-resources", "test-skip", "failure-ignore", "test-selection",
        "test-jvm-args", "compiler-excludes", "compiler-strictness", "reactor-modules",
        "maven-config", "main-sources", "test-runtime",
        "build-constraints", "go-directives", "go-workspace",
    }  # fmt: skip


def test_the_schema_names_the_syntax_forms_the_ecosystems_know() -> None:
    names = _items(recipe_spec_schema(), "test_policy", "syntax")
    assert set(names) == {f for e in ecosystems() for f in e.syntax_forms}
    assert names == list(SYNTAX_FORMS)  # the forms Maven's canonical reading rewrites


def _not_its_own(recipe: Recipe, ecosystem: Ecosystem) -> list[str]:
    """The setting families and syntax forms ``recipe`` names that ``ecosystem`` does not
    implement: the schema takes every ecosystem's names, a recipe only its own's."""
    families = recipe.integrity.settings if recipe.integrity is not None else ()
    return [
        *(f for f in families if f not in ecosystem.setting_families),
        *(f for f in recipe.test_policy.syntax if f not in ecosystem.syntax_forms),
    ]


def test_every_shipped_recipe_names_only_its_own_ecosystem_s_settings_and_forms(
    specs: SpecSet,
) -> None:
    found = {
        name: _not_its_own(recipe, ecosystem)
        for name, recipe in specs.recipes.items()
        if (ecosystem := ecosystem_of(recipe)) is not None
    }
    assert len(found) == len(specs.recipes)
    assert {name: names for name, names in found.items() if names} == {}


def test_the_own_names_check_sees_another_ecosystem_s_names(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    assert go.integrity is not None
    probe = replace(
        go,
        integrity=replace(go.integrity, settings=(*go.integrity.settings, "maven-config")),
        test_policy=replace(go.test_policy, syntax=("var",)),
    )
    ecosystem = ecosystem_of(probe)
    assert ecosystem is not None
    assert _not_its_own(probe, ecosystem) == ["maven-config", "var"]


def test_a_contract_kind_s_own_settings_are_required_by_the_schema() -> None:
    contract = recipe_spec_schema()["properties"]["contract"]
    rules = {r["if"]["properties"]["kind"]["const"]: r["then"] for r in contract["allOf"]}
    assert rules["base-image"]["required"] == ["build_inputs"]


def test_every_shipped_recipe_belongs_to_one_ecosystem(specs: SpecSet) -> None:
    owners = {
        name: [e.name for e in ecosystems() if e.claims(recipe)]
        for name, recipe in specs.recipes.items()
    }
    assert owners == {
        "java8-to-17": ["maven"],
        "junit4-to-5": ["maven"],
        "go-import-rewrite": ["go"],
        "base-image-bump": ["dockerfile"],
    }
    assert ecosystem_of(specs.recipe("java8-to-17")) is not None


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("build_system: go", "build_system: gradle", "sandbox.build_system"),
        ("report_format: go-test-json", "report_format: tap", "sandbox.tests.report_format"),
        ("kind: go-imports", "kind: rust-edition", "contract.kind"),
        ("go-workspace]", "go-vendor]", "integrity.settings[2]"),
        ("edits: base-suite", "edits: base-suite\n  syntax: [walrus]", "test_policy.syntax[0]"),
    ],
)
def test_a_name_no_ecosystem_implements_is_refused_on_load(
    tmp_path: Path, old: str, new: str, key: str
) -> None:
    root = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, root)
    recipe = root / "recipes" / "go-import-rewrite.yaml"
    text = recipe.read_text()
    assert old in text
    recipe.write_text(text.replace(old, new, 1))
    with pytest.raises(SpecError) as caught:
        load_specs(root)
    assert caught.value.key == key


def test_a_module_added_to_a_package_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "probe_kinds"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("CONTRACT_KIND = 'first'\n")
    (package / "helper.py").write_text("OTHER = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert defined_in("probe_kinds", "CONTRACT_KIND") == ["first"]
        (package / "second.py").write_text("CONTRACT_KIND = 'second'\n")
        assert defined_in("probe_kinds", "CONTRACT_KIND") == ["first", "second"]
    finally:  # the probe's modules leave with it
        for name in [n for n in sys.modules if n.startswith("probe_kinds")]:
            del sys.modules[name]


def _ecosystem_imports(path: Path, *, strict: bool = False) -> list[str]:
    """The ecosystem modules ``path`` imports: below the registry, never the registry and
    its interface themselves (``strict``: any module of the ecosystems package)."""
    allowed = set() if strict else {ECOSYSTEMS, f"{ECOSYSTEMS}.interface", f"{ECOSYSTEMS}.registry"}
    names: list[str] = []
    for node in read_module(path).imports:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            if node.module == ECOSYSTEMS:  # from ...ecosystems import maven
                names += [f"{ECOSYSTEMS}.{alias.name}" for alias in node.names]
    ours = (n for n in names if n == ECOSYSTEMS or n.startswith(f"{ECOSYSTEMS}."))
    below = (n for n in ours if n not in allowed)
    owned = {e.name for e in ecosystems()} | {"discovery"}
    return [n for n in below if strict or n.split(".")[3] in owned]


@pytest.mark.xdist_group(READS_THE_CODE)
def test_the_tiers_import_no_ecosystem_module() -> None:
    modules = sorted(TIERS.rglob("*.py"))
    assert modules, "no tier module found: the check would pass on nothing"
    offenders = {str(p.relative_to(ROOT)): _ecosystem_imports(p) for p in modules}
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_tier_check_sees_an_ecosystem_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        f"from {ECOSYSTEMS}.maven.reports import SUREFIRE\n"
        f"from {ECOSYSTEMS} import go\n"
        f"from {ECOSYSTEMS}.registry import check_contract\n"
    )
    assert _ecosystem_imports(probe) == [f"{ECOSYSTEMS}.maven.reports", f"{ECOSYSTEMS}.go"]


ORACLES = ROOT / "migration_evals" / "oracles"
_DOCKERFILE_PARSER = "the sandbox's image building reads Dockerfiles with the Dockerfile parser"
# The modules outside the ecosystems that still import an ecosystem module, and why. A
# module listed here that no longer imports one fails the check too, so the list shrinks.
STILL_IMPORTING: dict[str, str] = {
    "migration_evals/oracles/sandbox/images.py": _DOCKERFILE_PARSER + " (base images)",
    "migration_evals/oracles/sandbox/image_builds.py": _DOCKERFILE_PARSER + " (target stages)",
    "migration_evals/oracles/sandbox/pulls.py": _DOCKERFILE_PARSER + " (image references)",
}


def _shared_imports(oracles: Path) -> dict[str, list[str]]:
    """Each module under ``oracles`` outside its ``ecosystems`` package that imports an
    ecosystem module, by its path from the repository's root. The sandbox imports none of
    the package at all, the registry and the interface included: they import the sandbox,
    and the bot hands it what the ecosystems declare (routes, captures)."""
    found: dict[str, list[str]] = {}
    for path in sorted(oracles.rglob("*.py")):
        inside = path.relative_to(oracles).parts
        if inside[0] == "ecosystems":
            continue
        names = _ecosystem_imports(path, strict=inside[0] == "sandbox")
        if names:
            found[str(path.relative_to(oracles.parents[1]))] = names
    return found


def _against(found: dict[str, list[str]], listed: dict[str, str]) -> dict[str, list[str]]:
    """Where ``found`` and an allowlist disagree, both ways."""
    return {
        "not listed": sorted(set(found) - set(listed)),
        "listed, importing none": sorted(set(listed) - set(found)),
    }


@pytest.mark.xdist_group(READS_THE_CODE)
def test_no_shared_oracle_module_imports_an_ecosystem_module() -> None:
    modules = [p for p in ORACLES.rglob("*.py") if ECOSYSTEMS_DIR not in p.parents]
    assert len(modules) > 50, "too few oracle modules found: the check would pass on nothing"
    assert all(reason for reason in STILL_IMPORTING.values())
    disagreements = _against(_shared_imports(ORACLES), STILL_IMPORTING)
    assert disagreements == {"not listed": [], "listed, importing none": []}


def test_the_shared_module_check_sees_an_import_and_a_stale_entry(tmp_path: Path) -> None:
    oracles = tmp_path / "migration_evals" / "oracles"
    for folder in ("sandbox", "ecosystems/go", "tiers"):
        (oracles / folder).mkdir(parents=True)
    (oracles / "shared.py").write_text(f"from {ECOSYSTEMS}.go.capture import GoTestEvents\n")
    (oracles / "sandbox" / "run.py").write_text(f"from {ECOSYSTEMS}.registry import gate_routes\n")
    (oracles / "tiers" / "tests.py").write_text(
        f"from {ECOSYSTEMS}.registry import report_format\n"
    )
    (oracles / "ecosystems" / "go" / "reports.py").write_text(
        f"from {ECOSYSTEMS}.go import capture\n"
    )
    found = _shared_imports(oracles)
    assert found == {
        "migration_evals/oracles/sandbox/run.py": [f"{ECOSYSTEMS}.registry"],
        "migration_evals/oracles/shared.py": [f"{ECOSYSTEMS}.go.capture"],
    }
    listed = {"migration_evals/oracles/shared.py": "x", "migration_evals/oracles/gone.py": "y"}
    assert _against(found, listed) == {
        "not listed": ["migration_evals/oracles/sandbox/run.py"],
        "listed, importing none": ["migration_evals/oracles/gone.py"],
    }
