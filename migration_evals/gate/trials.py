"""What the gate knows about one trial: the facts behind every published number.

``TrialFacts`` is built from the ledger (``migration_evals.gate.ledger_scan``) or read back from a
publication bundle, and every number (pass rates, funnel, costs, hypothesis tests,
contamination) is computed from these facts alone, so a bundle can be re-checked offline
by recomputing its numbers from the trials it lists.

How a trial counts (``Outcome``): ``passed`` when every tier it reached passed;
``failed`` when a tier failed; ``inconclusive`` (a flaky suite, a judge with no valid
verdict) counts in the denominator as not passed, because the cascade fails closed;
``error`` is the infrastructure's fault and stays out of every pass-rate denominator,
reported apart; ``not graded`` means the trial stopped before a tier ran (the budget ran
out), and is reported apart as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from enum import StrEnum
from typing import Any, NamedTuple

from migration_evals.core.model import Stamps, Tier, Verdict, date_or_none, iso_date
from migration_evals.core.stamps import sha256_hex

__all__ = [
    "FILTERABLE",
    "JudgeOpinion",
    "Outcome",
    "TierFacts",
    "TrialFacts",
    "judge_opinion",
    "outcome_of",
    "set_digest",
    "tier_ran",
]


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"
    NOT_GRADED = "not graded"

    @property
    def graded(self) -> bool:
        """Whether the trial belongs in pass-rate denominators."""
        return self in (Outcome.PASSED, Outcome.FAILED, Outcome.INCONCLUSIVE)


class TierFacts(NamedTuple):
    """One envelope, reduced to what the numbers need (a tuple: a scan makes 100,000s)."""

    tier: Tier
    verdict: Verdict
    list_cost_usd: float
    actual_cost_usd: float
    cached: bool = False
    ran: bool = True  # False when the tier never ran (the budget stopped the trial first)
    fabricated: bool = False  # a fabricated mark anywhere in the envelope

    def to_bundle(self) -> list[Any]:
        return [
            self.tier.value,
            self.verdict.value,
            self.list_cost_usd,
            self.actual_cost_usd,
            self.cached,
            self.ran,
            self.fabricated,
        ]

    @classmethod
    def from_bundle(cls, data: Sequence[Any]) -> TierFacts:
        tier, verdict, list_cost, actual, cached, ran, fabricated = data
        return cls(
            Tier(tier),
            Verdict(verdict),
            float(list_cost),
            float(actual),
            bool(cached),
            bool(ran),
            bool(fabricated),
        )


class JudgeOpinion(NamedTuple):
    """What a trial's judge envelope tells about the judges themselves (their reliability).

    ``left_out``: why it can never count ("cached": a repeated answer, "fabricated": a
    cassette miss is nobody's opinion), or empty; whether it is stale depends on the specs
    it is assessed under. ``verdicts``: each transcript's role and verdict (None: no valid
    verdict), empty when no judge was heard.
    """

    changeset_id: str
    oracle_stamp: str
    left_out: str
    verdicts: tuple[tuple[str, str | None], ...]


def judge_opinion(envelope: Mapping[str, Any]) -> JudgeOpinion:
    """The opinion in a judge envelope, given in its stored JSON form."""
    left_out = "cached" if envelope.get("cached") else ""
    if not left_out and envelope.get("fabricated"):
        left_out = "fabricated"
    transcripts = (envelope.get("details") or {}).get("judges") or ()
    verdicts = tuple(
        (str(t.get("role")), (t.get("answer") or {}).get("verdict")) for t in transcripts
    )
    return JudgeOpinion(
        str(envelope["changeset_id"]), str(envelope["stamps"]["oracle"]), left_out, verdicts
    )


class TrialFacts(NamedTuple):
    """A trial as the gate sees it. The ledger-only fields stay empty when read from a bundle.

    A tuple rather than a frozen dataclass: a scan builds one per trial, 100,000s of them,
    and a frozen dataclass's ``__init__`` costs about ten times as much. ``outcome`` is
    derived from ``tiers`` by whoever builds one (``outcome_of``), once, because every
    number asks for it.
    """

    trial_id: str
    run_id: str
    changeset_id: str
    model: str
    recipe: str
    repo_created_at: date | None  # None: unknown, kept out of the tripwire's buckets
    recorded_at: str
    tiers: tuple[TierFacts, ...]
    digest: str
    outcome: Outcome
    sandbox_s: float = 0.0
    judge_usd: float = 0.0
    judge_tokens: tuple[int, int] = (0, 0)
    # Ledger-only: order, the strict judges' two verdicts, stamps and fabricated marks.
    first_seq: int = 0
    last_seq: int = 0
    judge_pair: tuple[str, str] | None = None
    judge_strict: bool = False
    stamps: tuple[Stamps, ...] = ()
    marks: tuple[str, ...] = ()
    error_reason: str = ""
    judge_opinion: JudgeOpinion | None = None
    # Ledger-only, for the report's trials page: each envelope's origin (beside ``tiers``,
    # see ``migration_evals.gate.provenance``) and the reason of the tier that ended the trial.
    origins: tuple[str, ...] = ()
    stop_reason: str = ""
    # Ledger-only too: tier 3's base and patched counts as worded
    # (``migration_evals.gate.suite_counts``).
    test_counts: tuple[str, ...] = ()
    # And its diff coverage: the state and the table's cell
    # (``migration_evals.gate.diff_coverage``).
    diff_coverage: tuple[str, ...] = ()
    # And what its reused (cached) envelopes cost when they were made, one number per
    # ``migration_evals.gate.provenance.REUSED_COST`` kind (list, actual, sandbox s, judge $,
    # tokens): a reused envelope costs its own trial nothing, so the tiers above say $0 for it.
    reused: tuple[float, ...] = ()

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def list_cost_usd(self) -> float:
        return sum(t.list_cost_usd for t in self.tiers)

    @property
    def actual_cost_usd(self) -> float:
        return sum(t.actual_cost_usd for t in self.tiers)

    def to_bundle(self) -> dict[str, Any]:
        return {
            "trial_id": self.trial_id,
            "run_id": self.run_id,
            "changeset_id": self.changeset_id,
            "model": self.model,
            "recipe": self.recipe,
            "repo_created_at": iso_date(self.repo_created_at),
            "recorded_at": self.recorded_at,
            "digest": self.digest,
            "outcome": self.outcome.value,
            "tiers": [t.to_bundle() for t in self.tiers],
            "sandbox_s": self.sandbox_s,
            "judge_usd": self.judge_usd,
            "judge_tokens": list(self.judge_tokens),
        }

    @classmethod
    def from_bundle(cls, data: Mapping[str, Any]) -> TrialFacts:
        tokens_in, tokens_out = data["judge_tokens"]
        tiers = tuple(TierFacts.from_bundle(t) for t in data["tiers"])
        return cls(
            trial_id=str(data["trial_id"]),
            run_id=str(data["run_id"]),
            changeset_id=str(data["changeset_id"]),
            model=str(data["model"]),
            recipe=str(data["recipe"]),
            repo_created_at=date_or_none(data.get("repo_created_at")),
            recorded_at=str(data["recorded_at"]),
            tiers=tiers,
            digest=str(data["digest"]),
            outcome=outcome_of(tiers),
            sandbox_s=float(data["sandbox_s"]),
            judge_usd=float(data["judge_usd"]),
            judge_tokens=(int(tokens_in), int(tokens_out)),
        )


def tier_ran(*, skipped: bool, cached: bool, adapter: str) -> bool:
    """Whether a tier ran: an adapter answered it (or the cache did, or it was skipped on
    purpose); a budget stop records no adapter."""
    return skipped or cached or bool(adapter)


def outcome_of(tiers: Sequence[TierFacts]) -> Outcome:
    """What a trial's tiers add up to; the first tier that did not pass decides."""
    for facts in tiers:
        if facts.verdict is Verdict.PASS or facts.verdict is Verdict.SKIPPED:
            continue
        if facts.verdict is Verdict.FAIL:
            return Outcome.FAILED
        if facts.verdict is Verdict.ERROR:
            return Outcome.ERROR
        return Outcome.INCONCLUSIVE if facts.ran else Outcome.NOT_GRADED
    reached = any(f.verdict is Verdict.PASS for f in tiers)
    return Outcome.PASSED if reached else Outcome.NOT_GRADED


# The trial attributes a hypothesis's groups may filter on, and the field each one reads.
FILTERABLE = {
    "model": "model",
    "recipe": "recipe",
    "changeset": "changeset_id",
    "changeset_id": "changeset_id",
    "run": "run_id",
    "run_id": "run_id",
}


def set_digest(trials: Iterable[TrialFacts]) -> str:
    """The digest of a set of trials: SHA256 over their sorted digests, one per line.

    Sorting makes it independent of order, so anyone holding the trials can recompute it.
    """
    return sha256_hex("\n".join(sorted(t.digest for t in trials)))
