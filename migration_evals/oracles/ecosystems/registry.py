"""The registry the cascade and the tiers reach the build ecosystems through.

Each subpackage of ``migration_evals.oracles.ecosystems`` is one ecosystem (``maven``,
``go``, ``dockerfile``) whose ``ecosystem`` module defines ``ECOSYSTEM``, an ``Ecosystem``
(``.interface``); the registry finds them when first asked, so a fourth ecosystem is a new
subpackage. The tiers call the functions here (``ecosystem_of``, ``check_contract``,
``check_test_config``, ``check_shadowing``, ``report_format``, ``read_report``,
``coverage_format``, ``source_languages``, ``test_language``), never an ecosystem's own
modules
(``tests/oracles/test_ecosystems.py`` checks it).

The names a recipe spec may use (build systems, report and coverage formats, contract
kinds, test setting families, syntax-only forms) are the registry's too:
``spec_vocabulary`` hands them to the spec schema
(``migration_evals.core.spec_schemas.recipe_schema``), and ``load_specs`` loads the specs
against them, so the schema can never accept a name no ecosystem implements.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Evidence
from migration_evals.core.ports import SandboxResult
from migration_evals.core.spec_schemas import SpecVocabulary, recipe_schema
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.core.specs import load_specs as load_specs_with
from migration_evals.oracles.coverage import CoverageFormat
from migration_evals.oracles.ecosystems.discovery import defined_in
from migration_evals.oracles.ecosystems.interface import (
    ContractCheck,
    ContractKind,
    Ecosystem,
    OutputCheck,
    ReportFormat,
)
from migration_evals.oracles.grading import TestReport, parse_exit_code
from migration_evals.oracles.sandbox.capture import CaptureFactory
from migration_evals.oracles.sandbox.routes import Route
from migration_evals.oracles.sources import TestLanguage
from migration_evals.oracles.syntax import SourceLanguage
from migration_evals.oracles.tree import TreeView

__all__ = [
    "ContractCheck",
    "ContractKind",
    "Ecosystem",
    "OutputCheck",
    "ReportFormat",
    "check_contract",
    "check_shadowing",
    "check_test_config",
    "coverage_format",
    "ecosystem_of",
    "ecosystems",
    "gate_routes",
    "load_specs",
    "output_captures",
    "read_report",
    "recipe_spec_schema",
    "report_format",
    "source_languages",
    "spec_vocabulary",
    "test_language",
    "test_languages",
]

_PACKAGE = "migration_evals.oracles.ecosystems"

# The one format no ecosystem owns: a run's exit status is its only result (an image's
# smoke test, a script).
EXIT_CODE = ReportFormat("exit-code", lambda result, not_tests: parse_exit_code(result.exit_code))


@functools.cache
def ecosystems() -> tuple[Ecosystem, ...]:
    """Every registered ecosystem, by package name."""
    found: list[Ecosystem] = defined_in(
        _PACKAGE, "ECOSYSTEM", packages_only=True, module="ecosystem"
    )
    return tuple(found)


def ecosystem_of(recipe: Recipe) -> Ecosystem | None:
    """The ecosystem ``recipe`` is graded in; None for a recipe none of them claims."""
    return next((each for each in ecosystems() if each.claims(recipe)), None)


def gate_routes() -> tuple[Route, ...]:
    """Every registered ecosystem's routes through the registry gate."""
    return tuple(route for each in ecosystems() for route in each.gate_routes)


def output_captures() -> Mapping[str, CaptureFactory]:
    """Every registered report format's capture, by the ``output_events`` name a request
    asks for it by: what the bot hands the sandbox (which knows no format itself)."""
    captures: dict[str, CaptureFactory] = {}
    for each in _report_formats().values():
        if each.capture is None:
            continue
        if captures.setdefault(each.output_events, each.capture) is not each.capture:
            raise SpecError(each.name, "output_events", f"{each.output_events} is declared twice")
    return captures


@functools.cache
def _contract_kinds() -> Mapping[str, ContractKind]:
    kinds: dict[str, ContractKind] = {}
    for ecosystem in ecosystems():
        for kind in ecosystem.contract_kinds():
            if kind.name in kinds:
                raise SpecError(ecosystem.name, "contract.kind", f"{kind.name} is declared twice")
            kinds[kind.name] = kind
    return kinds


