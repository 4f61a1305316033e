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
- ``cached``: reused from an earlier envelope with the same content-addressed key;
- ``not run``: a tier the trial never reached, or one the budget stopped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.model import Tier

__all__ = [
    "MEASURED",
    "Origin",
    "Provenance",
    "envelope_origin",
    "port_mode",
    "provenance",
    "resolve_origin",
]


class Origin(StrEnum):
    LIVE = "live"
    RECORDED = "recorded"
    REPLAYED = "replayed"
    HAND_MADE = "hand-made"
    FABRICATED = "fabricated"
    CACHED = "cached"
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
    (``live`` may turn out to be ``recorded``, see ``resolve_origin``).

    ``marked``: whether a fabricated mark sits anywhere in it, when the caller has looked
    (the ledger scan walks every payload once); otherwise its own marks are read.
    """
    fabricated = bool(envelope.get("fabricated")) if marked is None else marked
    adapter = str(envelope.get("adapter") or "")
    if envelope.get("cached"):
        return Origin.CACHED
    if fabricated:
        return Origin.FABRICATED
    if not adapter:
        return Origin.NOT_RUN
    if envelope.get("tier") == Tier.JUDGE.value and _judge_written_by_hand(
        envelope.get("details") or {}
    ):
        return Origin.HAND_MADE
    return Origin.REPLAYED if _REPLAY in adapter else Origin.LIVE


def port_mode(tier: Tier, options: Mapping[str, Any]) -> str:
    """The cassette mode a run used for ``tier``'s port ("" when it has none or not known)."""
    port = _PORT_OF.get(tier)
    if port is None:
        return ""
    mode = str(options.get("mode") or "")
    return str(options.get("sandbox_mode") or mode) if port == "sandbox" else mode


def resolve_origin(origin: Origin, tier: Tier, options: Mapping[str, Any]) -> Origin:
    """``live`` becomes ``recorded`` when the run recorded cassettes for the tier's port."""
    if origin is Origin.LIVE and port_mode(tier, options) == "record":
        return Origin.RECORDED
    return origin


@dataclass(frozen=True, slots=True)
class Provenance:
    """Counts of envelopes by origin, overall and per tier, and the runs behind them."""

    envelopes: Mapping[Origin, int]
    by_tier: Mapping[Tier, Mapping[Origin, int]]
    runs: Mapping[str, str]  # run id -> its modes, as "judge <mode>, sandbox <mode>"
    inference_usd: Mapping[Origin, float]  # judge cost by the judge envelope's origin

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
        }


def _modes(options: Mapping[str, Any]) -> str:
    judge = port_mode(Tier.JUDGE, options) or "unknown"
    sandbox = port_mode(Tier.COMPILE, options) or "unknown"
    return f"judge {judge}, sandbox {sandbox}"


def provenance(trials: Iterable[Any], run_options: Mapping[str, Mapping[str, Any]]) -> Provenance:
    """The provenance of ``trials`` (``TrialFacts`` read from the ledger, whose ``origins``
    run beside their ``tiers``); ``run_options`` maps run id to the options stored with it."""
    counts: Counter[tuple[Tier, Origin]] = Counter()
    inference: dict[Origin, float] = {}
    runs: dict[str, str] = {}
    # A handful of distinct (run, origin, tier) triples among 100,000s of envelopes.
    resolved: dict[tuple[str, str, Tier], Origin] = {}
    for trial in trials:
        if len(trial.origins) != len(trial.tiers):
            continue  # read back from a bundle, which does not keep origins
        run = trial.run_id
        if run not in runs:
            runs[run] = _modes(run_options.get(run, {}))
        for facts, raw in zip(trial.tiers, trial.origins, strict=True):
            key = (run, raw, facts.tier)
            origin = resolved.get(key)
            if origin is None:
                origin = resolve_origin(Origin(raw), facts.tier, run_options.get(run, {}))
                resolved[key] = origin
            counts[(facts.tier, origin)] += 1
            if facts.tier is Tier.JUDGE and trial.judge_usd:
                inference[origin] = inference.get(origin, 0.0) + trial.judge_usd
    envelopes: Counter[Origin] = Counter()
    by_tier: dict[Tier, dict[Origin, int]] = {}
    for (tier, origin), n in counts.items():
        envelopes[origin] += n
        by_tier.setdefault(tier, {})[origin] = n
    return Provenance(dict(envelopes), by_tier, runs, inference)
