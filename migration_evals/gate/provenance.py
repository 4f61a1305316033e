"""Where each envelope's answer came from, and what share of a report's numbers rests on it.

An envelope records the adapter that answered (``adapter``: the tier's identity plus its
port's, e.g. ``compile/3 sandbox:replay``), whether it was reused (``cached``), its
fabricated marks, and for the judge each transcript's ``recorded_by`` (the cassette's note
of who wrote a replayed answer). From those alone an envelope is:

- ``live``: the tier ran here against a real service (tier 1 has no outside port and is
  always live);
- ``recorded``: live, in a run that recorded cassettes as it went (the adapter's identity
  is the live one; only the run's options say so);
- ``replayed``: answered from a cassette a recorder wrote;
- ``hand-made``: answered from a cassette a person wrote (the bundled judge answers): no
  model was asked, so its tokens and cost are not a measurement;
- ``fabricated``: a cassette miss's default; never a result;
- ``not run``: a tier the trial never reached, or one the budget stopped.

An envelope reused from an earlier one with the same content-addressed key (``cached``)
counts under the origin of the answer it reuses, which it carries (adapter, judges'
``recorded_by``): a second run of the demo rests on the same hand-made judge answers as
the first. How many of each origin were reused is counted beside it, with what they cost
when they were made (``cached_from``) — a reused envelope costs its run nothing. A reused
``live`` envelope stays ``live``: whether the run that made it recorded cassettes is not
known from the reuse.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from migration_evals.core.model import Tier

__all__ = [
    "MEASURED",
    "REUSED_COST",
    "Origin",
    "Provenance",
    "envelope_origin",
    "port_mode",
    "provenance",
    "resolve_origin",
    "run_modes",
]


class Origin(StrEnum):
    LIVE = "live"
    RECORDED = "recorded"
    REPLAYED = "replayed"
    HAND_MADE = "hand-made"
    FABRICATED = "fabricated"
    NOT_RUN = "not run"


# Origins whose seconds, tokens and cost were measured on a real service (now or when the
# cassette was recorded).
MEASURED = frozenset({Origin.LIVE, Origin.RECORDED, Origin.REPLAYED})

# The identities live adapters record cassettes under ("sandbox:docker/3", "judge:openai/1.x").
_RECORDERS = ("sandbox:", "judge:")
_REPLAY = ":replay"
_PORT_OF = {Tier.COMPILE: "sandbox", Tier.TESTS: "sandbox", Tier.JUDGE: "judge"}


def _judge_written_by_hand(details: Mapping[str, Any]) -> bool:
    notes = [str(j.get("recorded_by") or "") for j in details.get("judges") or ()]
    return any(note and not note.startswith(_RECORDERS) for note in notes)


def envelope_origin(envelope: Mapping[str, Any], *, marked: bool | None = None) -> Origin:
    """An envelope's origin from its stored JSON form, before the run's modes are known
    (``live`` may turn out to be ``recorded``, see ``resolve_origin``); a reused envelope's
    is that of the answer it reuses.

    ``marked``: whether a fabricated mark sits anywhere in it, when the caller has looked
    (the ledger scan walks every payload once); otherwise its own marks are read.
    """
    fabricated = bool(envelope.get("fabricated")) if marked is None else marked
    adapter = str(envelope.get("adapter") or "")
    if fabricated:
        return Origin.FABRICATED
    if not adapter:
        return Origin.NOT_RUN
    if envelope.get("tier") == Tier.JUDGE.value and _judge_written_by_hand(
        envelope.get("details") or {}
    ):
        return Origin.HAND_MADE
    return Origin.REPLAYED if _REPLAY in adapter else Origin.LIVE


def run_modes(options: Mapping[str, Any]) -> dict[str, str]:
    """Each port's cassette mode as a run's stored options say (port -> mode): its run
    plan's ``modes``, or for a run stored before plans, its ``mode`` and ``sandbox_mode``.
    Empty when the options name none."""
    plan = options.get("plan")
    planned = plan.get("modes") if isinstance(plan, Mapping) else None
    if isinstance(planned, Mapping):
        return {str(port): str(mode) for port, mode in sorted(planned.items())}
    mode = str(options.get("mode") or "")
    sandbox = str(options.get("sandbox_mode") or mode)
    return {port: m for port, m in (("judge", mode), ("sandbox", sandbox)) if m}


def port_mode(tier: Tier, options: Mapping[str, Any]) -> str:
    """The cassette mode a run used for ``tier``'s port ("" when it has none or not known)."""
    port = _PORT_OF.get(tier)
    return "" if port is None else run_modes(options).get(port, "")


def resolve_origin(origin: Origin, tier: Tier, options: Mapping[str, Any]) -> Origin:
    """``live`` becomes ``recorded`` when the run recorded cassettes for the tier's port."""
    if origin is Origin.LIVE and port_mode(tier, options) == "record":
        return Origin.RECORDED
    return origin