@functools.cache
def _report_formats() -> Mapping[str, ReportFormat]:
    formats = [EXIT_CODE, *(f for each in ecosystems() for f in each.report_formats)]
    return {each.name: each for each in formats}


def report_format(name: str) -> ReportFormat:
    """The report format ``name``; a name no ecosystem reads is a broken spec."""
    found = _report_formats().get(name)
    if found is None:
        known = ", ".join(sorted(_report_formats()))
        raise SpecError("recipe", "sandbox.tests.report_format", f"one of {known}, not {name!r}")
    return found


@functools.cache
def _coverage_formats() -> Mapping[str, CoverageFormat]:
    return {f.name: f for each in ecosystems() for f in each.coverage_formats}


def coverage_format(name: str) -> CoverageFormat:
    """The coverage format ``name``; a name no ecosystem reads is a broken spec."""
    found = _coverage_formats().get(name)
    if found is None:
        known = ", ".join(sorted(_coverage_formats()))
        raise SpecError("recipe", "sandbox.tests.coverage.format", f"one of {known}, not {name!r}")
    return found


@functools.cache
def source_languages() -> tuple[SourceLanguage, ...]:
    """The source languages of every ecosystem's files."""
    return tuple(language for each in ecosystems() for language in each.languages)


@functools.cache
def test_languages() -> tuple[TestLanguage, ...]:
    """The languages every ecosystem's tests are written in."""
    return tuple(language for each in ecosystems() for language in each.test_languages)


def test_language(path: str) -> TestLanguage | None:
    """The language the test source at ``path`` is written in; None: no test source."""
    return next((each for each in test_languages() if each.language.claims(path)), None)


def read_report(name: str, result: SandboxResult, *, not_tests: Sequence[str] = ()) -> TestReport:
    """The report of one run in format ``name``, with the run's exit status beside it;
    ``not_tests`` are patterns of collected files that are no test reports (coverage)."""
    return report_format(name).read(result, not_tests)


def check_contract(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against ``tree`` keeping ``recipe``'s static contract; empty if it holds.
    An unknown kind is a broken spec (``SpecError``), never the candidate's fault."""
    name = recipe.contract.kind
    kind = _contract_kinds().get(name)
    if kind is None:
        known = ", ".join(sorted(_contract_kinds()))
        raise SpecError(f"recipe {recipe.name}", "contract.kind", f"one of {known}, not {name!r}")
    return kind.check(recipe, params, tree)


def check_test_config(recipe: Recipe, tree: TreeView) -> list[Evidence]:
    """Evidence for every test-selecting or checking setting the patch weakens."""
    ecosystem = ecosystem_of(recipe)
    return ecosystem.check_test_config(recipe, tree) if ecosystem is not None else []


def check_shadowing(
    recipe: Recipe, tree: TreeView, dependencies: Iterable[str] = ()
) -> list[Evidence]:
    """The recipe's shadowing check over ``tree``: ``dependencies`` are the Java packages
    or Go module paths the resolved builds use (none known yet in tier 1)."""
    ecosystem = ecosystem_of(recipe)
    return ecosystem.check_shadowing(recipe, tree, dependencies) if ecosystem is not None else []


def _union(names: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """Every name of ``names``, once, in the order first declared."""
    return tuple(dict.fromkeys(name for each in names for name in each))


@functools.cache
def spec_vocabulary() -> SpecVocabulary:
    """The names a recipe spec may use, as the registered ecosystems implement them."""
    found = ecosystems()
    kinds = _contract_kinds().values()
    return SpecVocabulary(
        build_systems=tuple(e.build_system for e in found if e.build_system is not None),
        report_formats=tuple(_report_formats()),
        coverage_formats=tuple(_coverage_formats()),
        contract_kinds=tuple(kind.name for kind in kinds),
        setting_families=_union(e.setting_families for e in found),
        syntax_forms=_union(e.syntax_forms for e in found),
        contract_settings=tuple((kind.name, kind.settings) for kind in kinds if kind.settings),
    )


def recipe_spec_schema() -> dict[str, Any]:
    """The recipe spec's schema, its enums the registered ecosystems' names."""
    return recipe_schema(spec_vocabulary())


def load_specs(root: Path) -> SpecSet:
    """Load and validate every spec under ``root`` against the registered ecosystems'
    names; raise ``SpecError`` on the first problem."""
    return load_specs_with(root, spec_vocabulary())
