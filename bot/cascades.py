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

from bot.plan import RunPlan
from bot.wiring import build_cascade
from core.errors import ConfigError, MigrationEvalsError
from core.model import Tier
from core.settings import CassetteMode, Settings
from core.specs import SpecSet
from core.store import Store
from oracles.cascade import Cascade
from oracles.sandbox import UnavailableSandbox

__all__ = ["CascadeBuilder", "Cascades", "PlanRefusedError"]

# (this process's settings with the plan applied, store, specs) -> cascade
CascadeBuilder = Callable[[Settings, Store, SpecSet], Cascade]


class PlanRefusedError(ConfigError):
    """This process cannot grade the plan as asked (the message says why)."""


def _build(settings: Settings, store: Store, specs: SpecSet) -> Cascade:
    return build_cascade(settings, store=store, specs=specs)


def unavailable_sandbox(cascade: Cascade) -> str | None:
    """Why the cascade's sandbox cannot run anything, when it cannot."""
    oracle = cascade.oracles.get(Tier.COMPILE)
    sandbox = getattr(oracle, "sandbox", None)
    sandbox = getattr(sandbox, "live", sandbox)  # a recording sandbox wraps the live one
    return sandbox.reason if isinstance(sandbox, UnavailableSandbox) else None


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
        self._built: dict[str, Cascade] = {}
        self._lock = threading.Lock()

    def for_plan(self, plan: RunPlan) -> Cascade:
        """The plan's cascade. A sandbox without an engine is not kept: the engine may
        answer for the next job."""
        with self._lock:
            cascade = self._built.get(plan.key)
            if cascade is None:
                cascade = self._build(plan.settings_for(self.settings), self.store, self.specs)
                if unavailable_sandbox(cascade) is None:
                    self._built[plan.key] = cascade
            return cascade

    def built(self) -> list[Cascade]:
        with self._lock:
            return list(self._built.values())

    def refusal(self, plan: RunPlan, recipe: str | None) -> str | None:
        """None when this process can grade a trial of ``recipe`` as ``plan`` says;
        otherwise why not."""
        differ = plan.specs_problem(self.specs, recipe)
        if differ is not None:
            return f"this worker's specs differ from the run's ({differ}); deploy the same specs/"
        try:
            cascade = self.for_plan(plan)
        except MigrationEvalsError as exc:
            return str(exc)
        why = unavailable_sandbox(cascade)
        if why is not None and plan.sandbox is not CassetteMode.REPLAY:
            return f"the plan's sandbox is {plan.sandbox.value} but {why}"
        return None

    def honoured(self, plan: RunPlan, recipe: str | None) -> Cascade:
        """The plan's cascade; ``PlanRefusedError`` when this process cannot honour it."""
        why = self.refusal(plan, recipe)
        if why is not None:
            raise PlanRefusedError(f"this worker cannot honour the run plan: {why}")
        return self.for_plan(plan)
