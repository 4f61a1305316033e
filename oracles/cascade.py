"""The cascade: walk the tiers cheapest first and stop at the first tier that does not pass.

Each tier's result becomes an ``Envelope`` carrying its list and actual cost, duration,
evidence, stamps and fabricated marks. Infrastructure faults are ``error`` envelopes, apart
from candidate failures. A content-addressed cache reuses a stored envelope when repo, base
commit, patch, recipe parameters, tier, stamps and the adapters of every tier up to it are
the same; a reused envelope costs nothing and says it was cached.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import InfrastructureError
from core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from core.specs import SpecSet
from core.stamps import stamp
from core.store import Store
from oracles.diffscreen import ScreenLimits
from oracles.repos import RepoCache
from oracles.tiers.base import TierOracle, TierOutcome, TrialContext
from oracles.workspace import Workspace

__all__ = ["Budget", "Cascade", "TrialRecord", "tier_actual_cost"]


class Budget:
    """A spending limit shared by parallel trials: reserve before spending."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.exhausted = False
        self._lock = threading.Lock()

    def allows(self, amount: float) -> bool:
        """Whether ``amount`` would fit now (a later ``reserve`` may still be refused)."""
        with self._lock:
            fits = self.limit_usd is None or self.spent_usd + amount <= self.limit_usd + 1e-12
            self.exhausted = self.exhausted or not fits
            return fits

    def reserve(self, amount: float) -> bool:
        with self._lock:
            if self.limit_usd is not None and self.spent_usd + amount > self.limit_usd + 1e-12:
                self.exhausted = True
                return False
            self.spent_usd += amount
            return True


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """A trial and the cache keys its envelopes were stored under."""

    trial: Trial
    cache_keys: Mapping[str, str] = field(default_factory=dict)


def trial_id(run_id: str, changeset_id: str) -> str:
    return "t-" + hashlib.sha256(f"{run_id}\n{changeset_id}".encode()).hexdigest()[:16]


class Cascade:
    """Runs trials through the tiers the oracle spec lists, with caching and a budget."""

    def __init__(
        self,
        specs: SpecSet,
        oracles: Sequence[TierOracle],
        repos: RepoCache,
        *,
        store: Store | None = None,
        strict: bool = False,
        scratch: Path | None = None,
    ) -> None:
        by_tier = {oracle.tier: oracle for oracle in oracles}
        self.specs = specs
        self.tiers = [spec.tier for spec in specs.oracle.tiers]
        missing = [t.value for t in self.tiers if t not in by_tier]
        if missing:
            raise ValueError(f"no oracle for tier(s): {', '.join(missing)}")
        self.oracles = by_tier
        self.repos = repos
        self.store = store
        self.strict = strict
        self.scratch = scratch
        apply = specs.oracle.section("apply")
        self.limits = ScreenLimits(int(apply["max_files"]), int(apply["max_patch_bytes"]))

    def cache_keys(self, changeset: Changeset, stamps: Stamps) -> dict[Tier, str]:
        """Each tier's content-addressed key: the inputs, the stamps, and the identity of
        that tier's adapter and of every adapter before it (asked once per trial)."""
        recipe = self.specs.recipe(changeset.recipe)
        identities = [self.oracles[t].identity_for(changeset, recipe) for t in self.tiers]
        common = {
            "repo": changeset.repo,
            "base_commit": changeset.base_commit,
            "patch_sha256": changeset.patch_sha256,
            "recipe_params": dict(changeset.recipe_params),
            "stamps": stamps.to_dict(),
        }
        return {
            tier: stamp(
                {
                    **common,
                    "tier": tier.value,
                    "adapters": identities[: index + 1],
                    # Strict judging changes only the judge's answer, so only its key.
                    "strict": self.strict if tier is Tier.JUDGE else None,
                }
            )
            for index, tier in enumerate(self.tiers)
        }

    def run_trial(self, run_id: str, changeset: Changeset, budget: Budget) -> TrialRecord:
        recipe = self.specs.recipe(changeset.recipe)
        stamps = self.specs.stamps_for(changeset.recipe)
        tid = trial_id(run_id, changeset.id)
        envelopes: list[Envelope] = []
        keys: dict[str, str] = {}
        tier_keys = self.cache_keys(changeset, stamps)
        material: dict[str, Any] = {}
        workspace = Workspace(
            self.repos, changeset, self.limits, scratch=self.scratch, run_id=run_id
        )
        with workspace:
            context = TrialContext(changeset, recipe, self.specs, workspace, envelopes, self.strict)
            stopped = False
            for tier in self.tiers:
                slot = _Slot(tid, changeset, tier, stamps)
                if stopped:
                    envelopes.append(slot.envelope(TierOutcome(Verdict.SKIPPED, "not reached")))
                    continue
                envelope, key = self._tier(slot, context, budget, tier_keys[tier], material)
                if key is not None:
                    keys[tier.value] = key
                envelopes.append(envelope)
                stopped = envelope.verdict is not Verdict.PASS
        return TrialRecord(Trial(tid, run_id, changeset, tuple(envelopes)), keys)

    def _tier(
        self,
        slot: _Slot,
        context: TrialContext,
        budget: Budget,
        key: str,
        material: dict[str, Any],
    ) -> tuple[Envelope, str | None]:
        """One tier's envelope, reused from the cache when its key is known there, and the
        key it is stored under (None: not reusable)."""
        spec = self.specs.oracle.tier(slot.tier)
        if not budget.allows(spec.list_cost_usd):
            # Nothing more is spent on a trial the budget cannot pay for, not even on
            # working out its cache key (dependency resolution).
            return slot.envelope(TierOutcome(Verdict.INCONCLUSIVE, _BUDGET_REASON)), None
        try:
            material.update(self.oracles[slot.tier].key_material(context))
        except InfrastructureError as exc:
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}")
            return slot.envelope(outcome, adapter=self.oracles[slot.tier].identity), key
        if material:
            key = stamp({"key": key, "material": material})
        hit = self.store.cached_envelope(key) if self.store else None
        envelope = slot.reuse(hit) if hit else self._run_tier(slot, context, budget)
        return envelope, (key if envelope.reason != _BUDGET_REASON else None)

    def _run_tier(self, slot: _Slot, context: TrialContext, budget: Budget) -> Envelope:
        spec = self.specs.oracle.tier(slot.tier)
        if not budget.reserve(spec.list_cost_usd):
            return slot.envelope(TierOutcome(Verdict.INCONCLUSIVE, _BUDGET_REASON))
        oracle = self.oracles[slot.tier]
        started = time.perf_counter()
        try:
            outcome = oracle.evaluate(context)
        except InfrastructureError as exc:
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}")
        duration = time.perf_counter() - started
        return slot.envelope(
            outcome,
            list_cost=spec.list_cost_usd,
            actual_cost=tier_actual_cost(slot.tier, outcome, duration, context.usd_per_second),
            duration=duration,
            adapter=oracle.identity,
        )


