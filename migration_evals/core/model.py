"""Domain types: changesets, tiers, verdicts, envelopes, trials and run summaries.

Everything here is a frozen value with a lossless ``to_dict``/``from_dict`` pair, so an
envelope written to the ledger today can be re-read and re-graded later.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any

__all__ = [
    "Changeset",
    "Envelope",
    "Evidence",
    "FabricatedMark",
    "RunSummary",
    "Severity",
    "Stamps",
    "Tier",
    "TierFunnel",
    "Trial",
    "Verdict",
    "combine_verdicts",
    "date_or_none",
    "first_non_utf8_offset",
    "iso_date",
    "patch_bytes",
]


def patch_bytes(patch: str) -> bytes:
    """The patch as the bytes it came as: bytes that were not UTF-8 come back as they were
    (surrogateescape); a lone surrogate from JSON text has no such bytes and is kept in
    its UTF-8 form, so hashing any patch text works and tier 1 can name the offset."""
    try:
        return patch.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return patch.encode("utf-8", "surrogatepass")


def first_non_utf8_offset(patch: str) -> int | None:
    """The byte offset of the patch's first character that is not UTF-8 text, or None."""
    try:
        patch.encode("utf-8")
    except UnicodeEncodeError as exc:
        return len(patch_bytes(patch[: exc.start]))
    return None


def iso_date(value: date | None) -> str | None:
    """A date as stored and sent: ISO text, or None when the date is unknown."""
    return value.isoformat() if value is not None else None


def date_or_none(value: object) -> date | None:
    """The date ``iso_date`` wrote (None, or empty text from older rows, is unknown)."""
    return date.fromisoformat(str(value)) if value not in (None, "") else None


class Tier(StrEnum):
    """The oracle tiers, in cascade order (cheapest first)."""

    APPLY = "apply"
    COMPILE = "compile"
    TESTS = "tests"
    JUDGE = "judge"


class Verdict(StrEnum):
    """What one tier (or a whole trial) concluded.

    ``FAIL`` is the candidate's fault; ``ERROR`` is the infrastructure's and is kept out of
    pass-rate denominators; ``INCONCLUSIVE`` means no trustworthy answer (flaky test, judge
    gave no valid verdict); ``SKIPPED`` marks tiers a trial never reached.
    """

    PASS = "pass"  # noqa: S105 - a verdict, not a password
    FAIL = "fail"
    ERROR = "error"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"


