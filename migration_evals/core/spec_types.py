"""Typed, frozen views of the specs: what ``migration_evals.core.specs`` builds from each
file right after validating it, and the only form in which the rest of the code reads them.

Optional sections are ``None`` (never a missing key) and defaults are applied here, once,
so a reader never repeats one. A recipe's contract keeps the settings of its kind as a
mapping: contract kinds are plugged in by the build ecosystems, and each reads its own
kind's settings (``ContractSpec.settings``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Tier

__all__ = [
    "DEFAULT_MAX_COVERAGE_DROP",
    "DEFAULT_REPORT_FORMAT",
    "Alternative",
    "ApplyLimits",
    "BaseImages",
    "BaseJdk",
    "ClassFilesRule",
    "CommandStep",
    "ContractSpec",
    "CoverageStep",
    "EditPolicy",
    "GateThresholds",
    "GoldPolicySpec",
    "HypothesisGroups",
    "ImageContractSpec",
    "IntegritySpec",
    "JudgeModelSpec",
    "JudgePrompts",
    "JudgeProvider",
    "JudgeRole",
    "JudgeSettings",
    "Judging",
    "RecipeJudge",
    "RecipeSandbox",
    "RewriteGroupSpec",
    "SandboxSpec",
    "SandboxStep",
    "TestPolicySpec",
    "TestsStep",
    "TierSpec",
]

# A step without ``report_format`` is graded by its exit status alone.
DEFAULT_REPORT_FORMAT = "exit-code"
# Percentage points the main code's coverage may fall when a recipe names no limit.
DEFAULT_MAX_COVERAGE_DROP = 1.0

_EMPTY: Mapping[str, Any] = MappingProxyType({})

T = TypeVar("T")

JudgeRole = Literal["primary", "secondary"]
# The recipe steps a tier runs in the sandbox (resolution is the build plan's own).
SandboxStep = Literal["compile", "tests"]
Alternative = Literal["two-sided", "larger", "smaller"]


class Judging(StrEnum):
    """``judging`` of the oracle spec: ``none`` pre-registers an evaluation without an
    LLM judge (trials end at tier 3)."""

    LLM = "llm"
    NONE = "none"


class JudgeProvider(StrEnum):
    ANTHROPIC = "anthropic"
    OPENAI = "openai"


class EditPolicy(StrEnum):
    """``test_policy.edits``: tier 3 grades the base commit's tests (``base-suite``, the
    patch's edits of them only where classified usable), or any edit fails."""

    BASE_SUITE = "base-suite"
    FORBIDDEN = "forbidden"


# -- the oracle spec ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TierSpec:
    tier: Tier
    list_cost_usd: float
    timeout_s: float
    reach_rate: float
    reruns: int = 0


@dataclass(frozen=True, slots=True)
class ApplyLimits:
    """``apply``: how large a patch tier 1 screens before refusing it."""

    max_files: int
    max_patch_bytes: int


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """``sandbox``: the limits of every sandboxed run and the infrastructure cost rate."""

    memory_mb: int
    cpus: float
    pids_limit: int
    tmpfs_mb: int
    output_limit_bytes: int
    workspace_mb: int
    workspace_inodes: int
    workspace_depth: int
    usd_per_second: float


@dataclass(frozen=True, slots=True)
class JudgeModelSpec:
    provider: JudgeProvider
    model: str
    input_usd_per_mtok: float
    output_usd_per_mtok: float


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """``judge``: the two judges, how they are asked, and the prompt files (paths under
    the specs folder; their text is ``OracleSpec.prompts``)."""

    primary: JudgeModelSpec
    secondary: JudgeModelSpec
    temperature: float | None  # None sends no temperature
    max_tokens: int
    max_retries: int
    system_prompt: str
    prompt_template: str

    def role(self, name: JudgeRole) -> JudgeModelSpec:
        return self.primary if name == "primary" else self.secondary


@dataclass(frozen=True, slots=True)
class JudgePrompts:
    """The text of the judge's prompt files, inlined into the oracle's stamp."""

    system_prompt: str
    prompt_template: str


@dataclass(frozen=True, slots=True)
class GateThresholds:
    """``gate``: the publication gate's thresholds."""

    min_trials: int
    judge_kappa_floor: float
    judge_kappa_min_n: int
    gold_correlation_floor: float
    gold_min_n: int
    contamination_alpha: float
    contamination_min_bucket: int
    max_infra_error_rate: float

    def to_dict(self) -> dict[str, Any]:
        """The thresholds as reports and bundles write them (the spec's keys)."""
        return {
            "min_trials": self.min_trials,
            "judge_kappa_floor": self.judge_kappa_floor,
            "judge_kappa_min_n": self.judge_kappa_min_n,
            "gold_correlation_floor": self.gold_correlation_floor,
            "gold_min_n": self.gold_min_n,
            "contamination_alpha": self.contamination_alpha,
            "contamination_min_bucket": self.contamination_min_bucket,
            "max_infra_error_rate": self.max_infra_error_rate,
        }


