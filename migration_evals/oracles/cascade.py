"""The cascade: walk the tiers cheapest first and stop at the first tier that does not pass.

Each tier's result becomes an ``Envelope`` carrying its list and actual cost, duration,
evidence, stamps and fabricated marks. Infrastructure faults are ``error`` envelopes, apart
from candidate failures. A content-addressed cache reuses a stored envelope when repo, base
commit, patch, recipe parameters, tier, stamps and the adapters of every tier up to it are
the same; a reused envelope costs nothing and says it was cached.

Inside a job with attempts left (``defer=True``), an outside API that is unavailable
(``ServiceUnavailableError``: a judge API timing out, refusing, rate limiting) is not
waited for: the trial stops with ``TrialDeferredError``, whose job is put back, the
reservation of the tier that could not run is released, and the envelopes already made
travel with the job (``Carried``). The next attempt reuses each of them whose cache key is
unchanged (the cache itself only holds envelopes of trials in the ledger), so tiers 1-3 do
not run again and their cost is counted once. On a job's last attempt, and outside jobs,
the tier records ``error`` as for any infrastructure fault.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from migration_evals.core.artifacts import (
    ArtifactKind,
    ArtifactRef,
    ArtifactStore,
    HeldArtifacts,
    Prepared,
    prepare,
)
from migration_evals.core.errors import InfrastructureError, ServiceUnavailableError
from migration_evals.core.model import (
    Changeset,
    Envelope,
    Stamps,
    Tier,
    Trial,
    Verdict,
    patch_bytes,
)
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import stamp
from migration_evals.core.trial_queries import TrialQueries
from migration_evals.oracles.diffscreen import ScreenLimits
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.run_logs import keep_logs
from migration_evals.oracles.tiers.base import TierOracle, TierOutcome, TrialContext
from migration_evals.oracles.workspace import Workspace

__all__ = [
    "Budget",
    "Carried",
    "Cascade",
    "TrialDeferredError",
    "TrialRecord",
    "tier_actual_cost",
]


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

    def release(self, amount: float) -> None:
        """Give back a reservation that was not spent (a tier that could not run)."""
        with self._lock:
            self.spent_usd = max(0.0, self.spent_usd - amount)

    def charge(self, amount: float) -> None:
        """Count ``amount`` spent elsewhere (an earlier attempt under another budget):
        it was spent, so it is never refused; an overrun exhausts the budget."""
        with self._lock:
            self.spent_usd += amount
            if self.limit_usd is not None and self.spent_usd > self.limit_usd + 1e-12:
                self.exhausted = True


@dataclass(frozen=True, slots=True)
class Carried:
    """The envelopes an attempt of a trial made before it was put back, for the next one.

    ``tiers`` maps a tier to the cache key and the envelope made under it; ``run_id`` is
    the run whose budget paid for them (the next attempt of a run's trial job reuses that
    run and its reservations; a grade job's next attempt is a new run, charged anew).
    """

    run_id: str
    tiers: Mapping[Tier, tuple[str, Envelope]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "tiers": {
                tier.value: {"key": key, "envelope": envelope.to_dict()}
                for tier, (key, envelope) in self.tiers.items()
            },
        }

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> Carried | None:
        """From ``to_dict``'s form (a job's payload); None when there is none."""
        if not data:
            return None
        tiers = {
            Tier(name): (str(item["key"]), Envelope.from_dict(item["envelope"]))
            for name, item in dict(data.get("tiers", {})).items()
        }
        return cls(str(data["run_id"]), tiers)


class TrialDeferredError(ServiceUnavailableError):
    """A trial stopped because an outside API is unavailable, to be tried again later.

    ``carried``: the envelopes made so far; ``retry_after_s``: the wait the API asked for.
    """

    def __init__(
        self, message: str, carried: Carried, *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message, retry_after_s=retry_after_s)
        self.carried = carried


class _TierDeferred(Exception):
    """Raised by ``_run_tier`` to ``run_trial``, which knows what the trial made so far."""

    def __init__(self, tier: Tier, cause: ServiceUnavailableError) -> None:
        super().__init__(str(cause))
        self.tier = tier
        self.cause = cause


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """A trial and the cache keys its envelopes were stored under; ``artifacts``: those
    its envelopes name that are still to be kept (``run_trial(hold_artifacts=True)``)."""

    trial: Trial
    cache_keys: Mapping[str, str] = field(default_factory=dict)
    artifacts: tuple[Prepared, ...] = ()


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
        trials: TrialQueries | None = None,
        strict: bool = False,
        scratch: Path | None = None,
        artifacts: ArtifactStore | None = None,
    ) -> None:
        by_tier = {oracle.tier: oracle for oracle in oracles}
        self.specs = specs
        self.tiers = [spec.tier for spec in specs.oracle.tiers]
        missing = [t.value for t in self.tiers if t not in by_tier]
        if missing:
            raise ValueError(f"no oracle for tier(s): {', '.join(missing)}")
        self.oracles = by_tier
        self.repos = repos
        self.trials = trials
        self.strict = strict
        self.scratch = scratch
        # Where each trial's patch and sandbox output are kept (none: not kept).
        self.artifacts = artifacts
        apply = specs.oracle.apply
        self.limits = ScreenLimits(apply.max_files, apply.max_patch_bytes)

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

    def run_trial(
        self,
        run_id: str,
        changeset: Changeset,
        budget: Budget,
        *,
        defer: bool = False,
        carried: Carried | None = None,
        hold_artifacts: bool = False,
    ) -> TrialRecord:
        """Grade ``changeset`` as a trial of ``run_id``.

        ``defer``: the trial runs in a job with attempts left, so an unavailable outside
        API raises ``TrialDeferredError`` instead of being retried at length; ``carried``:
        what an earlier attempt of this trial made (reused where its key still matches).
        ``hold_artifacts``: the artifacts are not written but handed back with the record,
        for its writer to keep before the trial's ledger rows (never with ``defer``: the
        envelopes a put-back trial carries name artifacts that must exist).
        """
        held = None
        if hold_artifacts and not defer and self.artifacts is not None:
            held = HeldArtifacts(self.artifacts)
        artifacts = held if held is not None else self.artifacts
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
            context = TrialContext(
                changeset,
                recipe,
                self.specs,
                workspace,
                envelopes,
                self.strict,
                defer_unavailable=defer,
            )
            earlier = _Earlier(carried, run_id)
            lookups = _Lookups()
            stopped = False
            for tier in self.tiers:
                slot = _Slot(tid, changeset, tier, stamps)
                if stopped:
                    envelopes.append(slot.envelope(TierOutcome(Verdict.SKIPPED, "not reached")))
                    continue
                try:
                    envelope, key = self._tier(
                        slot,
                        context,
                        budget,
                        tier_keys[tier],
                        material,
                        earlier=earlier,
                        lookups=lookups,
                        artifacts=artifacts,
                    )
                except _TierDeferred as deferred:
                    raise _deferred_error(run_id, changeset, envelopes, keys, deferred) from (
                        deferred.cause
                    )
                if key is not None:
                    keys[tier.value] = key
                envelopes.append(envelope)
                stopped = envelope.verdict is not Verdict.PASS
        trial = Trial(tid, run_id, changeset, tuple(envelopes))
        return TrialRecord(trial, keys, held.held if held is not None else ())

    def _tier(
        self,
        slot: _Slot,
        context: TrialContext,
        budget: Budget,
        key: str,
        material: dict[str, Any],
        *,
        earlier: _Earlier,
        lookups: _Lookups,
        artifacts: ArtifactStore | None,
    ) -> tuple[Envelope, str | None]:
        """One tier's envelope, reused from an earlier attempt or the cache when its key is
        known there, and the key it is stored under (None: not reusable)."""
        spec = self.specs.oracle.tier(slot.tier)
        # An earlier attempt of this run holds its reservation still: no new room is needed.
        if not earlier.reserved(slot.tier) and not budget.allows(spec.list_cost_usd):
            # Nothing more is spent on a trial the budget cannot pay for, not even on
            # working out its cache key (dependency resolution).
            return slot.envelope(TierOutcome(Verdict.INCONCLUSIVE, _BUDGET_REASON)), None
        try:
            material.update(self.oracles[slot.tier].key_material(context))
        except ServiceUnavailableError as exc:
            if context.defer_unavailable:  # nothing was reserved for this tier yet
                earlier.drop(slot.tier, budget)
                raise _TierDeferred(slot.tier, exc) from exc
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}")
            return slot.envelope(outcome, adapter=self.oracles[slot.tier].identity), key
        except InfrastructureError as exc:
            details = _kept(slot, context, {}, artifacts)  # what ran before the fault, if any
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}", details=details)
            return slot.envelope(outcome, adapter=self.oracles[slot.tier].identity), key
        if material:
            key = stamp({"key": key, "material": material})
        made = earlier.take(slot, key, budget)
        if made is not None:
            context.logs.drain()
            return made, key
        hit = self.trials.cached_envelope(key) if self.trials and lookups.open else None
        if hit:
            context.logs.drain()  # the reused envelope names the logs it was graded on
            envelope = slot.reuse(hit)
        else:
            lookups.open = False
            envelope = self._run_tier(slot, context, budget, artifacts)
        return envelope, (key if envelope.reason != _BUDGET_REASON else None)

    def _run_tier(
        self,
        slot: _Slot,
        context: TrialContext,
        budget: Budget,
        artifacts: ArtifactStore | None,
    ) -> Envelope:
        spec = self.specs.oracle.tier(slot.tier)
        if not budget.reserve(spec.list_cost_usd):
            return slot.envelope(TierOutcome(Verdict.INCONCLUSIVE, _BUDGET_REASON))
        oracle = self.oracles[slot.tier]
        started = time.perf_counter()
        try:
            outcome = oracle.evaluate(context)
        except ServiceUnavailableError as exc:
            if context.defer_unavailable:
                budget.release(spec.list_cost_usd)  # the tier did not run: nothing spent
                raise _TierDeferred(slot.tier, exc) from exc
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}")
        except InfrastructureError as exc:
            outcome = TierOutcome(Verdict.ERROR, f"infrastructure error: {exc}")
        duration = time.perf_counter() - started
        return slot.envelope(
            replace(outcome, details=_kept(slot, context, outcome.details, artifacts)),
            list_cost=spec.list_cost_usd,
            actual_cost=tier_actual_cost(slot.tier, outcome, duration, context.usd_per_second),
            duration=duration,
            adapter=oracle.identity,
        )


def _kept(
    slot: _Slot,
    context: TrialContext,
    details: Mapping[str, Any],
    artifacts: ArtifactStore | None,
) -> dict[str, Any]:
    """A tier's details with what it ran kept beside the ledger and named by digest:
    each sandboxed command's whole output (``logs``), and for tier 1 the patch."""
    found = dict(details)
    runs = context.logs.drain()
    if runs:
        found["logs"] = keep_logs(runs, artifacts)
    if slot.tier is Tier.APPLY:
        found["patch"] = _keep_patch(slot.changeset, artifacts).to_dict()
    return found


