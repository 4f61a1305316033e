"""Judge agreement for the gate and the reports.

Two things are kept apart here:

* **Reliability against people** (Cohen's kappa of each judge and of the pair against a
  hand-labelled overlap) belongs to ``gate.reliability``. The gate asks it through a
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

import sqlalchemy as sa

from core.model import Tier, Verdict
from core.specs import SpecSet
from core.store import LedgerEntry, Store, ledger_table
from gate.reliability import assess, collect
from gate.stats import UndefinedStatistic, cohens_kappa
from gate.trials import TrialFacts

__all__ = [
    "JudgeAgreement",
    "JudgeReliabilityView",
    "ReliabilityProbe",
    "judge_agreement",
    "judge_reliability_probe",
]


class JudgeReliabilityView(Protocol):
    """What the gate needs from a judge-reliability assessment."""

    @property
    def reliable(self) -> bool: ...

    @property
    def problems(self) -> Sequence[str]: ...


ReliabilityProbe = Callable[[Store, SpecSet, str | None], JudgeReliabilityView | None]


def judge_reliability_probe(
    store: Store, specs: SpecSet, run_id: str | None = None
) -> JudgeReliabilityView | None:
    """``gate.reliability``'s verdict on the judge pair, over one run's judge rows or all.

    Only judge envelopes that ran are read (``collect`` ignores every other row), so the
    gate does not decode a large ledger a second time.
    """
    return assess(collect(_judge_entries(store, run_id), specs.oracle_stamp), specs)


_JUDGE_ROWS = (
    sa.select(ledger_table.c.seq, ledger_table.c.payload)
    .where(ledger_table.c.tier == Tier.JUDGE.value)
    .where(ledger_table.c.verdict != Verdict.SKIPPED.value)
    .order_by(ledger_table.c.seq)
)


def _judge_entries(store: Store, run_id: str | None) -> Iterator[LedgerEntry]:
    query = _JUDGE_ROWS if run_id is None else _JUDGE_ROWS.where(ledger_table.c.run_id == run_id)
    with store.reading() as conn:
        for seq, payload in conn.execution_options(yield_per=2000).execute(query):
            yield LedgerEntry.decode(seq, payload)


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
