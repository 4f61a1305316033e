"""What every tier shares: the trial context it reads and the outcome it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from migration_evals.core.model import Changeset, Envelope, Evidence, FabricatedMark, Tier, Verdict
from migration_evals.core.specs import Recipe, SpecSet, TierSpec
from migration_evals.oracles.run_logs import RunLog
from migration_evals.oracles.workspace import Workspace

__all__ = ["TierOracle", "TierOutcome", "TrialContext"]


@dataclass(frozen=True, slots=True)
class TierOutcome:
    """A tier's conclusion before the cascade wraps it in an envelope."""

    verdict: Verdict
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()
    # None: the cascade charges measured wall time at the infrastructure rate.
    actual_cost_usd: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    fabricated: tuple[FabricatedMark, ...] = ()

    @classmethod
    def passed(cls, reason: str = "", **kwargs: Any) -> TierOutcome:
        return cls(Verdict.PASS, reason, **kwargs)

    @classmethod
    def failed(cls, reason: str, evidence: Sequence[Evidence] = (), **kwargs: Any) -> TierOutcome:
        return cls(Verdict.FAIL, reason, tuple(evidence), **kwargs)


@dataclass
class TrialContext:
    """Everything a tier may read about the trial it is grading."""

    changeset: Changeset
    recipe: Recipe
    specs: SpecSet
    workspace: Workspace
    earlier: list[Envelope] = field(default_factory=list)
    strict: bool = False
    # Inside a job with attempts left: an unavailable outside API is not waited for in
    # this thread (``ServiceUnavailableError`` escapes the cascade; the job is put back).
    defer_unavailable: bool = False
    # Work tiers share within one trial (the build plan of tiers 2-3), made on first use.
    memo: dict[str, Any] = field(default_factory=dict)
    # Every sandboxed run the tiers make or reuse, kept as artifacts by the cascade.
    logs: RunLog = field(default_factory=RunLog)

    def tier_spec(self, tier: Tier) -> TierSpec:
        return self.specs.oracle.tier(tier)

    @property
    def usd_per_second(self) -> float:
        return self.specs.oracle.sandbox.usd_per_second


class TierOracle(Protocol):
    """One tier of the cascade."""

    @property
    def tier(self) -> Tier: ...

    @property
    def identity(self) -> str:
        """Names the tier's implementation and adapter."""
        ...

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        """``identity`` plus what a trial's result also depends on (the content ids of
        sandbox images); part of every cache key."""
        ...

    def key_material(self, context: TrialContext) -> Mapping[str, Any]:
        """What this tier's result also depends on beyond the changeset, known only once
        the earlier tiers passed (the resolved dependency sets); part of its cache key and
        of every later tier's."""
        ...

    def evaluate(self, context: TrialContext) -> TierOutcome: ...