# Tiers billed by the tokens of their answers, not by the time they hold a sandbox: when
# they report no cost (an infrastructure error before any answer), they cost nothing
# measurable, never their wait time at the sandbox's rate.
_TOKEN_BILLED = frozenset({Tier.JUDGE})


def tier_actual_cost(
    tier: Tier, outcome: TierOutcome, duration_s: float, usd_per_second: float
) -> float:
    """What a tier run cost: what it reports, else its time at the sandbox's rate."""
    if outcome.actual_cost_usd is not None:
        return outcome.actual_cost_usd
    return 0.0 if tier in _TOKEN_BILLED else duration_s * usd_per_second


_BUDGET_REASON = "budget exhausted before this tier"


@dataclass(frozen=True, slots=True)
class _Slot:
    """Where an envelope belongs: trial, changeset and tier, under which stamps."""

    trial_id: str
    changeset: Changeset
    tier: Tier
    stamps: Stamps

    def envelope(
        self,
        outcome: TierOutcome,
        *,
        list_cost: float = 0.0,
        actual_cost: float = 0.0,
        duration: float = 0.0,
        adapter: str = "",
    ) -> Envelope:
        return Envelope(
            trial_id=self.trial_id,
            changeset_id=self.changeset.id,
            tier=self.tier,
            verdict=outcome.verdict,
            reason=outcome.reason,
            list_cost_usd=list_cost,
            actual_cost_usd=actual_cost,
            duration_s=duration,
            stamps=self.stamps,
            evidence=outcome.evidence,
            fabricated=outcome.fabricated,
            adapter=adapter,
            details=dict(outcome.details),
        )

    def reuse(self, cached: Envelope) -> Envelope:
        """A cached envelope under this trial: free, marked cached, origin kept."""
        details = dict(cached.details)
        details["cached_from"] = {
            "trial_id": cached.trial_id,
            "list_cost_usd": cached.list_cost_usd,
            "actual_cost_usd": cached.actual_cost_usd,
            "duration_s": cached.duration_s,
        }
        return replace(
            cached,
            trial_id=self.trial_id,
            changeset_id=self.changeset.id,
            list_cost_usd=0.0,
            actual_cost_usd=0.0,
            duration_s=0.0,
            cached=True,
            details=details,
        )
