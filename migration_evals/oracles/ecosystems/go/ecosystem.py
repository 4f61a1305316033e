"""Go: modules (and GOPATH-era trees), ``go test -json`` reports, coverage profiles, the
build constraints and directives a patch may not weaken, module paths that may not shadow
a dependency's or the standard library's, and the Go contract kinds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migration_evals.core.model import Changeset, Evidence
from migration_evals.core.ports import Sandbox
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.build_summaries import TestTotals
from migration_evals.oracles.compiler_output import BuildOutputReader
from migration_evals.oracles.coverage import CoverageFormat
from migration_evals.oracles.deps import Resolution, ResolutionRules
from migration_evals.oracles.ecosystems.discovery import defined_in
from migration_evals.oracles.ecosystems.go.build_env import go_build_env
from migration_evals.oracles.ecosystems.go.build_output import GO_OUTPUT
from migration_evals.oracles.ecosystems.go.coverage import GO_PROFILE, go_module_path
from migration_evals.oracles.ecosystems.go.gopath import made_module
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.ecosystems.go.projects import GO, find_projects
from migration_evals.oracles.ecosystems.go.registry_route import ROUTE
from migration_evals.oracles.ecosystems.go.reports import GO_TEST_JSON
from migration_evals.oracles.ecosystems.go.resolution import RESOLUTION
from migration_evals.oracles.ecosystems.go.shadowing import check_go_shadowing
from migration_evals.oracles.ecosystems.go.summaries import parse_go_log
from migration_evals.oracles.ecosystems.go.test_settings import (
    SETTING_FAMILIES,
    check_go_test_config,
)
from migration_evals.oracles.ecosystems.go.test_sources import GO_TESTS
from migration_evals.oracles.ecosystems.interface import ContractKind, OutputCheck, ReportFormat
from migration_evals.oracles.harness_files import BuildServices, MadeFiles
from migration_evals.oracles.projects import Project, ProjectSet
from migration_evals.oracles.sandbox.routes import Route
from migration_evals.oracles.shadowing import shadowing_integrity
from migration_evals.oracles.sources import TestLanguage
from migration_evals.oracles.syntax import SourceLanguage
from migration_evals.oracles.test_config import integrity_of
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.toolchains import (
    SideToolchain,
    recipe_image_for_both_sides,
    recipe_toolchain_images,
)
from migration_evals.oracles.tree import TreeView

__all__ = ["ECOSYSTEM", "Go"]


@dataclass(frozen=True, slots=True)
class Go:
    name: str = "go"
    build_system: str | None = GO
    project_file: str = "go.mod"
    resolves_base_as_of_its_day: bool = False
    # The patched tree's resolution starts from what the base's compiled (the build-cache
    # pool of their Go release): the base resolves first.
    resolves_sides_together: bool = False
    report_formats: tuple[ReportFormat, ...] = (GO_TEST_JSON,)
    languages: tuple[SourceLanguage, ...] = (GO_LANGUAGE,)
    test_languages: tuple[TestLanguage, ...] = (GO_TESTS,)
    coverage_formats: tuple[CoverageFormat, ...] = (GO_PROFILE,)
    resolution: ResolutionRules = RESOLUTION
    gate_routes: tuple[Route, ...] = (ROUTE,)
    setting_families: tuple[str, ...] = SETTING_FAMILIES
    syntax_forms: tuple[str, ...] = ()
    build_output: BuildOutputReader | None = GO_OUTPUT

    def contract_kinds(self) -> tuple[ContractKind, ...]:
        return tuple(defined_in(f"{__package__}.contracts", "CONTRACT_KIND"))

    def claims(self, recipe: Recipe) -> bool:
        return recipe.sandbox.build_system == self.build_system

    def find_projects(self, tree: TreeView) -> ProjectSet:
        return find_projects(tree)

    def check_test_config(self, recipe: Recipe, tree: TreeView) -> list[Evidence]:
        families = set(integrity_of(recipe).settings)
        return check_go_test_config(tree, families) if families else []

    def check_shadowing(
        self, recipe: Recipe, tree: TreeView, dependencies: Iterable[str]
    ) -> list[Evidence]:
        wanted, _ = shadowing_integrity(recipe)
        return check_go_shadowing(tree, dependencies) if wanted else []

    def build_env(self, project: Project, read: Callable[[str], bytes | None]) -> dict[str, str]:
        return go_build_env(project, read)

    def dependency_names(self, resolution: Resolution) -> Iterable[str]:
        # The paths of the modules of the build list ("path version [=> ...]").
        modules = (m.split()[0] for m in resolution.resolved if len(m.split()) > 1)
        return (*resolution.packages, *modules)

    def toolchain_details(self, toolchain: Mapping[str, str]) -> dict[str, str]:
        return {}  # the toolchain's own entry names the Go release

    def printed_totals(self, output: str) -> TestTotals | None:
        return parse_go_log(output).totals()

    def coverage_scope(self, root: str, read: Callable[[str], bytes | None]) -> str | None:
        """The module path of the project's go.mod: a replaced dependency's files are
        not its code."""
        return go_module_path(read(f"{root}/go.mod" if root else "go.mod"))

    def output_check(self, recipe: Recipe) -> OutputCheck | None:
        return None

    def trial_images(self, recipe: Recipe, changeset: Changeset) -> list[str]:
        return recipe_toolchain_images(recipe)

    def compile_tier(self, sandbox: Sandbox, context: TrialContext) -> TierOutcome | None:
        return None  # the tier builds the recipe's projects

    def tests_tier(
        self,
        sandbox: Sandbox,
        baselines: BaselineCache,
        context: TrialContext,
        test_paths: Sequence[str],
    ) -> TierOutcome | None:
        return None  # the tier runs the recipe's test command

    def made_files(
        self, services: BuildServices, context: TrialContext, project: Project, image: str
    ) -> MadeFiles | None:
        return made_module(services, context, project, image)

    def base_toolchain(self, recipe: Recipe, tree: TreeView, project: Project) -> SideToolchain:
        return recipe_image_for_both_sides(recipe)


ECOSYSTEM = Go()
