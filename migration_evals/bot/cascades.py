"""Cascades built from run plans: one per plan in a process, shared by its threads.

Whoever grades (this process's runner, a Celery worker, the App) asks ``Cascades`` for
the cascade of the job's plan. It is built over this process's own settings (folders,
engine, credentials) with the plan's modes and endpoints, never from the process's own
modes. ``refusal`` says why this process cannot grade a plan as asked: other specs, a
live port it has no credentials for, a live sandbox with no engine answering. A refused
plan is never graded some other way (no replay in place of live).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from migration_evals.bot.plan import RunPlan
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.errors import ConfigError, MigrationEvalsError
from migration_evals.core.ports import Sandbox
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Cascade
from migration_evals.oracles.sandbox import UnavailableSandbox
from migration_evals.oracles.sandbox.cassettes import RecordingSandbox
from migration_evals.oracles.toolchains import recipe_toolchain_images

__all__ = ["CascadeBuilder", "Cascades", "PlanRefusedError"]

# (this process's settings with the plan applied, store, specs) -> the cascade and its sandbox
CascadeBuilder = Callable[[Settings, Store, SpecSet], BuiltCascade]


class PlanRefusedError(ConfigError):
    """This process cannot grade the plan as asked (the message says why)."""


def _build(settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
    return build_cascade(settings, store=store, specs=specs)


def unavailable_sandbox(sandbox: Sandbox) -> str | None:
    """Why the sandbox cannot run anything, when it cannot."""
    if isinstance(sandbox, RecordingSandbox):
        sandbox = sandbox.live  # a recording sandbox wraps the live one
    return sandbox.reason if isinstance(sandbox, UnavailableSandbox) else None


def _image_id(sandbox: Sandbox, image: str) -> str:
    """``image``'s content id as this process's sandbox sees it; empty when it cannot say
    (no engine, an image it does not have, a replayed answer that was never recorded)."""
    try:
        found = sandbox.resolve(image)
    except MigrationEvalsError:
        return ""
    return "" if found.fabricated else found.id


class Cascades:
    """The cascades of the plans this process grades, built on first use."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        specs: SpecSet,
        *,
        build: CascadeBuilder | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.specs = specs
        self._build = build or _build
        self._built: dict[str, BuiltCascade] = {}
        self._lock = threading.Lock()

    def for_plan(self, plan: RunPlan) -> Cascade:
        """The plan's cascade."""
        return self.built_for(plan).cascade

    def built_for(self, plan: RunPlan) -> BuiltCascade:
        """The plan's cascade and its sandbox. A sandbox without an engine is not kept:
        the engine may answer for the next job."""
        key = replace(plan, image_ids={}).key  # pinning images changes no adapter
        with self._lock:
            built = self._built.get(key)
            if built is None:
                built = self._build(plan.settings_for(self.settings), self.store, self.specs)
                if unavailable_sandbox(built.sandbox) is None:
                    self._built[key] = built
            return built

    def built(self) -> list[BuiltCascade]:
        with self._lock:
            return list(self._built.values())

    def refusal(self, plan: RunPlan, recipe: str | None) -> str | None:
        """None when this process can grade a trial of ``recipe`` as ``plan`` says;
        otherwise why not."""
        differ = plan.specs_problem(self.specs, recipe)
        if differ is not None:
            return f"this worker's specs differ from the run's ({differ}); deploy the same specs/"
        try:
            sandbox = self.built_for(plan).sandbox
        except MigrationEvalsError as exc:
            return str(exc)
        why = unavailable_sandbox(sandbox)
        if why is not None and plan.sandbox is not CassetteMode.REPLAY:
            return f"the plan's sandbox is {plan.sandbox.value} but {why}"
        return self._image_refusal(plan, sandbox, recipe)

    def _image_refusal(self, plan: RunPlan, sandbox: Sandbox, recipe: str | None) -> str | None:
        spec = self.specs.recipes.get(recipe) if recipe is not None else None
        for image in recipe_toolchain_images(spec) if spec is not None else ():
            if image not in plan.image_ids:
                continue
            found = _image_id(sandbox, image)
            # Not resolvable here: the trial itself ends as an error naming the image.
            problem = plan.image_problem(image, found) if found else None
            if problem is not None:
                return problem
        return None

    def pinned(self, plan: RunPlan) -> RunPlan:
        """``plan`` with the content id of each of its images as this process resolves
        them, so that every worker grades in the image the run was planned with."""
        sandbox = self.built_for(plan).sandbox
        found = {image: _image_id(sandbox, image) for image in plan.images}
        return replace(plan, image_ids={image: id_ for image, id_ in found.items() if id_})
