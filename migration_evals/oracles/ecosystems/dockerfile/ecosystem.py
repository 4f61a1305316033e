"""Dockerfiles: the repository's images, built and compared base against patched. Its
recipes build no project of their own, so there is no test configuration to guard and no
source that could shadow another's; its tests are the images' smoke runs (``exit-code``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from migration_evals.core.diff_coverage import DETAILS_KEY
from migration_evals.core.model import Changeset, Evidence
from migration_evals.core.ports import Sandbox
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.build_summaries import TestTotals
from migration_evals.oracles.compiler_output import BuildOutputReader
from migration_evals.oracles.coverage import CoverageFormat
from migration_evals.oracles.deps import NOTHING_TO_RESOLVE, Resolution, ResolutionRules
from migration_evals.oracles.diff_coverage import diff_without_coverage
from migration_evals.oracles.ecosystems.discovery import defined_in
from migration_evals.oracles.ecosystems.dockerfile.compile import compile_dockerfiles
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import diff_images, is_dockerfile
from migration_evals.oracles.ecosystems.dockerfile.image_tests import check_images
from migration_evals.oracles.ecosystems.dockerfile.language import DOCKERFILE_LANGUAGE
from migration_evals.oracles.ecosystems.interface import ContractKind, OutputCheck, ReportFormat
from migration_evals.oracles.harness_files import BuildServices, MadeFiles
from migration_evals.oracles.projects import Project, ProjectSet
from migration_evals.oracles.sandbox.routes import Route
from migration_evals.oracles.sources import TestLanguage
from migration_evals.oracles.syntax import SourceLanguage
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.toolchains import SideToolchain, recipe_image_for_both_sides
from migration_evals.oracles.tree import TreeView

__all__ = ["ECOSYSTEM", "Dockerfile"]


@dataclass(frozen=True, slots=True)
class Dockerfile:
    name: str = "dockerfile"
    build_system: str | None = None
    project_file: str = ""
    resolves_base_as_of_its_day: bool = False
    resolves_sides_together: bool = False
    report_formats: tuple[ReportFormat, ...] = ()
    languages: tuple[SourceLanguage, ...] = (DOCKERFILE_LANGUAGE,)
    test_languages: tuple[TestLanguage, ...] = ()
    coverage_formats: tuple[CoverageFormat, ...] = ()
    resolution: ResolutionRules = NOTHING_TO_RESOLVE
    gate_routes: tuple[Route, ...] = ()
    setting_families: tuple[str, ...] = ()
    syntax_forms: tuple[str, ...] = ()
    build_output: BuildOutputReader | None = None  # its images' builds read their own

    def contract_kinds(self) -> tuple[ContractKind, ...]:
        return tuple(defined_in(f"{__package__}.contracts", "CONTRACT_KIND"))

    def claims(self, recipe: Recipe) -> bool:
        return recipe.sandbox.build_dockerfile

    def find_projects(self, tree: TreeView) -> ProjectSet:
        return (
            ProjectSet()
        )  # the images are the builds (migration_evals.oracles.ecosystems.dockerfile.dockerfiles)

    def check_test_config(self, recipe: Recipe, tree: TreeView) -> list[Evidence]:
        return []

    def check_shadowing(
        self, recipe: Recipe, tree: TreeView, dependencies: Iterable[str]
    ) -> list[Evidence]:
        return []

    def build_env(self, project: Project, read: Callable[[str], bytes | None]) -> dict[str, str]:
        return {}

    def dependency_names(self, resolution: Resolution) -> Iterable[str]:
        return ()

    def toolchain_details(self, toolchain: Mapping[str, str]) -> dict[str, str]:
        return {}

    def printed_totals(self, output: str) -> TestTotals | None:
        return None

    def coverage_scope(self, root: str, read: Callable[[str], bytes | None]) -> str | None:
        return None

    def output_check(self, recipe: Recipe) -> OutputCheck | None:
        return None

    def trial_images(self, recipe: Recipe, changeset: Changeset) -> list[str]:
        """The images the recipe's parameters move between and the FROM lines of the
        diff name."""
        rewrites: Mapping[str, str] = changeset.recipe_params.get("rewrites") or {}
        return sorted({*rewrites.keys(), *rewrites.values(), *diff_images(changeset.patch)})

    def compile_tier(self, sandbox: Sandbox, context: TrialContext) -> TierOutcome | None:
        return compile_dockerfiles(sandbox, context)

    def tests_tier(
        self,
        sandbox: Sandbox,
        baselines: BaselineCache,
        context: TrialContext,
        test_paths: Sequence[str],
    ) -> TierOutcome | None:
        outcome = check_images(sandbox, baselines, context)
        changed = diff_without_coverage(
            context.changeset.patch,
            test_paths,
            is_dockerfile,
            "the recipe measures no coverage, and the patch changes files besides its Dockerfiles",
        )
        return replace(outcome, details={**outcome.details, DETAILS_KEY: changed.to_dict()})

    def made_files(
        self, services: BuildServices, context: TrialContext, project: Project, image: str
    ) -> MadeFiles | None:
        return None

    def base_toolchain(self, recipe: Recipe, tree: TreeView, project: Project) -> SideToolchain:
        return recipe_image_for_both_sides(recipe)


ECOSYSTEM = Dockerfile()