class Severity(StrEnum):
    """How loud a piece of evidence is; maps onto check-run annotation levels."""

    NOTICE = "notice"
    WARNING = "warning"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One observation backing a verdict, optionally pinned to ``path:line:column``."""

    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    severity: Severity = Severity.FAILURE

    def location(self) -> str:
        parts = [p for p in (self.path, self.line, self.column) if p is not None]
        return ":".join(str(p) for p in parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "severity": self.severity.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(
            message=str(data["message"]),
            path=data.get("path"),
            line=data.get("line"),
            column=data.get("column"),
            severity=Severity(data.get("severity", Severity.FAILURE)),
        )


@dataclass(frozen=True, slots=True)
class FabricatedMark:
    """Proof that a value did not come from a real interaction (e.g. a cassette miss).

    The publication gate refuses any result carrying one of these, wherever it sits.
    """

    port: str
    key: str
    cassette: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "fabricated": True,
            "port": self.port,
            "key": self.key,
            "cassette": self.cassette,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FabricatedMark:
        return cls(
            port=str(data["port"]),
            key=str(data["key"]),
            cassette=str(data["cassette"]),
            reason=str(data["reason"]),
        )


@dataclass(frozen=True, slots=True)
class Stamps:
    """SHA256 stamps of the specs a result was produced under."""

    oracle: str
    recipe: str
    hypotheses: str

    def to_dict(self) -> dict[str, str]:
        return {"oracle": self.oracle, "recipe": self.recipe, "hypotheses": self.hypotheses}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Stamps:
        return cls(
            oracle=str(data["oracle"]),
            recipe=str(data["recipe"]),
            hypotheses=str(data["hypotheses"]),
        )


@dataclass(frozen=True, slots=True)
class Changeset:
    """A diff an agent already produced: (repo, base commit, patch) plus its context."""

    id: str
    repo: str
    base_commit: str
    patch: str
    recipe: str
    model: str
    # None when nobody knows it: such trials stay out of the contamination buckets.
    repo_created_at: date | None
    recipe_params: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None

    @property
    def patch_sha256(self) -> str:
        return hashlib.sha256(patch_bytes(self.patch)).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "patch": self.patch,
            "recipe": self.recipe,
            "model": self.model,
            "repo_created_at": iso_date(self.repo_created_at),
            "recipe_params": dict(self.recipe_params),
            "source": self.source,
        }

    def summary(self) -> dict[str, Any]:
        """The changeset without its patch text, as stored beside every envelope."""
        data = self.to_dict()
        del data["patch"]
        data["patch_sha256"] = self.patch_sha256
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Changeset:
        return cls(
            id=str(data["id"]),
            repo=str(data["repo"]),
            base_commit=str(data["base_commit"]),
            patch=str(data["patch"]),
            recipe=str(data["recipe"]),
            model=str(data["model"]),
            repo_created_at=date_or_none(data.get("repo_created_at")),
            recipe_params=dict(data.get("recipe_params") or {}),
            source=data.get("source"),
        )


@dataclass(frozen=True, slots=True)
class Envelope:
    """The record of one tier run on one trial: verdict, cost, time, evidence, provenance."""

    trial_id: str
    changeset_id: str
    tier: Tier
    verdict: Verdict
    list_cost_usd: float
    actual_cost_usd: float
    duration_s: float
    stamps: Stamps
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()
    fabricated: tuple[FabricatedMark, ...] = ()
    cached: bool = False
    adapter: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_fabricated(self) -> bool:
        return bool(self.fabricated)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trial_id": self.trial_id,
            "changeset_id": self.changeset_id,
            "tier": self.tier.value,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "list_cost_usd": self.list_cost_usd,
            "actual_cost_usd": self.actual_cost_usd,
            "duration_s": self.duration_s,
            "stamps": self.stamps.to_dict(),
            "evidence": [e.to_dict() for e in self.evidence],
            "fabricated": [m.to_dict() for m in self.fabricated],
            "cached": self.cached,
            "adapter": self.adapter,
            "details": dict(self.details),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Envelope:
        return cls(
            trial_id=str(data["trial_id"]),
            changeset_id=str(data["changeset_id"]),
            tier=Tier(data["tier"]),
            verdict=Verdict(data["verdict"]),
            reason=str(data.get("reason", "")),
            list_cost_usd=float(data["list_cost_usd"]),
            actual_cost_usd=float(data["actual_cost_usd"]),
            duration_s=float(data["duration_s"]),
            stamps=Stamps.from_dict(data["stamps"]),
            evidence=tuple(Evidence.from_dict(e) for e in data.get("evidence", ())),
            fabricated=tuple(FabricatedMark.from_dict(m) for m in data.get("fabricated", ())),
            cached=bool(data.get("cached", False)),
            adapter=str(data.get("adapter", "")),
            details=dict(data.get("details") or {}),
        )


def combine_verdicts(verdicts: Iterable[Verdict]) -> Verdict:
    """A trial's verdict from its tiers: the first non-pass tier decides; all pass → pass."""
    reached = [v for v in verdicts if v is not Verdict.SKIPPED]
    for verdict in reached:
        if verdict is not Verdict.PASS:
            return verdict
    return Verdict.PASS if reached else Verdict.SKIPPED


