"""Everything the ledger knows about one trial, gathered once for ``show`` and the report.

A trial is named by its id (or a unique prefix of it) or by a changeset id, which stands
for that changeset's latest trial (the others are listed). Per tier the detail holds the
envelope (verdict, reason, costs, duration, stamps and whether they are still current),
its evidence and fabricated marks, where its answer came from (``migration_evals.gate.provenance``)
and, for a reused envelope, the earlier trial that produced it; the sandbox runs it records
with their output tails; the dependency resolution; and each judge's request and answer.

The text in here came from candidates and their builds: whoever renders it escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from migration_evals.core.errors import MigrationEvalsError
from migration_evals.core.model import Tier, Verdict, combine_verdicts
from migration_evals.core.runs import Runs
from migration_evals.core.specs import SpecSet
from migration_evals.core.trial_queries import StoredEnvelope, TrialQueries, TrialRef
from migration_evals.gate.diff_coverage import coverage_document
from migration_evals.gate.fabrication import find_marks
from migration_evals.gate.provenance import envelope_origin, resolve_origin
from migration_evals.gate.suite_counts import counts_document

__all__ = [
    "TierDetail",
    "TrialDetail",
    "UnknownTrialError",
    "find_trial",
    "run_records",
    "trial_detail",
]

_RUN_KEYS = ("exit_code", "output_tail")
_RUN_DEPTH = 4  # runs sit at most a few levels down; deeper is not a run record
_SPLIT_OUT = frozenset(
    {"judges", "dependencies", "builds", "baseline", "patched", "checks", "diff_coverage"}
)


class UnknownTrialError(MigrationEvalsError):
    """No trial or changeset in the ledger has the id asked for."""


@dataclass(frozen=True, slots=True)
class TierDetail:
    """One envelope of the trial, as ``show`` prints it."""

    tier: Tier
    verdict: Verdict
    reason: str
    origin: str
    adapter: str
    envelope: Mapping[str, Any]  # the stored envelope, whole
    sandbox_runs: tuple[Mapping[str, Any], ...] = ()
    judges: tuple[Mapping[str, Any], ...] = ()
    fabricated: tuple[str, ...] = ()  # where each mark sits, as the gate reports it
    cache_origin: Mapping[str, Any] | None = None
    stale: tuple[str, ...] = ()  # the specs whose stamp changed since

    def to_dict(self) -> dict[str, Any]:
        details = self.envelope.get("details") or {}
        return {
            "tier": self.tier.value,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "origin": self.origin,
            "adapter": self.adapter,
            "cached": bool(self.envelope.get("cached")),
            "cache_origin": None if self.cache_origin is None else dict(self.cache_origin),
            "list_cost_usd": self.envelope["list_cost_usd"],
            "actual_cost_usd": self.envelope["actual_cost_usd"],
            "duration_s": self.envelope["duration_s"],
            "stamps": dict(self.envelope["stamps"]),
            "stale_stamps": list(self.stale),
            "evidence": list(self.envelope.get("evidence") or ()),
            "fabricated": list(self.fabricated),
            "sandbox_runs": [dict(r) for r in self.sandbox_runs],
            "dependencies": list(details.get("dependencies") or ()),
            "judges": [dict(j) for j in self.judges],
            "other_details": {k: v for k, v in details.items() if k not in _SPLIT_OUT},
            # Tier 3's counts per side, apart from the runs' output
            # (``migration_evals.gate.suite_counts``).
            "test_counts": counts_document(details) if self.tier is Tier.TESTS else {},
            # Which changed lines of main code the base's tests ran
            # (``migration_evals.gate.diff_coverage``).
            "diff_coverage": coverage_document(details) if self.tier is Tier.TESTS else {},
        }


@dataclass(frozen=True, slots=True)
class TrialDetail:
    """A trial: its changeset, run, verdict, cost and every tier's detail."""

    ref: TrialRef
    changeset: Mapping[str, Any]
    run: Mapping[str, Any]
    tiers: tuple[TierDetail, ...]
    asked_for: str
    siblings: tuple[Mapping[str, Any], ...] = field(default=())  # the changeset's other trials

    @property
    def verdict(self) -> Verdict:
        return combine_verdicts(t.verdict for t in self.tiers)

    @property
    def stopped_at(self) -> TierDetail | None:
        return next((t for t in self.tiers if t.verdict not in _GOING_ON), None)

    def cost(self, key: str) -> float:
        return round(sum(float(t.envelope[key]) for t in self.tiers), 8)

    def to_dict(self) -> dict[str, Any]:
        stop = self.stopped_at
        return {
            "trial_id": self.ref.trial_id,
            "asked_for": self.asked_for,
            "run_id": self.ref.run_id,
            "run": dict(self.run),
            "recorded_at": self.ref.recorded_at,
            "ledger_rows": [self.ref.first_seq, self.ref.last_seq],
            "changeset": dict(self.changeset),
            "verdict": self.verdict.value,
            "stopped_at": None if stop is None else stop.tier.value,
            "reason": (stop or self.tiers[-1]).reason if self.tiers else "",
            "list_cost_usd": self.cost("list_cost_usd"),
            "actual_cost_usd": self.cost("actual_cost_usd"),
            "tiers": [t.to_dict() for t in self.tiers],
            "other_trials": [dict(s) for s in self.siblings],
        }


