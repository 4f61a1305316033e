"""The one interface every build ecosystem implements, and the parts it is made of.

An ecosystem (Maven, Go, Dockerfile) holds everything the cascade and the tiers need to
know about one kind of build: where its projects are, how its reports and summaries read,
which coverage formats it writes, which test configuration a patch may not weaken, which
files may not shadow others, which static contracts its recipes can declare. The tiers ask
``migration_evals.oracles.ecosystems`` (the registry) for the recipe's ecosystem and call
these operations; they never name a language.

Contract kinds are discovered, not listed: every module of an ecosystem's ``contracts``
subpackage that defines ``CONTRACT_KIND`` adds one, so a new recipe with a contract of its
own is new files only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from migration_evals.core.model import Changeset, Evidence
from migration_evals.core.ports import Sandbox, SandboxResult
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.build_summaries import TestTotals
from migration_evals.oracles.compiler_output import BuildOutputReader
from migration_evals.oracles.coverage import CoverageFormat
from migration_evals.oracles.deps import Resolution, ResolutionRules
from migration_evals.oracles.grading import ReportComparison, TestReport
from migration_evals.oracles.harness_files import BuildServices, MadeFiles
from migration_evals.oracles.projects import Project, ProjectSet
from migration_evals.oracles.sandbox.capture import CaptureFactory
from migration_evals.oracles.sandbox.routes import Route
from migration_evals.oracles.sources import TestLanguage
from migration_evals.oracles.syntax import SourceLanguage
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.toolchains import SideToolchain
from migration_evals.oracles.tree import TreeView

__all__ = [
    "ContractCheck",
    "ContractKind",
    "Ecosystem",
    "OutputCheck",
    "ReportFormat",
]

ContractCheck = Callable[[Recipe, Mapping[str, Any], TreeView], list[Evidence]]


@dataclass(frozen=True, slots=True)
class ContractKind:
    """One ``contract.kind`` a recipe may declare: its check, a pure function of (recipe,
    changeset params, tree), and the settings its recipes must declare with the one value
    the check implements."""

    name: str
    check: ContractCheck
    settings: tuple[tuple[str, str], ...] = ()


def all_of(*checks: ContractCheck) -> ContractCheck:
    """One check reporting every evidence of ``checks``, in order."""

    def check(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
        return [e for each in checks for e in each(recipe, params, tree)]

    return check


@dataclass(frozen=True, slots=True)
class ReportFormat:
    """A test report format (a recipe step's ``report_format``): how one run's report
    reads, whether a failed run stopped before its tests compiled, how the sandbox
    keeps the run's output (``output_events``, the name a request asks for, and
    ``capture``, the capture the sandbox is handed under that name; ``""`` and None:
    head and tail) and its own checks of a patched report against the base's
    (``grade_tests``)."""

    name: str
    read: Callable[[SandboxResult, Sequence[str]], TestReport]
    did_not_build: Callable[[int, str], bool] = lambda exit_code, output: False
    output_events: str = ""
    capture: CaptureFactory | None = None
    comparisons: tuple[ReportComparison, ...] = ()
    # The channel (``TestReport.channels``) of a module whose results were cross-checked
    # against a second record; any other channel says why they rest on the reports alone.
    cross_checked: str = ""

    def __post_init__(self) -> None:
        # A name the sandbox has no capture for would be an error at run time; a capture
        # with no name would never be asked for.
        if bool(self.output_events) != (self.capture is not None):
            raise ValueError(f"report format {self.name}: output_events needs its capture")


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """What the compile tier checks of a patched build's outputs: the files whose first
    bytes the sandbox reads after the build (globs), the check of those heads (a failure
    reason and evidence, or ``("", [])``) and what a pass says of ``count`` of them."""

    paths: tuple[str, ...]
    check: Callable[[Mapping[str, str]], tuple[str, list[Evidence]]]
    summary: Callable[[int], str]


class Ecosystem(Protocol):
    """One build ecosystem, as the cascade and the tiers use it."""

    @property
    def name(self) -> str:
        """The ecosystem's name ("maven", "go", "dockerfile")."""

    @property
    def build_system(self) -> str | None:
        """The ``sandbox.build_system`` value of its recipes; None for an ecosystem whose
        recipes build no project of their own (Dockerfiles)."""

    @property
    def project_file(self) -> str:
        """The file that makes a folder one of its projects ("pom.xml", "go.mod"; "" for
        none)."""

    @property
    def resolves_base_as_of_its_day(self) -> bool:
        """Whether the base commit resolves against the registry as it was at its commit
        (a version its build leaves open is the one its authors got)."""

    @property
    def resolves_sides_together(self) -> bool:
        """Whether a project's base and patched trees resolve at the same time: nothing
        one side's resolution makes is of use to the other's. Where the patched side's
        starts from what the base's compiled, the base resolves first."""

    @property
    def report_formats(self) -> tuple[ReportFormat, ...]:
        """The test report formats its builds write."""

    @property
    def coverage_formats(self) -> tuple[CoverageFormat, ...]:
        """The coverage formats its builds write (``coverage.format``)."""

    @property
    def setting_families(self) -> tuple[str, ...]:
        """The families of test settings it compares between base and patched trees (the
        ``integrity.settings`` values its recipes may name)."""

    @property
    def syntax_forms(self) -> tuple[str, ...]:
        """The newer forms of its language a test edit may use as syntax only (the
        ``test_policy.syntax`` values its recipes may name)."""

    @property
    def build_output(self) -> BuildOutputReader | None:
        """How its build tool's output reads: compiler diagnostics, the decisive error
        lines, where a build stopped (None: it builds no project of its own)."""

    @property
    def languages(self) -> tuple[SourceLanguage, ...]:
        """The source languages of its files, as tier 1 parses them."""

    @property
    def test_languages(self) -> tuple[TestLanguage, ...]:
        """The languages its tests are written in, as the test-edit classifier reads
        them."""

    def contract_kinds(self) -> tuple[ContractKind, ...]:
        """The contract kinds its recipes may declare."""

    def claims(self, recipe: Recipe) -> bool:
        """Whether ``recipe`` is graded in this ecosystem."""

    def find_projects(self, tree: TreeView) -> ProjectSet:
        """The projects (build roots) that own the files ``tree``'s patch touches."""

    def check_test_config(self, recipe: Recipe, tree: TreeView) -> list[Evidence]:
        """Evidence for every test-selecting or checking setting the patch weakens."""

    def check_shadowing(
        self, recipe: Recipe, tree: TreeView, dependencies: Iterable[str]
    ) -> list[Evidence]:
        """Evidence for every file that shadows the platform's or a dependency's code."""

    def build_env(self, project: Project, read: Callable[[str], bytes | None]) -> dict[str, str]:
        """What one tree's build of ``project`` adds to the recipe step's environment
        (``read`` reads that tree)."""

    def dependency_names(self, resolution: Resolution) -> Iterable[str]:
        """What a resolved build uses, as its shadowing rule names it (Java packages, Go
        module paths)."""

    def toolchain_details(self, toolchain: Mapping[str, str]) -> dict[str, str]:
        """What a tests envelope's side says of the toolchain its resolution reported,
        beside the whole of it (Maven: ``jdk``, the Java release it ran on)."""

    def printed_totals(self, output: str) -> TestTotals | None:
        """The build tool's own totals of one test run (None: it prints none)."""

    def coverage_scope(self, root: str, read: Callable[[str], bytes | None]) -> str | None:
        """What of a project's coverage is its own code (a Go module path), read with
        ``read`` at the base commit; None: all of it."""

    def output_check(self, recipe: Recipe) -> OutputCheck | None:
        """The recipe's check of the patched build's outputs (Java class-file versions);
        None: none."""

    def trial_images(self, recipe: Recipe, changeset: Changeset) -> list[str]:
        """The images a trial depends on, known before its tree is read (the toolchain
        images its sides may build in; the images a Dockerfile patch moves between)."""

    def compile_tier(self, sandbox: Sandbox, context: TrialContext) -> TierOutcome | None:
        """Tier 2 for an ecosystem that builds no project plan of its own (Dockerfiles:
        the images); None: the tier builds the recipe's projects."""

    def tests_tier(
        self,
        sandbox: Sandbox,
        baselines: BaselineCache,
        context: TrialContext,
        test_paths: Sequence[str],
    ) -> TierOutcome | None:
        """Tier 3 for an ecosystem whose tests are not the projects' suites (Dockerfiles:
        the images' smoke runs); None: the tier runs the recipe's test command."""

    # -- a build plan's parts: made files, resolution and its routes, toolchains -------

    def made_files(
        self, services: BuildServices, context: TrialContext, project: Project, image: str
    ) -> MadeFiles | None:
        """The files the harness makes for ``project`` at the base commit in ``image``
        and lays over both trees (a GOPATH-era tree's go.mod); None: none."""

    @property
    def resolution(self) -> ResolutionRules:
        """What its resolution runs mean: resolved and missing sets, versions, caches."""

    @property
    def gate_routes(self) -> tuple[Route, ...]:
        """Its registries' routes through the registry gate resolution runs reach them by."""

    def base_toolchain(self, recipe: Recipe, tree: TreeView, project: Project) -> SideToolchain:
        """The toolchain the base commit of ``project`` builds on (the patched tree's is
        the recipe's target)."""