def _keep_patch(changeset: Changeset, artifacts: ArtifactStore | None) -> ArtifactRef:
    content = patch_bytes(changeset.patch)  # the bytes tier 1 applies
    if artifacts is None:
        return prepare(content, ArtifactKind.PATCH)[0]
    return artifacts.put(content, ArtifactKind.PATCH)


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


@dataclass
class _Lookups:
    """Whether a trial's tiers are still looked up in the cache: only until one of them
    has to run. A trial that kept an envelope of a later tier passed this one under the
    same key (each tier's key covers the inputs, material and adapters of those before
    it) and kept that envelope too, so once this tier is not in the cache no later one
    is. (A later tier graded after a fabricated one, which is never reused, is graded
    again rather than reused.)"""

    open: bool = True


class _Earlier:
    """What an earlier attempt of this trial made (``Carried``), as the cascade uses it."""

    def __init__(self, carried: Carried | None, run_id: str) -> None:
        self.tiers = dict(carried.tiers) if carried else {}
        self.from_run = carried.run_id if carried else ""
        # Same run: the earlier attempt's reservations are still in this budget.
        self.same_run = carried is not None and carried.run_id == run_id

    def reserved(self, tier: Tier) -> bool:
        return self.same_run and tier in self.tiers

    def take(self, slot: _Slot, key: str, budget: Budget) -> Envelope | None:
        """The earlier envelope of ``slot``'s tier if it was made under ``key``, counted
        once in ``budget``; None (its reservation given back) when the key has changed."""
        found = self.tiers.pop(slot.tier, None)
        if found is None:
            return None
        made_under, envelope = found
        if made_under != key:
            self._give_back(envelope, budget)
            return None
        if not self.same_run:
            budget.charge(envelope.list_cost_usd)
        return slot.restore(envelope, self.from_run)

    def drop(self, tier: Tier, budget: Budget) -> None:
        found = self.tiers.pop(tier, None)
        if found is not None:
            self._give_back(found[1], budget)

    def _give_back(self, envelope: Envelope, budget: Budget) -> None:
        if self.same_run:
            budget.release(envelope.list_cost_usd)