_GOING_ON = (Verdict.PASS, Verdict.SKIPPED)


def _run_label(path: str, run: Mapping[str, Any]) -> str:
    parts = [str(run[k]) for k in ("tree", "project") if run.get(k)]
    return f"{path} ({', '.join(parts)})" if parts else path


def _find_runs(value: Any, path: str, depth: int, found: list[dict[str, Any]]) -> None:
    if depth > _RUN_DEPTH:
        return
    if isinstance(value, Mapping):
        if path and all(k in value for k in _RUN_KEYS):
            found.append({"label": _run_label(path, value), **value})
            return
        for key, item in value.items():
            _find_runs(item, f"{path}.{key}" if path else str(key), depth + 1, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _find_runs(item, f"{path}[{index}]", depth + 1, found)


def _sandbox_runs(details: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """The sandbox runs an envelope records, wherever they sit (``builds[0]``, ``baseline``,
    ``checks[1].patched start``), labelled by their place. A tier's own top-level copy of
    its last run is listed only when there is no other."""
    found: list[dict[str, Any]] = []
    _find_runs(details, "", 0, found)
    if not found and all(k in details for k in _RUN_KEYS):
        keep = ("exit_code", "duration_s", "timed_out", "oom_killed", "image_id")
        found.append(
            {
                "label": "run",
                **{k: details[k] for k in keep if k in details},
                "output_tail": details["output_tail"],
                "output_truncated": details.get("output_truncated", False),
            }
        )
    return tuple(found)


def _judges(details: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    return tuple(dict(j) for j in details.get("judges") or () if isinstance(j, Mapping))


def _stale(stamps: Mapping[str, Any], recipe: str, specs: SpecSet | None) -> tuple[str, ...]:
    if specs is None or recipe not in specs.recipes:
        return ()
    now = specs.stamps_for(recipe).to_dict()
    return tuple(name for name, value in now.items() if stamps.get(name) != value)


def _cache_origin(trials: TrialQueries, row: StoredEnvelope) -> dict[str, Any] | None:
    if not row.entry.envelope.cached:
        return None
    first = trials.first_with_key(row.cache_key, row.entry.seq) if row.cache_key else None
    if first is None:
        return {"found": False, "note": "the envelope it reuses is not in this ledger"}
    return {
        "found": True,
        "trial_id": first.entry.trial_id,
        "run_id": first.entry.run_id,
        "seq": first.entry.seq,
        "recorded_at": first.recorded_at,
    }


def _tier_detail(
    trials: TrialQueries, row: StoredEnvelope, options: Mapping[str, Any], specs: SpecSet | None
) -> TierDetail:
    stored = row.entry.payload["envelope"]
    envelope = row.entry.envelope
    marks = tuple(find_marks(stored))
    origin = resolve_origin(envelope_origin(stored, marked=bool(marks)), envelope.tier, options)
    details = stored.get("details") or {}
    return TierDetail(
        tier=envelope.tier,
        verdict=envelope.verdict,
        reason=envelope.reason,
        origin=origin.value,
        adapter=envelope.adapter,
        envelope=stored,
        sandbox_runs=_sandbox_runs(details),
        judges=_judges(details),
        fabricated=marks,
        cache_origin=_cache_origin(trials, row),
        stale=_stale(stored["stamps"], str(row.entry.changeset.get("recipe")), specs),
    )


def run_records(runs: Runs) -> dict[str, dict[str, Any]]:
    """Every run by id: status, times and the options stored with it."""
    return {
        str(run["run_id"]): {
            "status": run["status"],
            "started_at": run["started_at"],
            "finished_at": run["finished_at"],
            "options": orjson.loads(run["options"]),
        }
        for run in runs.all()
    }


def _candidates(
    trials: TrialQueries, wanted: str, run_id: str | None
) -> tuple[list[TrialRef], bool]:
    """The trials ``wanted`` names, and whether it named a changeset."""
    for by_changeset, search in (
        (False, {"trial_id": wanted}),
        (True, {"changeset_id": wanted}),
        (False, {"trial_id": wanted, "prefix": True}),
    ):
        found = [r for r in trials.find_trials(**search) if run_id in (None, r.run_id)]
        if found:
            return found, by_changeset
    return [], False


def find_trial(
    trials: TrialQueries, wanted: str, run_id: str | None = None
) -> tuple[TrialRef, list[TrialRef]]:
    """The trial ``wanted`` names and, for a changeset id, its other trials (newest first)."""
    found, by_changeset = _candidates(trials, wanted, run_id)
    scope = f" in run {run_id}" if run_id else ""
    if not found:
        raise UnknownTrialError(
            f"no trial or changeset {wanted!r} in the ledger {trials.display_url}{scope}; "
            "trial ids are printed by `migration-evals run` (and in its --json output)"
        )
    if not by_changeset and len(found) > 1:
        shown = ", ".join(r.trial_id for r in found[:5])
        raise UnknownTrialError(f"{wanted!r} is the start of {len(found)} trial ids ({shown}, …)")
    latest = max(found, key=lambda r: r.last_seq)
    others = sorted((r for r in found if r is not latest), key=lambda r: -r.last_seq)
    return latest, others


def _sibling(trials: TrialQueries, ref: TrialRef) -> dict[str, Any]:
    verdicts = [row.entry.envelope.verdict for row in trials.trial_envelopes(ref.trial_id)]
    return {
        "trial_id": ref.trial_id,
        "run_id": ref.run_id,
        "model": ref.model,
        "recipe": ref.recipe,
        "recorded_at": ref.recorded_at,
        "verdict": combine_verdicts(verdicts).value,
    }


def trial_detail(
    trials: TrialQueries,
    wanted: str,
    *,
    runs: Mapping[str, Mapping[str, Any]],
    run_id: str | None = None,
    specs: SpecSet | None = None,
    siblings: Sequence[TrialRef] | None = None,
) -> TrialDetail:
    """The detail of the trial ``wanted`` names (see ``find_trial``).

    ``specs``: the current specs, to say which stamps are stale. ``siblings``: given by a
    caller that already resolved the trial (the report), which then skips the look-up.
    ``runs``: every run's record (``run_records``), read once by a caller showing many.
    """
    if siblings is None:
        ref, others = find_trial(trials, wanted, run_id)
    else:
        ref, others = _ref_of(trials, wanted), list(siblings)
    rows = trials.trial_envelopes(ref.trial_id)
    run = dict(runs.get(ref.run_id) or {"status": "unknown", "options": {}})
    options = run.get("options") or {}
    return TrialDetail(
        ref=ref,
        changeset=dict(rows[0].entry.changeset) if rows else {},
        run=run,
        tiers=tuple(_tier_detail(trials, row, options, specs) for row in rows),
        asked_for=wanted,
        siblings=tuple(_sibling(trials, other) for other in others),
    )


def _ref_of(trials: TrialQueries, trial_id: str) -> TrialRef:
    found = trials.find_trials(trial_id=trial_id)
    if not found:
        raise UnknownTrialError(f"no trial {trial_id!r} in the ledger {trials.display_url}")
    return found[0]
