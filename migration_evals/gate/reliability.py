"""Judge reliability: Cohen's kappa of each judge against the hand labels and of the two
judges against each other, read from the judge envelopes in the ledger.

Public interface (the publication gate refuses strict-mode numbers through it)::

    judge_reliability(ledger, specs, *, run_id=None) -> JudgeReliability
        .reliable      True only if all three agreements are defined, rest on at least
                       gate.judge_kappa_min_n items and reach gate.judge_kappa_floor
        .problems      one line per reason it is not reliable (empty when reliable)
        .primary_vs_humans, .secondary_vs_humans, .between_judges     Agreement each
        .to_dict()     JSON-ready, with the oracle and hand-label stamps it was computed under
    collect(entries, oracle_stamp) -> Opinions    what each judge said, from ledger entries
    gather(opinions, oracle_stamp) -> Opinions    the same from the gate scan's judge opinions
    assess(opinions, specs) -> JudgeReliability   the same verdict over collected opinions

What counts, and why:

- Only judge envelopes graded under the current oracle stamp: an older stamp means another
  prompt, schema or model, whose answers say nothing about today's judges ("stale").
- No cached envelopes (a cache hit repeats an earlier answer; counting it again would
  inflate agreement) and no fabricated ones (a cassette miss is nobody's opinion).
- Each judge's own verdict, from the transcripts in ``details["judges"]``, never the
  tier's verdict: a strict-mode disagreement (graded ``fail``) still counts as one judge
  saying pass and the other fail.
- Judge against humans: each judge's latest verdict per labelled changeset. Judge against
  judge: the two verdicts of the latest strict-mode envelope per changeset, labelled or
  not (a later non-strict run does not erase a pair).
- A judge that gave no valid verdict (inconclusive answer) has no label for that item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from migration_evals.core.ledger import Ledger, LedgerEntry
from migration_evals.core.model import Tier, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.gate.stats import UndefinedStatistic, cohens_kappa
from migration_evals.gate.trials import JudgeOpinion, judge_opinion

__all__ = [
    "Agreement",
    "AgreementStatus",
    "JudgeReliability",
    "Opinions",
    "assess",
    "collect",
    "gather",
    "judge_reliability",
    "left_out_reason",
]

HUMANS = "humans"


class AgreementStatus(StrEnum):
    """Whether one pair of raters agrees well enough, or why not."""

    OK = "ok"
    NO_ITEMS = "no items"  # no item rated by both
    UNDEFINED = "undefined"  # kappa has no value (both used one and the same label)
    TOO_FEW = "too few items"  # fewer than gate.judge_kappa_min_n
    BELOW_FLOOR = "below floor"  # kappa under gate.judge_kappa_floor


@dataclass(frozen=True, slots=True)
class Opinions:
    """What the judges said, per changeset id (None: no valid verdict).

    ``primary`` and ``secondary`` hold each judge's latest verdict; ``pairs`` the two
    verdicts of the latest strict-mode envelope, so both answers of a pair come from the
    same question.
    """

    primary: Mapping[str, str | None] = field(default_factory=dict)
    secondary: Mapping[str, str | None] = field(default_factory=dict)
    pairs: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    left_out: Mapping[str, int] = field(default_factory=dict)

    @property
    def changesets(self) -> int:
        return len(set(self.primary) | set(self.secondary))

    @property
    def disagreements(self) -> int:
        return sum(None not in pair and pair[0] != pair[1] for pair in self.pairs.values())


@dataclass(frozen=True, slots=True)
class Agreement:
    """Two raters over the items both rated: size, raw agreement, kappa, and any problem."""

    first: str
    second: str
    n: int
    agreed: int
    kappa: float | None
    status: AgreementStatus = AgreementStatus.OK
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.status is AgreementStatus.OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "raters": [self.first, self.second],
            "n": self.n,
            "agreed": self.agreed,
            "kappa": None if self.kappa is None else round(self.kappa, 6),
            "status": self.status.value,
            "problem": self.problem,
        }


@dataclass(frozen=True, slots=True)
class JudgeReliability:
    floor: float
    min_n: int
    primary_vs_humans: Agreement
    secondary_vs_humans: Agreement
    between_judges: Agreement
    judged: int  # changesets with at least one usable judge opinion
    strict_disagreements: int
    labels: int
    oracle_stamp: str
    labels_stamp: str
    left_out: Mapping[str, int] = field(default_factory=dict)

    @property
    def agreements(self) -> tuple[Agreement, Agreement, Agreement]:
        return self.primary_vs_humans, self.secondary_vs_humans, self.between_judges

    @property
    def reliable(self) -> bool:
        return all(a.ok for a in self.agreements)

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(a.problem for a in self.agreements if a.problem)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reliable": self.reliable,
            "problems": list(self.problems),
            "floor": self.floor,
            "min_n": self.min_n,
            "agreements": [a.to_dict() for a in self.agreements],
            "judged": self.judged,
            "strict_disagreements": self.strict_disagreements,
            "labels": self.labels,
            "left_out": dict(self.left_out),
            "oracle_stamp": self.oracle_stamp,
            "labels_stamp": self.labels_stamp,
        }


def collect(entries: Iterable[LedgerEntry], oracle_stamp: str) -> Opinions:
    """``gather`` over ledger entries (only the judge tier's rows that ran are read)."""
    return gather(
        (
            judge_opinion(entry.envelope.to_dict())
            for entry in entries
            if entry.envelope.tier is Tier.JUDGE and entry.envelope.verdict is not Verdict.SKIPPED
        ),
        oracle_stamp,
    )


def gather(opinions: Iterable[JudgeOpinion], oracle_stamp: str) -> Opinions:
    """Each judge's latest opinion per changeset, the latest strict pairs, and how many
    envelopes were left out (by reason), from judge opinions oldest first."""
    primary: dict[str, str | None] = {}
    secondary: dict[str, str | None] = {}
    pairs: dict[str, tuple[str | None, str | None]] = {}
    left_out: Counter[str] = Counter()
    for opinion in opinions:
        reason = left_out_reason(opinion, oracle_stamp)
        if reason:
            left_out[reason] += 1
            continue
        verdicts, changeset = dict(opinion.verdicts), opinion.changeset_id
        if "primary" in verdicts:
            primary[changeset] = verdicts["primary"]
        if "secondary" in verdicts:
            secondary[changeset] = verdicts["secondary"]
        if "primary" in verdicts and "secondary" in verdicts:
            pairs[changeset] = (verdicts["primary"], verdicts["secondary"])
    return Opinions(primary, secondary, pairs, dict(sorted(left_out.items())))


def left_out_reason(opinion: JudgeOpinion, oracle_stamp: str) -> str:
    """Why ``opinion`` cannot count under ``oracle_stamp`` (empty: it counts)."""
    if opinion.left_out:
        return opinion.left_out
    if opinion.oracle_stamp != oracle_stamp:
        return "stale"
    if not opinion.verdicts:
        return "no judge answer"  # errors, budget stops: the judges were never heard
    return ""


def _agreement(
    names: tuple[str, str], pairs: Sequence[tuple[str, str]], floor: float, min_n: int
) -> Agreement:
    first, second = names
    n, agreed = len(pairs), sum(a == b for a, b in pairs)
    kappa: float | None = None
    status, why = AgreementStatus.NO_ITEMS, "no item rated by both"
    if n:
        try:
            kappa = cohens_kappa([a for a, _ in pairs], [b for _, b in pairs])
        except UndefinedStatistic as exc:
            status, why = AgreementStatus.UNDEFINED, f"{exc} (insufficient data)"
        else:
            status, why = _against_thresholds(kappa, n, floor, min_n)
    problem = "" if status is AgreementStatus.OK else f"{first} vs {second}: {why}"
    return Agreement(first, second, n, agreed, kappa, status, problem)


def _against_thresholds(
    kappa: float, n: int, floor: float, min_n: int
) -> tuple[AgreementStatus, str]:
    if n < min_n:
        return AgreementStatus.TOO_FEW, f"only {n} item(s) rated by both, fewer than {min_n}"
    if kappa < floor:
        return AgreementStatus.BELOW_FLOOR, f"kappa {kappa:.3f} is below the floor {floor:g}"
    return AgreementStatus.OK, ""


def assess(opinions: Opinions, specs: SpecSet) -> JudgeReliability:
    """Reliability of the spec's judge pair over ``opinions``, against the hand labels."""
    gate, judge = specs.oracle.gate, specs.oracle.judge
    floor, min_n = float(gate.judge_kappa_floor), gate.judge_kappa_min_n
    primary = f"{judge.primary.model} (primary)"
    secondary = f"{judge.secondary.model} (secondary)"
    human = {label.changeset: label.verdict for label in specs.hand_labels}

    def against_humans(name: str, said: Mapping[str, str | None]) -> Agreement:
        pairs = _rated((verdict, human.get(changeset)) for changeset, verdict in said.items())
        return _agreement((name, HUMANS), pairs, floor, min_n)

    return JudgeReliability(
        floor=floor,
        min_n=min_n,
        primary_vs_humans=against_humans(primary, opinions.primary),
        secondary_vs_humans=against_humans(secondary, opinions.secondary),
        between_judges=_agreement(
            (primary, secondary), _rated(opinions.pairs.values()), floor, min_n
        ),
        judged=opinions.changesets,
        strict_disagreements=opinions.disagreements,
        labels=len(specs.hand_labels),
        oracle_stamp=specs.oracle_stamp,
        labels_stamp=specs.hand_labels_stamp,
        left_out=dict(opinions.left_out),
    )


def _rated(pairs: Iterable[tuple[str | None, str | None]]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in pairs if a is not None and b is not None]


def judge_reliability(
    ledger: Ledger, specs: SpecSet, *, run_id: str | None = None
) -> JudgeReliability:
    """Judge reliability from the ledger (one run, or all of it) under the current specs."""
    return assess(collect(ledger.entries(run_id=run_id), specs.oracle_stamp), specs)
