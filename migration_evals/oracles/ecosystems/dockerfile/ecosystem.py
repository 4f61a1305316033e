"""Dockerfiles: the repository's images, built and compared base against patched. Its
recipes build no project of their own, so there is no test configuration to guard and no
source that could shadow another's; its tests are the images' smoke runs (``exit-code``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe
from migration_evals.oracles.build_summaries import TestTotals
from migration_evals.oracles.deps import Resolution
from migration_evals.oracles.ecosystems.discovery import defined_in
from migration_evals.oracles.ecosystems.interface import ContractKind, ReportFormat
from migration_evals.oracles.projects import ProjectSet
from migration_evals.oracles.tree import TreeView

__all__ = ["ECOSYSTEM", "Dockerfile"]


@dataclass(frozen=True, slots=True)
class Dockerfile:
    name: str = "dockerfile"
    build_system: str | None = None
    report_formats: tuple[ReportFormat, ...] = ()
    coverage_formats: tuple[str, ...] = ()

    def contract_kinds(self) -> tuple[ContractKind, ...]:
        return tuple(defined_in(f"{__package__}.contracts", "CONTRACT_KIND"))

    def claims(self, recipe: Recipe) -> bool:
        return bool(recipe.sandbox.get("build_dockerfile"))

    def find_projects(self, tree: TreeView) -> ProjectSet:
        return ProjectSet()  # the images are the builds (migration_evals.oracles.dockerfiles)

    def check_test_config(self, recipe: Recipe, tree: TreeView) -> list[Evidence]:
        return []

    def check_shadowing(
        self, recipe: Recipe, tree: TreeView, dependencies: Iterable[str]
    ) -> list[Evidence]:
        return []

    def dependency_names(self, resolution: Resolution) -> Iterable[str]:
        return ()

    def printed_totals(self, output: str) -> TestTotals | None:
        return None

    def coverage_scope(self, root: str, read: Callable[[str], bytes | None]) -> str | None:
        return None


ECOSYSTEM = Dockerfile()
