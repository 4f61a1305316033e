"""Pre-registered hypotheses, tested exactly as registered, and the HARKing check.

A hypothesis (``specs/hypotheses/*.yaml``) names two groups as filters on trial attributes
(``model``, ``recipe``; a list means any of), a metric, a test, the alternative, alpha and
a minimum n per group. Its result is that test on the graded trials of each group, or
"insufficient data" when a group is smaller than its minimum.

HARKing (hypothesising after the results are known) is a hypothesis registered after the
first result it covers was recorded. Registration dates have day resolution, so a result
recorded on the registration day itself counts as after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from operator import attrgetter
from typing import Any

from migration_evals.core.specs import Hypothesis, SpecSet
from migration_evals.gate.stats import two_proportion_ztest
from migration_evals.gate.trials import FILTERABLE, TrialFacts, set_digest

__all__ = [
    "Harking",
    "HypothesisResult",
    "HypothesisStatus",
    "TrialGroup",
    "evaluate_hypotheses",
    "find_harking",
]

_SUPPORTED = {("pass_rate", "two_proportion_ztest")}


class HypothesisStatus(StrEnum):
    TESTED = "tested"
    INSUFFICIENT_DATA = "insufficient data"
    NOT_COMPUTABLE = "cannot be computed"


@dataclass(frozen=True, slots=True)
class GroupTally:
    passed: int
    graded: int
    trials_digest: str

    def to_dict(self) -> dict[str, Any]:
        rate = self.passed / self.graded if self.graded else None
        return {
            "passed": self.passed,
            "graded": self.graded,
            "rate": rate,
            "trials_digest": self.trials_digest,
        }


@dataclass(frozen=True, slots=True)
class HypothesisResult:
    """A registered hypothesis and its test outcome."""

    hypothesis: Hypothesis
    status: HypothesisStatus
    a: GroupTally
    b: GroupTally
    z: float | None = None
    p: float | None = None
    detail: str = ""

    @property
    def reject_null(self) -> bool | None:
        if self.p is None:
            return None
        return self.p < self.hypothesis.alpha

    def summary(self) -> str:
        if self.status is not HypothesisStatus.TESTED:
            return f"{self.status.value}: {self.detail}"
        assert self.p is not None and self.z is not None
        verdict = "null rejected" if self.reject_null else "null not rejected"
        return f"z={self.z:.3f}, p={self.p:.4f}: {verdict} at alpha {self.hypothesis.alpha}"

    def to_dict(self) -> dict[str, Any]:
        hypothesis = self.hypothesis
        return {
            "statement": hypothesis.statement,
            "registered_at": hypothesis.registered_at.isoformat(),
            "metric": hypothesis.metric,
            "test": hypothesis.test,
            "groups": {"a": dict(hypothesis.groups.a), "b": dict(hypothesis.groups.b)},
            "alternative": hypothesis.alternative,
            "alpha": hypothesis.alpha,
            "min_n": hypothesis.min_n,
            "status": self.status.value,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "z": self.z,
            "p": self.p,
            "reject_null": self.reject_null,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class TrialGroup:
    """A group's filters, compiled once: (trial field, allowed values) per key."""

    checks: tuple[tuple[str, frozenset[str]], ...]
    unknown: tuple[str, ...]

    @classmethod
    def of(cls, filters: Mapping[str, Any]) -> TrialGroup:
        checks, unknown = [], []
        for key, wanted in filters.items():
            name = FILTERABLE.get(key)
            if name is None:
                unknown.append(key)
                continue
            values = wanted if isinstance(wanted, list) else [wanted]
            checks.append((name, frozenset(str(v) for v in values)))
        return cls(tuple(checks), tuple(unknown))

    def holds(self, trial: TrialFacts) -> bool:
        return not self.unknown and all(getattr(trial, n) in ok for n, ok in self.checks)

    def members(self, trials: Iterable[TrialFacts]) -> list[TrialFacts]:
        """The trials in the group. Trials share a few distinct filtered values (models,
        recipes), so each distinct combination is judged once, not each of 100,000 trials."""
        if self.unknown:
            return []
        if not self.checks:
            return list(trials)
        key = attrgetter(*(name for name, _ in self.checks))
        judged: dict[Any, bool] = {}
        found = []
        for trial in trials:
            values = key(trial)
            inside = judged.get(values)
            if inside is None:
                inside = judged[values] = self.holds(trial)
            if inside:
                found.append(trial)
        return found


def _tally(trials: Sequence[TrialFacts]) -> GroupTally:
    graded = [t for t in trials if t.outcome.graded]
    return GroupTally(sum(t.passed for t in graded), len(graded), set_digest(graded))


def _test(hypothesis: Hypothesis, trials: Sequence[TrialFacts]) -> HypothesisResult:
    groups = hypothesis.groups
    group_a, group_b = TrialGroup.of(groups.a), TrialGroup.of(groups.b)
    a, b = _tally(group_a.members(trials)), _tally(group_b.members(trials))
    unknown = [*group_a.unknown, *group_b.unknown]
    if unknown or (hypothesis.metric, hypothesis.test) not in _SUPPORTED:
        what = (
            f"unknown filter key(s) {', '.join(sorted(set(unknown)))}"
            if unknown
            else (f"metric {hypothesis.metric} with test {hypothesis.test} is not implemented")
        )
        return HypothesisResult(hypothesis, HypothesisStatus.NOT_COMPUTABLE, a, b, detail=what)
    min_n = hypothesis.min_n
    if a.graded < min_n or b.graded < min_n:
        detail = f"group a has {a.graded}, group b {b.graded} graded trials; each needs {min_n}"
        return HypothesisResult(hypothesis, HypothesisStatus.INSUFFICIENT_DATA, a, b, detail=detail)
    z, p = two_proportion_ztest(a.passed, a.graded, b.passed, b.graded, hypothesis.alternative)
    return HypothesisResult(hypothesis, HypothesisStatus.TESTED, a, b, z=z, p=p)


def evaluate_hypotheses(
    trials: Sequence[TrialFacts], specs: SpecSet
) -> tuple[HypothesisResult, ...]:
    """Every registered hypothesis, in id order, tested on the counted trials."""
    return tuple(_test(specs.hypotheses[key], trials) for key in sorted(specs.hypotheses))


@dataclass(frozen=True, slots=True)
class Harking:
    """A hypothesis registered after the first result it covers."""

    hypothesis: str
    registered_at: date
    first_result_at: str
    trial_id: str

    def detail(self) -> str:
        return (
            f"hypothesis {self.hypothesis} was registered on {self.registered_at}, after its "
            f"first result (trial {self.trial_id}, recorded {self.first_result_at})"
        )


def find_harking(specs: SpecSet, scope: Iterable[TrialFacts]) -> tuple[Harking, ...]:
    """Hypotheses registered on a later day than their earliest covered result.

    ``scope`` holds every trial that could have been seen, superseded ones included.
    """
    trials = list(scope)
    found = []
    for key in sorted(specs.hypotheses):
        hypothesis = specs.hypotheses[key]
        groups = hypothesis.groups
        group_a, group_b = TrialGroup.of(groups.a), TrialGroup.of(groups.b)
        covered = [*group_a.members(trials), *group_b.members(trials)]
        if not covered:
            continue
        first = min(covered, key=lambda t: t.recorded_at)
        if date.fromisoformat(first.recorded_at[:10]) < hypothesis.registered_at:
            found.append(Harking(key, hypothesis.registered_at, first.recorded_at, first.trial_id))
    return tuple(found)