# What the reused envelopes among some trials cost when they were made, by kind.
REUSED_COST = ("list_usd", "actual_usd", "sandbox_s", "judge_usd", "tokens_in", "tokens_out")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Counts of envelopes by origin, overall and per tier, the runs behind them, and how
    many of each origin were reused from earlier runs, with what those cost when made."""

    envelopes: Mapping[Origin, int]
    by_tier: Mapping[Tier, Mapping[Origin, int]]
    runs: Mapping[str, str]  # run id -> its modes, as "judge <mode>, sandbox <mode>"
    # Judge cost by the judge envelope's origin, as the answers cost when made.
    inference_usd: Mapping[Origin, float]
    reused: Mapping[Origin, int] = field(default_factory=dict)
    reused_cost: Mapping[str, float] = field(default_factory=dict)  # ``REUSED_COST`` keys

    @property
    def ran(self) -> int:
        return sum(n for origin, n in self.envelopes.items() if origin is not Origin.NOT_RUN)

    def share(self, origin: Origin) -> float | None:
        """The share of envelopes that ran (``not run`` left out); None when none ran."""
        return self.envelopes.get(origin, 0) / self.ran if self.ran else None

    @property
    def mixed(self) -> str:
        """Why the numbers mix sources ("" when they do not)."""
        reasons = []
        if len(self.runs) > 1:
            modes = Counter(self.runs.values())
            reasons.append(
                f"{len(self.runs)} runs ("
                + "; ".join(f"{mode}: {n}" for mode, n in sorted(modes.items()))
                + ")"
            )
        # Tier 1 runs here whatever the modes, so only the tiers behind a port can mix.
        sources = (Origin.LIVE, Origin.RECORDED, Origin.REPLAYED, Origin.HAND_MADE)
        ported = [counts for tier, counts in self.by_tier.items() if tier is not Tier.APPLY]
        present = [o.value for o in sources if any(c.get(o) for c in ported)]
        if len(present) > 1:
            reasons.append("envelopes of tiers 2-4 " + ", ".join(present))
        return "; ".join(reasons)

    @property
    def measured_inference_usd(self) -> float:
        return round(sum(v for o, v in self.inference_usd.items() if o in MEASURED), 8)

    @property
    def unmeasured_inference_usd(self) -> float:
        return round(sum(v for o, v in self.inference_usd.items() if o not in MEASURED), 8)

    @property
    def reused_count(self) -> int:
        return sum(self.reused.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "envelopes": {o.value: self.envelopes.get(o, 0) for o in Origin},
            "shares": {o.value: self.share(o) for o in Origin if o is not Origin.NOT_RUN},
            "by_tier": {
                tier.value: {o.value: counts.get(o, 0) for o in Origin}
                for tier, counts in self.by_tier.items()
            },
            "runs": dict(sorted(self.runs.items())),
            "mixed": self.mixed,
            "inference_usd": {o.value: round(v, 8) for o, v in self.inference_usd.items()},
            "measured_inference_usd": self.measured_inference_usd,
            "unmeasured_inference_usd": self.unmeasured_inference_usd,
            "reused": {o.value: self.reused.get(o, 0) for o in Origin},
            "reused_count": self.reused_count,
            "reused_cost": {
                k: int(v) if k.startswith("tokens") else round(v, 8)
                for k, v in ((k, self.reused_cost.get(k, 0.0)) for k in REUSED_COST)
            },
        }


def _modes(options: Mapping[str, Any]) -> str:
    judge = port_mode(Tier.JUDGE, options) or "unknown"
    sandbox = port_mode(Tier.COMPILE, options) or "unknown"
    return f"judge {judge}, sandbox {sandbox}"


@dataclass(slots=True)
class _Tally:
    counts: Counter[tuple[Tier, Origin]] = field(default_factory=Counter)
    reused: Counter[Origin] = field(default_factory=Counter)
    inference: dict[Origin, float] = field(default_factory=dict)
    reused_cost: list[float] = field(default_factory=lambda: [0.0] * len(REUSED_COST))

    def add(self, trial: Any, facts: Any, origin: Origin) -> None:
        self.counts[(facts.tier, origin)] += 1
        reused = tuple(trial.reused) or (0.0,) * len(REUSED_COST)
        if facts.cached:
            self.reused[origin] += 1
        if facts.tier is Tier.JUDGE:
            # A reused answer cost its run nothing; it cost what it did when it was made.
            usd = reused[3] if facts.cached else trial.judge_usd
            if usd:
                self.inference[origin] = self.inference.get(origin, 0.0) + usd


def provenance(trials: Iterable[Any], run_options: Mapping[str, Mapping[str, Any]]) -> Provenance:
    """The provenance of ``trials`` (``TrialFacts`` read from the ledger, whose ``origins``
    run beside their ``tiers``); ``run_options`` maps run id to the options stored with it."""
    tally = _Tally()
    runs: dict[str, str] = {}
    # A handful of distinct (run, origin, tier, reused) among 100,000s of envelopes.
    resolved: dict[tuple[str, str, Tier, bool], Origin] = {}
    for trial in trials:
        if len(trial.origins) != len(trial.tiers):
            continue  # read back from a bundle, which does not keep origins
        run = trial.run_id
        if run not in runs:
            runs[run] = _modes(run_options.get(run, {}))
        for index, cost in enumerate(trial.reused):
            tally.reused_cost[index] += cost
        for facts, raw in zip(trial.tiers, trial.origins, strict=True):
            key = (run, raw, facts.tier, facts.cached)
            origin = resolved.get(key)
            if origin is None:
                # This run's modes say nothing of an envelope an earlier run made.
                options = {} if facts.cached else run_options.get(run, {})
                origin = resolved[key] = resolve_origin(Origin(raw), facts.tier, options)
            tally.add(trial, facts, origin)
    envelopes: Counter[Origin] = Counter()
    by_tier: dict[Tier, dict[Origin, int]] = {}
    for (tier, origin), n in tally.counts.items():
        envelopes[origin] += n
        by_tier.setdefault(tier, {})[origin] = n
    reused_cost = dict(zip(REUSED_COST, tally.reused_cost, strict=True))
    return Provenance(
        dict(envelopes), by_tier, runs, tally.inference, dict(tally.reused), reused_cost
    )