@dataclass(frozen=True, slots=True)
class GoldPolicySpec:
    """``gold``: how long a merge must survive, how much of it, and how many labelled
    agent PRs unlock retroactive scoring."""

    survival_window_days: int
    survival_threshold: float
    retro_unlock_prs: int


# -- a recipe ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContractSpec:
    """``contract``: the kind that checks the patch (an ecosystem's), the construct
    families the recipe does not explain, and the kind's own settings."""

    kind: str
    outside: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def setting(self, name: str, kind: type[T]) -> T | None:
        """The kind's setting ``name`` as a ``kind`` (None when the recipe leaves it out):
        the one way a contract kind reads its own settings."""
        value = self.settings.get(name)
        if value is None:
            return None
        if not isinstance(value, kind):
            raise SpecError(
                f"contract of kind {self.kind}",
                f"contract.{name}",
                f"a {kind.__name__}, not {value!r}",
            )
        return value

    def required_setting(self, name: str, kind: type[T]) -> T:
        """``setting``, for one the kind cannot check a patch without."""
        value = self.setting(name, kind)
        if value is None:
            raise SpecError(
                f"contract of kind {self.kind}",
                f"contract.{name}",
                f"a {kind.__name__}: the {self.kind} contract needs it; add it to the recipe",
            )
        return value


@dataclass(frozen=True, slots=True)
class CommandStep:
    """A sandbox step (``resolve``, ``compile``): the command, the files it leaves that
    are collected, how its report is read, its environment, and the exit status meaning
    "built; the checks have findings" (go vet)."""

    command: tuple[str, ...]
    collect: tuple[str, ...] = ()
    report_format: str = DEFAULT_REPORT_FORMAT
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    findings_exit: int | None = None


@dataclass(frozen=True, slots=True)
class CoverageStep:
    """How the tests step measures coverage: the wrapper script the command runs under
    (as ``"$@"``), the report it writes, its format, and the tools resolution fetches."""

    format: str
    report: str
    wrapper: str
    tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TestsStep(CommandStep):
    __test__ = False

    coverage: CoverageStep | None = None


@dataclass(frozen=True, slots=True)
class ClassFilesRule:
    """``sandbox.class_files``: every class file under ``paths`` has version ``major``."""

    paths: tuple[str, ...]
    major: int


@dataclass(frozen=True, slots=True)
class BaseJdk:
    jdk: int
    image: str


@dataclass(frozen=True, slots=True)
class BaseImages:
    """``sandbox.base_images``: the base commit builds on the toolchain its own build
    declares, chosen by ``select`` among ``jdks`` (``default`` when it declares none)."""

    select: Literal["java-level"]
    default: int
    jdks: tuple[BaseJdk, ...]


@dataclass(frozen=True, slots=True)
class ImageContractSpec:
    """``sandbox.image_contract``: how base and patched images of a Dockerfile compare."""

    labels: tuple[str, ...] = ()
    env_ignore: tuple[str, ...] = ()
    smoke_command: tuple[str, ...] = ()
    stay_up_s: float = 5.0
    smoke_script: str | None = None


@dataclass(frozen=True, slots=True)
class RecipeSandbox:
    """``sandbox``: the image the patched tree builds in and the steps run there."""

    image: str
    compile: CommandStep
    tests: TestsStep
    build_system: str | None = None
    resolve: CommandStep | None = None
    class_files: ClassFilesRule | None = None
    build_dockerfile: bool = False
    base_images: BaseImages | None = None
    image_contract: ImageContractSpec | None = None

    def step(self, name: SandboxStep) -> CommandStep:
        return self.compile if name == "compile" else self.tests


@dataclass(frozen=True, slots=True)
class IntegritySpec:
    """``integrity``: the test-configuration families tier 1 compares between base and
    patched trees, and the shadowing check."""

    settings: tuple[str, ...]
    shadowing: bool
    forbidden_jvm_args: tuple[str, ...] = ()
    shadowed_packages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RewriteGroupSpec:
    """One of ``test_policy.rewrites``: an import, what it may become, and the calls it
    implies (source with ``$placeholders``)."""

    import_: str
    to: tuple[str, ...] = ()
    calls: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class TestPolicySpec:
    __test__ = False

    test_paths: tuple[str, ...]
    edits: EditPolicy
    rewrites: tuple[RewriteGroupSpec, ...] = ()
    syntax: tuple[str, ...] = ()
    max_coverage_drop: float = DEFAULT_MAX_COVERAGE_DROP


@dataclass(frozen=True, slots=True)
class RecipeJudge:
    """``judge``: the rubric, and its point for test diffs (shown when tier 3 graded the
    patch's own test edits)."""

    rubric: str
    test_changes: str | None = None


# -- a hypothesis ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HypothesisGroups:
    """The two groups compared: each a mapping of trial filters (key -> value or values)."""

    a: Mapping[str, Any]
    b: Mapping[str, Any]