def _deferred_error(
    run_id: str,
    changeset: Changeset,
    envelopes: Sequence[Envelope],
    keys: Mapping[str, str],
    deferred: _TierDeferred,
) -> TrialDeferredError:
    """The trial's deferral, carrying the envelopes it made (all passed: the cascade goes
    on only past a pass), each under the key it would be stored under."""
    made = {e.tier: (keys[e.tier.value], e) for e in envelopes if e.tier.value in keys}
    message = f"{changeset.id}: tier {deferred.tier.value} put back: {deferred.cause}"
    return TrialDeferredError(
        message, Carried(run_id, made), retry_after_s=deferred.cause.retry_after_s
    )


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

    def restore(self, made: Envelope, run_id: str) -> Envelope:
        """An envelope an earlier attempt of this trial made, under this trial: as it was
        made (its cost was spent for this trial), saying which attempt made it."""
        details = dict(made.details)
        details["carried_from"] = {"run_id": run_id, "trial_id": made.trial_id}
        return replace(
            made, trial_id=self.trial_id, changeset_id=self.changeset.id, details=details
        )

    def reuse(self, cached: Envelope) -> Envelope:
        """A cached envelope under this trial: free, marked cached, origin kept. Reusing
        a reuse keeps the first ``cached_from``: where the answer was made and what it
        cost then, not the $0 its last reuse cost."""
        details = dict(cached.details)
        made = cached.details.get("cached_from") if cached.cached else None
        details["cached_from"] = made or {
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
