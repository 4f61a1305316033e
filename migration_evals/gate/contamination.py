"""The contamination tripwire: does a model do suspiciously better on repositories that
existed before its training cutoff?

Per model, graded trials are split by the repository's creation date: created on or
before the model's training cutoff (``specs/models.yaml``) is *pre*, after it is *post*.
Each bucket gets its pass rate and Wilson interval, and a one-sided two-proportion z-test
asks whether pre > post at the spec's alpha. A bucket with fewer trials than the spec's
minimum makes the result "insufficient data", which is shown as such and never as clean.
A trial whose repository's creation date is unknown belongs to neither bucket: it is left
out and counted (``unknown_date``), since any stand-in date would pick a bucket for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from migration_evals.core.spec_types import GateThresholds
from migration_evals.core.specs import SpecSet
from migration_evals.gate.stats import two_proportion_ztest
from migration_evals.gate.tallies import Proportion
from migration_evals.gate.trials import TrialFacts, set_digest

__all__ = [
    "Bucket",
    "ContaminationCheck",
    "ContaminationStatus",
    "check_counts",
    "contamination",
]


class ContaminationStatus(StrEnum):
    CLEAR = "clear"
    TRIPPED = "tripped"
    INSUFFICIENT_DATA = "insufficient data"
    NO_CUTOFF = "no training cutoff in the specs"


# A bucket's pass rate: passed over graded trials, with its Wilson interval.
Bucket = Proportion


@dataclass(frozen=True, slots=True)
class ContaminationCheck:
    """The tripwire's result for one model."""

    model: str
    status: ContaminationStatus
    training_cutoff: date | None
    pre: Bucket
    post: Bucket
    min_bucket: int
    alpha: float
    z: float | None
    p: float | None
    trials_digest: str
    unknown_date: int = 0  # graded trials left out: the repository's creation date is unknown

    @property
    def tripped(self) -> bool:
        return self.status is ContaminationStatus.TRIPPED

    def summary(self) -> str:
        def rate(bucket: Bucket) -> str:
            return "n/a" if bucket.rate is None else f"{bucket.rate:.0%}"

        counts = (
            f"pre-cutoff {rate(self.pre)} of {self.pre.graded}, "
            f"post-cutoff {rate(self.post)} of {self.post.graded}"
        )
        if self.unknown_date:
            counts += f"; {self.unknown_date} left out, creation date unknown"
        if self.status is ContaminationStatus.INSUFFICIENT_DATA:
            return f"insufficient data ({counts}; each bucket needs {self.min_bucket})"
        if self.p is None:
            return f"{self.status.value} ({counts})"
        return f"{self.status.value}: {counts}; one-sided p={self.p:.4f} (alpha {self.alpha})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "training_cutoff": self.training_cutoff.isoformat() if self.training_cutoff else None,
            "pre_cutoff": self.pre.to_dict(),
            "post_cutoff": self.post.to_dict(),
            "min_bucket": self.min_bucket,
            "alpha": self.alpha,
            "z": self.z,
            "p": self.p,
            "trials_digest": self.trials_digest,
            "unknown_date": self.unknown_date,
        }


def _check(
    model: str, trials: list[TrialFacts], cutoff: date | None, gate: GateThresholds
) -> ContaminationCheck:
    dated = [(t, t.repo_created_at) for t in trials if t.repo_created_at is not None]
    pre = [t for t, created in dated if cutoff is not None and created <= cutoff]
    post = [t for t, created in dated if cutoff is not None and created > cutoff]
    return check_counts(
        model,
        (sum(t.passed for t in pre), len(pre)),
        (sum(t.passed for t in post), len(post)),
        cutoff,
        gate,
        unknown_date=len(trials) - len(dated),
        trials_digest=set_digest(trials),
    )


def check_counts(
    model: str,
    pre: tuple[int, int],
    post: tuple[int, int],
    cutoff: date | None,
    gate: GateThresholds,
    *,
    unknown_date: int,
    trials_digest: str,
) -> ContaminationCheck:
    """The tripwire for one model from its buckets' (passed, graded) counts."""
    alpha, min_bucket = gate.contamination_alpha, gate.contamination_min_bucket
    z = p = None
    if cutoff is None:
        status = ContaminationStatus.NO_CUTOFF
    elif pre[1] < min_bucket or post[1] < min_bucket:
        status = ContaminationStatus.INSUFFICIENT_DATA
    else:
        z, p = two_proportion_ztest(pre[0], pre[1], post[0], post[1], "larger")
        status = ContaminationStatus.TRIPPED if p < alpha else ContaminationStatus.CLEAR
    return ContaminationCheck(
        model=model,
        status=status,
        training_cutoff=cutoff,
        pre=Proportion.of(*pre),
        post=Proportion.of(*post),
        min_bucket=min_bucket,
        alpha=alpha,
        z=z,
        p=p,
        trials_digest=trials_digest,
        unknown_date=unknown_date,
    )


def contamination(trials: Iterable[TrialFacts], specs: SpecSet) -> tuple[ContaminationCheck, ...]:
    """The tripwire for every model among the graded ``trials``, models sorted by name."""
    by_model: dict[str, list[TrialFacts]] = {}
    for trial in trials:
        if trial.outcome.graded:
            by_model.setdefault(trial.model, []).append(trial)
    gate = specs.oracle.gate
    return tuple(
        _check(
            model,
            by_model[model],
            specs.models[model].training_cutoff if model in specs.models else None,
            gate,
        )
        for model in sorted(by_model)
    )
