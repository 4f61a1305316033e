"""The run plan: how a run is graded, decided once and carried by every job of it.

A ``RunPlan`` is built once from the settings and the command line (``plan_of``), stored
with the run (its options) and sent with every job that grades part of it: this
process's threads, Celery trial jobs, the App's grade jobs. Whoever grades builds its
cascade from the plan (``Plan.settings_for`` over its own settings), never from its own
environment, so a worker started without ``MIGRATION_EVALS_MODE`` still grades a
``--sandbox live`` run live.

The plan holds modes and endpoints, never secrets: registry URLs lose their user name and
password, and API keys and tokens stay in each process's own settings. A worker whose
registry URL is the plan's (credentials apart) uses its own, with its credentials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from migration_evals.core.errors import ConfigError
from migration_evals.core.model import Stamps
from migration_evals.core.settings import CassetteMode, DependencySettings, Executor, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json
from migration_evals.oracles.sandbox.registry import redact_url
from migration_evals.oracles.tiers.sandboxed import DOCKERFILE_IMAGE
from migration_evals.oracles.toolchains import recipe_toolchain_images

__all__ = ["PLAN_VERSION", "PlanDependencies", "RunPlan", "plan_of"]

PLAN_VERSION = 1


@dataclass(frozen=True, slots=True)
class PlanDependencies:
    """Where dependency resolution fetches from (credentials left out)."""

    maven_mirror: str = DependencySettings().maven_mirror
    goproxy: str = DependencySettings().goproxy
    offline: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"maven_mirror": self.maven_mirror, "goproxy": self.goproxy, "offline": self.offline}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanDependencies:
        return cls(str(data["maven_mirror"]), str(data["goproxy"]), bool(data["offline"]))

    def applied_to(self, own: DependencySettings) -> DependencySettings:
        """``own`` with the plan's registries; a registry that is ``own``'s, credentials
        apart, keeps ``own``'s URL (and so its credentials)."""

        def chosen(mine: str, planned: str) -> str:
            return mine if redact_url(mine) == planned else planned

        return replace(
            own,
            maven_mirror=chosen(own.maven_mirror, self.maven_mirror),
            goproxy=chosen(own.goproxy, self.goproxy),
            offline=self.offline,
        )


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Per-port modes, judging, budget, executor, the specs' stamps, images, registries."""

    sandbox: CassetteMode
    judge: CassetteMode
    github: CassetteMode
    strict: bool = False
    budget_usd: float | None = None
    executor: Executor = Executor.EMBEDDED
    jobs: int = 1
    # The stamps the run was planned under: the oracle spec's, the hypotheses' and each
    # recipe's (name -> stamp). A worker whose specs differ refuses the plan.
    oracle_stamp: str = ""
    hypotheses_stamp: str = ""
    recipe_stamps: Mapping[str, str] = field(default_factory=dict)
    images: tuple[str, ...] = ()  # the recipes' sandbox images, by name
    # Each image's content id where the run was planned (``Cascades.pinned``): a worker
    # whose engine holds another image under that name refuses the plan. Empty when the
    # planning process could not resolve it (no engine): the trial's envelope says why.
    image_ids: Mapping[str, str] = field(default_factory=dict)
    dependencies: PlanDependencies = field(default_factory=PlanDependencies)
    image_registry: str | None = None
    anthropic_base_url: str | None = None
    openai_base_url: str | None = None
    github_api_url: str = "https://api.github.com"

    def image_problem(self, image: str, found_id: str) -> str | None:
        """None when ``found_id`` is the content id the plan pinned for ``image`` (or the
        plan pinned none); otherwise how they differ."""
        pinned = self.image_ids.get(image, "")
        if not pinned or pinned == found_id:
            return None
        return (
            f"image {image} is {_short(found_id)} here but the run was planned with "
            f"{_short(pinned)}: give this worker the same image (`migration-evals images "
            "build` from the same specs, or the same MIGRATION_EVALS_IMAGE_REGISTRY)"
        )

    def stamps_for(self, recipe: str) -> Stamps:
        if recipe not in self.recipe_stamps:
            raise ConfigError(f"the run plan has no stamp for recipe {recipe!r}")
        return Stamps(self.oracle_stamp, self.recipe_stamps[recipe], self.hypotheses_stamp)

    def specs_problem(self, specs: SpecSet, recipe: str | None) -> str | None:
        """None when ``specs`` are the ones the plan was made under, as far as a trial
        of ``recipe`` (None: of no recipe in particular) depends on them; otherwise how
        they differ."""
        if specs.oracle_stamp != self.oracle_stamp:
            return f"oracle {specs.oracle_stamp[:12]} vs {self.oracle_stamp[:12]}"
        if specs.hypotheses_stamp != self.hypotheses_stamp:
            return f"hypotheses {specs.hypotheses_stamp[:12]} vs {self.hypotheses_stamp[:12]}"
        if recipe is None:
            return None
        mine = specs.recipes.get(recipe)
        planned = self.recipe_stamps.get(recipe, "missing")
        if mine is None or mine.stamp != planned:
            have = mine.stamp[:12] if mine is not None else "missing"
            return f"recipe {recipe} {have} vs {planned[:12]}"
        return None

    def settings_for(self, own: Settings) -> Settings:
        """``own`` (this process's folders, engine, credentials) graded as the plan says."""
        return own.with_overrides(
            mode=self.judge,
            sandbox_mode=self.sandbox,
            strict_judge=self.strict,
            budget_usd=self.budget_usd,
            jobs=self.jobs,
            dependencies=self.dependencies.applied_to(own.dependencies),
            image_registry=self.image_registry,
            anthropic_base_url=self.anthropic_base_url,
            openai_base_url=self.openai_base_url,
            github_app=replace(own.github_app, api_url=self.github_api_url),
            scale=replace(own.scale, executor=self.executor),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": PLAN_VERSION,
            "modes": {
                "sandbox": self.sandbox.value,
                "judge": self.judge.value,
                "github": self.github.value,
            },
            "strict": self.strict,
            "budget_usd": self.budget_usd,
            "executor": self.executor.value,
            "jobs": self.jobs,
            "stamps": {
                "oracle": self.oracle_stamp,
                "hypotheses": self.hypotheses_stamp,
                "recipes": dict(sorted(self.recipe_stamps.items())),
            },
            "images": list(self.images),
            "image_ids": dict(sorted(self.image_ids.items())),
            "dependencies": self.dependencies.to_dict(),
            "endpoints": {
                "image_registry": self.image_registry,
                "anthropic": self.anthropic_base_url,
                "openai": self.openai_base_url,
                "github": self.github_api_url,
            },
        }

    @property
    def key(self) -> str:
        """The plan as canonical JSON: equal plans, equal keys."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunPlan:
        if data.get("version") != PLAN_VERSION:
            raise ConfigError(
                f"run plan version {data.get('version')!r}; this release reads {PLAN_VERSION}"
            )
        try:
            modes, stamps, endpoints = data["modes"], data["stamps"], data["endpoints"]
            budget = data["budget_usd"]
            return cls(
                sandbox=CassetteMode(modes["sandbox"]),
                judge=CassetteMode(modes["judge"]),
                github=CassetteMode(modes["github"]),
                strict=bool(data["strict"]),
                budget_usd=None if budget is None else float(budget),
                executor=Executor(data["executor"]),
                jobs=int(data["jobs"]),
                oracle_stamp=str(stamps["oracle"]),
                hypotheses_stamp=str(stamps["hypotheses"]),
                recipe_stamps={str(k): str(v) for k, v in stamps["recipes"].items()},
                images=tuple(str(i) for i in data["images"]),
                # Absent from plans stored before images were pinned: nothing to compare.
                image_ids={str(k): str(v) for k, v in data.get("image_ids", {}).items()},
                dependencies=PlanDependencies.from_dict(data["dependencies"]),
                image_registry=endpoints["image_registry"],
                anthropic_base_url=endpoints["anthropic"],
                openai_base_url=endpoints["openai"],
                github_api_url=str(endpoints["github"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"malformed run plan: {type(exc).__name__}: {exc}") from exc


def _short(image_id: str) -> str:
    return image_id.removeprefix("sha256:")[:12]


def _images(specs: SpecSet) -> tuple[str, ...]:
    """The images the recipes build in: each one's target and its base toolchains'."""
    named = {
        image for recipe in specs.recipes.values() for image in recipe_toolchain_images(recipe)
    }
    return tuple(sorted(named - {DOCKERFILE_IMAGE}))


def plan_of(settings: Settings, specs: SpecSet) -> RunPlan:
    """The plan the settings (environment and command line, resolved) describe."""
    deps = settings.dependencies
    return RunPlan(
        sandbox=settings.effective_sandbox_mode,
        judge=settings.mode,
        github=settings.mode,
        strict=settings.strict_judge,
        budget_usd=settings.budget_usd,
        executor=settings.scale.executor,
        jobs=settings.jobs,
        oracle_stamp=specs.oracle_stamp,
        hypotheses_stamp=specs.hypotheses_stamp,
        recipe_stamps={name: recipe.stamp for name, recipe in specs.recipes.items()},
        images=_images(specs),
        dependencies=PlanDependencies(
            redact_url(deps.maven_mirror), redact_url(deps.goproxy), deps.offline
        ),
        image_registry=settings.image_registry,
        anthropic_base_url=settings.anthropic_base_url,
        openai_base_url=settings.openai_base_url,
        github_api_url=settings.github_app.api_url,
    )
