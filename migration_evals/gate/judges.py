"""Judge agreement for the gate and the reports.

Two things are kept apart here:

* **Reliability against people** (Cohen's kappa of each judge and of the pair against a
  hand-labelled overlap) belongs to ``migration_evals.gate.reliability``. The gate asks it through a
  ``ReliabilityProbe``, a plain function (``judge_reliability_probe`` by default; tests pass
  their own), and only when a counted trial was judged in strict mode, since those are
  the numbers an unreliable pair would corrupt. ``None`` means "not assessed".
* **Agreement between the two strict-mode judges** on the counted trials is measured here
  from their transcripts in the ledger: a 2x2 table and its kappa, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from migration_evals.core.specs import SpecSet
from migration_evals.gate.reliability import Opinions, assess, gather
from migration_evals.gate.stats import UndefinedStatistic, cohens_kappa
from migration_evals.gate.trials import JudgeOpinion, TrialFacts

__all__ = [
    "JudgeAgreement",
    "JudgeReliabilityView",
    "OpinionsProbe",
    "ReliabilityProbe",
    "judge_agreement",
    "judge_opinions_probe",
    "judge_reliability_probe",
    "trial_opinions",
]


class JudgeReliabilityView(Protocol):
    """What the gate needs from a judge-reliability assessment."""

    @property
    def reliable(self) -> bool: ...

    @property
    def problems(self) -> Sequence[str]: ...


ReliabilityProbe = Callable[[Sequence[TrialFacts], SpecSet], JudgeReliabilityView | None]
# The same, over the opinions gathered already (an incremental check keeps no trials).
OpinionsProbe = Callable[[Opinions, SpecSet], JudgeReliabilityView | None]


def judge_opinions_probe(opinions: Opinions, specs: SpecSet) -> JudgeReliabilityView | None:
    """``migration_evals.gate.reliability``'s verdict on the judge pair over the gathered
    ``opinions``."""
    return assess(opinions, specs)


def judge_reliability_probe(
    trials: Sequence[TrialFacts], specs: SpecSet
) -> JudgeReliabilityView | None:
    """``judge_opinions_probe`` over the opinions the gate's ledger scan kept for
    ``trials`` (oldest first), so nothing is read a second time."""
    return judge_opinions_probe(gather(trial_opinions(trials), specs.oracle_stamp), specs)


def trial_opinions(trials: Iterable[TrialFacts]) -> Iterator[JudgeOpinion]:
    return (t.judge_opinion for t in trials if t.judge_opinion is not None)


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    """Primary versus secondary judge on the counted strict-mode trials."""

    both_pass: int
    primary_only: int
    secondary_only: int
    both_fail: int
    kappa: float | None
    note: str

    @property
    def n(self) -> int:
        return self.both_pass + self.primary_only + self.secondary_only + self.both_fail

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "table": {
                "both_pass": self.both_pass,
                "primary_pass_secondary_fail": self.primary_only,
                "primary_fail_secondary_pass": self.secondary_only,
                "both_fail": self.both_fail,
            },
            "kappa": self.kappa,
            "note": self.note,
        }


def judge_agreement(trials: Iterable[TrialFacts]) -> JudgeAgreement:
    pairs = [t.judge_pair for t in trials if t.judge_pair is not None]
    primary = [p == "pass" for p, _ in pairs]
    secondary = [s == "pass" for _, s in pairs]
    kappa: float | None = None
    if not pairs:
        note = "no strict-mode (two-judge) verdicts among the counted trials"
    else:
        try:
            kappa = cohens_kappa(primary, secondary)
            note = f"Cohen's kappa {kappa:.3f} over {len(pairs)} strict-mode trials"
        except UndefinedStatistic as exc:
            note = f"kappa undefined over {len(pairs)} strict-mode trials: {exc}"
    return JudgeAgreement(
        both_pass=sum(a and b for a, b in zip(primary, secondary, strict=True)),
        primary_only=sum(a and not b for a, b in zip(primary, secondary, strict=True)),
        secondary_only=sum(b and not a for a, b in zip(primary, secondary, strict=True)),
        both_fail=sum(not a and not b for a, b in zip(primary, secondary, strict=True)),
        kappa=kappa,
        note=note,
    )