@dataclass(frozen=True, slots=True)
class Trial:
    """One changeset walked through the cascade."""

    id: str
    run_id: str
    changeset: Changeset
    envelopes: tuple[Envelope, ...]

    @property
    def verdict(self) -> Verdict:
        return combine_verdicts(e.verdict for e in self.envelopes)

    @property
    def cost_usd(self) -> float:
        return sum(e.list_cost_usd for e in self.envelopes)

    @property
    def actual_cost_usd(self) -> float:
        return sum(e.actual_cost_usd for e in self.envelopes)

    @property
    def fabricated(self) -> tuple[FabricatedMark, ...]:
        return tuple(m for e in self.envelopes for m in e.fabricated)

    def stopped_at(self) -> Envelope | None:
        """The envelope that ended the trial early, if any tier did not pass."""
        for envelope in self.envelopes:
            if envelope.verdict not in (Verdict.PASS, Verdict.SKIPPED):
                return envelope
        return None


@dataclass(frozen=True, slots=True)
class TierFunnel:
    """Per-tier counts: how many trials reached the tier and what became of them."""

    tier: Tier
    reached: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    inconclusive: int = 0
    cost_usd: float = 0.0
    actual_cost_usd: float = 0.0
    cached: int = 0
    fabricated: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier.value,
            "reached": self.reached,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "inconclusive": self.inconclusive,
            "cost_usd": round(self.cost_usd, 6),
            "actual_cost_usd": round(self.actual_cost_usd, 6),
            "cached": self.cached,
            "fabricated": self.fabricated,
        }


_VERDICT_FIELD = {
    Verdict.PASS: "passed",
    Verdict.FAIL: "failed",
    Verdict.ERROR: "errors",
    Verdict.INCONCLUSIVE: "inconclusive",
}


def _funnel_row(tier: Tier, envelopes: Iterable[Envelope]) -> TierFunnel:
    counts: dict[str, Any] = dict.fromkeys(_VERDICT_FIELD.values(), 0)
    reached = cached = fabricated = 0
    cost = actual = 0.0
    for envelope in envelopes:
        if envelope.verdict is Verdict.SKIPPED:
            continue
        reached += 1
        counts[_VERDICT_FIELD[envelope.verdict]] += 1
        cost += envelope.list_cost_usd
        actual += envelope.actual_cost_usd
        cached += envelope.cached
        fabricated += envelope.is_fabricated
    return TierFunnel(
        tier=tier,
        reached=reached,
        cost_usd=cost,
        actual_cost_usd=actual,
        cached=cached,
        fabricated=fabricated,
        **counts,
    )


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The funnel of a set of trials, in tier order."""

    trials: int
    verdicts: Mapping[Verdict, int]
    tiers: tuple[TierFunnel, ...]
    fabricated_envelopes: int
    fabricated_ports: tuple[str, ...]

    @property
    def cost_usd(self) -> float:
        return sum(row.cost_usd for row in self.tiers)

    @property
    def actual_cost_usd(self) -> float:
        return sum(row.actual_cost_usd for row in self.tiers)

    @classmethod
    def of(cls, trials: Iterable[Trial], tiers: Iterable[Tier] = tuple(Tier)) -> RunSummary:
        trial_list = list(trials)
        by_tier: dict[Tier, list[Envelope]] = {tier: [] for tier in tiers}
        verdicts: dict[Verdict, int] = {}
        ports: set[str] = set()
        fabricated = 0
        for trial in trial_list:
            verdicts[trial.verdict] = verdicts.get(trial.verdict, 0) + 1
            for envelope in trial.envelopes:
                by_tier.setdefault(envelope.tier, []).append(envelope)
                fabricated += envelope.is_fabricated
                ports.update(mark.port for mark in envelope.fabricated)
        return cls(
            trials=len(trial_list),
            verdicts=verdicts,
            tiers=tuple(_funnel_row(tier, rows) for tier, rows in by_tier.items()),
            fabricated_envelopes=fabricated,
            fabricated_ports=tuple(sorted(ports)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "verdicts": {v.value: n for v, n in sorted(self.verdicts.items())},
            "tiers": [row.to_dict() for row in self.tiers],
            "fabricated_count": self.fabricated_envelopes,
            "fabricated_ports": list(self.fabricated_ports),
            "cost_usd": round(self.cost_usd, 6),
            "actual_cost_usd": round(self.actual_cost_usd, 6),
        }
