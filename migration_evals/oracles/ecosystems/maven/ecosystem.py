"""Maven: reactors and their modules, Surefire reports, JaCoCo coverage, the POM settings a
patch may not weaken, Java packages that may not shadow the platform's, the Java contract
kinds and the JDK each side builds with."""

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
from migration_evals.oracles.ecosystems.interface import ContractKind, OutputCheck, ReportFormat
from migration_evals.oracles.ecosystems.maven.build_output import MAVEN_OUTPUT
from migration_evals.oracles.ecosystems.maven.classfiles import class_file_check
from migration_evals.oracles.ecosystems.maven.coverage import JACOCO_XML
from migration_evals.oracles.ecosystems.maven.language import JAVA_LANGUAGE
from migration_evals.oracles.ecosystems.maven.projects import MAVEN, find_projects
from migration_evals.oracles.ecosystems.maven.registry_route import ROUTE
from migration_evals.oracles.ecosystems.maven.reports import SUREFIRE
from migration_evals.oracles.ecosystems.maven.resolution import RESOLUTION
from migration_evals.oracles.ecosystems.maven.shadowing import check_java_shadowing
from migration_evals.oracles.ecosystems.maven.summaries import parse_maven_log
from migration_evals.oracles.ecosystems.maven.syntax import SYNTAX_FORMS
from migration_evals.oracles.ecosystems.maven.test_config import check_maven_test_config
from migration_evals.oracles.ecosystems.maven.test_settings import SETTING_FAMILIES
from migration_evals.oracles.ecosystems.maven.test_sources import JAVA_TESTS
from migration_evals.oracles.ecosystems.maven.toolchains import base_toolchain
from migration_evals.oracles.harness_files import BuildServices, MadeFiles
from migration_evals.oracles.projects import Project, ProjectSet
from migration_evals.oracles.sandbox.routes import Route
from migration_evals.oracles.shadowing import shadowing_integrity
from migration_evals.oracles.sources import TestLanguage
from migration_evals.oracles.syntax import SourceLanguage
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.toolchains import SideToolchain, recipe_toolchain_images
from migration_evals.oracles.tree import TreeView

__all__ = ["ECOSYSTEM", "Maven"]


@dataclass(frozen=True, slots=True)
class Maven:
    name: str = "maven"
    build_system: str | None = MAVEN
    project_file: str = "pom.xml"
    resolves_base_as_of_its_day: bool = True
    # Each side resolves into a local repository of its own.
    resolves_sides_together: bool = True
    report_formats: tuple[ReportFormat, ...] = (SUREFIRE,)
    languages: tuple[SourceLanguage, ...] = (JAVA_LANGUAGE,)
    test_languages: tuple[TestLanguage, ...] = (JAVA_TESTS,)
    coverage_formats: tuple[CoverageFormat, ...] = (JACOCO_XML,)
    resolution: ResolutionRules = RESOLUTION
    setting_families: tuple[str, ...] = SETTING_FAMILIES
    gate_routes: tuple[Route, ...] = (ROUTE,)
    syntax_forms: tuple[str, ...] = SYNTAX_FORMS
    build_output: BuildOutputReader | None = MAVEN_OUTPUT

    def contract_kinds(self) -> tuple[ContractKind, ...]:
        return tuple(defined_in(f"{__package__}.contracts", "CONTRACT_KIND"))

    def claims(self, recipe: Recipe) -> bool:
        return recipe.sandbox.build_system == self.build_system

    def find_projects(self, tree: TreeView) -> ProjectSet:
        return find_projects(tree)

    def check_test_config(self, recipe: Recipe, tree: TreeView) -> list[Evidence]:
        return check_maven_test_config(recipe, tree)

    def check_shadowing(
        self, recipe: Recipe, tree: TreeView, dependencies: Iterable[str]
    ) -> list[Evidence]:
        wanted, prefixes = shadowing_integrity(recipe)
        return check_java_shadowing(tree, prefixes, dependencies) if wanted else []

    def build_env(self, project: Project, read: Callable[[str], bytes | None]) -> dict[str, str]:
        return {}

    def dependency_names(self, resolution: Resolution) -> Iterable[str]:
        return resolution.packages  # the Java packages of the resolved jars

    def toolchain_details(self, toolchain: Mapping[str, str]) -> dict[str, str]:
        return {"jdk": toolchain["java"]} if "java" in toolchain else {}

    def printed_totals(self, output: str) -> TestTotals | None:
        return parse_maven_log(output).printed_total()

    def coverage_scope(self, root: str, read: Callable[[str], bytes | None]) -> str | None:
        return None

    def output_check(self, recipe: Recipe) -> OutputCheck | None:
        return class_file_check(recipe)

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
        return None

    def base_toolchain(self, recipe: Recipe, tree: TreeView, project: Project) -> SideToolchain:
        return base_toolchain(recipe, tree, project)


ECOSYSTEM = Maven()
