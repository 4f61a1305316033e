"""The gold anchor: do the funnel's verdicts agree with what happened to real pull requests?

Each gold row pairs a labelled pull request (accepted: merged and survived; rejected) with
the funnel's verdict on the same changeset. Phi (Matthews correlation) between "the
funnel passed it" and "it was accepted" is computed over rows with a final label and a
graded verdict (``inconclusive`` counts as not passed, as everywhere; pending labels and
infrastructure errors are left out and counted). Below the spec's floor, or with fewer
rows than its minimum, the evaluation declares itself **broken**: every report carries a
banner, the gate refuses everything, and the bot says so on its check runs
(``anchor_status`` is the function it calls).

Labels imported from another team's anchor (``migration-evals gold import``, see
``migration_evals.gate.shared_anchor``) count like local ones while the stamps they were graded
under are the current specs'; the status names each anchor they came from (``sources``), and leaves
out, naming it, an imported anchor whose stamps are no longer current.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from migration_evals.core.database import Database
from migration_evals.core.gold import GoldLabel, GoldRow, gold_rows
from migration_evals.core.model import Verdict
from migration_evals.core.spec_types import GateThresholds
from migration_evals.core.specs import SpecSet
from migration_evals.gate.stats import UndefinedStatistic, matthews_corrcoef

__all__ = [
    "IMPORTED",
    "AnchorSource",
    "AnchorState",
    "AnchorStatus",
    "anchor_from_rows",
    "anchor_from_table",
    "anchor_status",
    "stale_stamps",
]

# The evidence key of a gold row imported from a shared anchor: where it came from.
IMPORTED = "imported"

_GRADED = {Verdict.PASS: True, Verdict.FAIL: False, Verdict.INCONCLUSIVE: False}


class AnchorState(StrEnum):
    OK = "ok"
    BROKEN = "broken"


@dataclass(frozen=True, slots=True)
class AnchorSource:
    """A shared anchor whose labels were imported: the file, its digest and signer, how
    many labels, and which of its stamps are no longer the current specs' ("": none)."""

    origin: str
    digest: str
    created_at: str
    signer: str  # the signing key's id; "" when the anchor was unsigned
    rows: int
    stale: str = ""

    @property
    def summary(self) -> str:
        signed = f"signed by key {self.signer}" if self.signer else "unsigned"
        text = (
            f"{self.rows} label(s) imported from {self.origin} (anchor {self.digest[:16]}, "
            f"exported {self.created_at}, {signed})"
        )
        return f"{text}; left out: {self.stale} changed since" if self.stale else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "digest": self.digest,
            "created_at": self.created_at,
            "signer": self.signer,
            "rows": self.rows,
            "stale": self.stale,
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnchorSource:
        return cls(
            str(data["origin"]),
            str(data["digest"]),
            str(data["created_at"]),
            str(data["signer"]),
            int(data["rows"]),
            str(data.get("stale") or ""),
        )


@dataclass(frozen=True, slots=True)
class AnchorStatus:
    """Phi with its n, the floor and minimum n it is held to, and the 2x2 table behind it."""

    state: AnchorState
    phi: float | None
    n: int
    floor: float
    min_n: int
    reason: str
    # funnel verdict x gold label: passed & accepted, passed & rejected, ...
    passed_accepted: int = 0
    passed_rejected: int = 0
    failed_accepted: int = 0
    failed_rejected: int = 0
    pending: int = 0
    unmatched: int = 0
    sources: tuple[AnchorSource, ...] = ()  # imported anchors, where they came from

    @property
    def broken(self) -> bool:
        return self.state is AnchorState.BROKEN

    def banner(self) -> str | None:
        """The sentence every report and check run shows while the anchor is broken."""
        if not self.broken:
            return None
        return (
            f"This evaluation is BROKEN: {self.reason}. Its verdicts are not anchored to "
            "real outcomes, and no number from it may be published."
        )

    def to_dict(self) -> dict[str, Any]:
        document = self._table_dict()
        # Only an anchor with imported labels lists them, so that bundles published before
        # anchors could be shared still verify.
        if self.sources:
            document["sources"] = [source.to_dict() for source in self.sources]
        return document

    def _table_dict(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "phi": self.phi,
            "n": self.n,
            "floor": self.floor,
            "min_n": self.min_n,
            "reason": self.reason,
            "table": {
                "passed_accepted": self.passed_accepted,
                "passed_rejected": self.passed_rejected,
                "failed_accepted": self.failed_accepted,
                "failed_rejected": self.failed_rejected,
            },
            "pending": self.pending,
            "unmatched": self.unmatched,
        }


def _pairs(rows: Iterable[GoldRow]) -> tuple[list[tuple[bool, bool]], int, int]:
    pairs: list[tuple[bool, bool]] = []
    pending = unmatched = 0
    for row in rows:
        if row.label is GoldLabel.PENDING:
            pending += 1
        elif row.funnel_verdict not in _GRADED:
            unmatched += 1
        else:
            assert row.funnel_verdict is not None
            pairs.append((_GRADED[row.funnel_verdict], row.label is GoldLabel.ACCEPTED))
    return pairs, pending, unmatched


def _judge(pairs: list[tuple[bool, bool]], floor: float, min_n: int) -> tuple[float | None, str]:
    n = len(pairs)
    if n < min_n:
        return None, f"only {n} gold-labelled pull request(s), fewer than the minimum {min_n}"
    try:
        phi = matthews_corrcoef([p[0] for p in pairs], [p[1] for p in pairs])
    except UndefinedStatistic as exc:
        return None, f"the gold correlation is undefined over {n} rows ({exc})"
    if phi < floor:
        return phi, f"the gold correlation phi={phi:.3f} (n={n}) is below the floor {floor}"
    return phi, f"phi={phi:.3f} over {n} gold-labelled pull requests (floor {floor})"


# The oracle spec's thresholds, or those a published anchor document carries (read as
# the document says them: a shared anchor may have been made under edited thresholds).
Thresholds = GateThresholds | Mapping[str, Any]


def _floor(gate: Thresholds) -> tuple[float, int]:
    if isinstance(gate, GateThresholds):
        return float(gate.gold_correlation_floor), gate.gold_min_n
    return float(gate["gold_correlation_floor"]), int(gate["gold_min_n"])


def _from_pairs(
    pairs: list[tuple[bool, bool]], pending: int, unmatched: int, gate: Thresholds
) -> AnchorStatus:
    floor, min_n = _floor(gate)
    phi, reason = _judge(pairs, floor, min_n)
    ok = phi is not None and phi >= floor and len(pairs) >= min_n
    return AnchorStatus(
        state=AnchorState.OK if ok else AnchorState.BROKEN,
        phi=phi,
        n=len(pairs),
        floor=floor,
        min_n=min_n,
        reason=reason,
        passed_accepted=sum(v and a for v, a in pairs),
        passed_rejected=sum(v and not a for v, a in pairs),
        failed_accepted=sum(not v and a for v, a in pairs),
        failed_rejected=sum(not v and not a for v, a in pairs),
        pending=pending,
        unmatched=unmatched,
    )


def anchor_from_rows(
    rows: Iterable[GoldRow], gate: Thresholds, sources: Sequence[AnchorSource] = ()
) -> AnchorStatus:
    """The anchor over ``rows`` under the gate thresholds of the oracle spec."""
    pairs, pending, unmatched = _pairs(rows)
    return replace(_from_pairs(pairs, pending, unmatched, gate), sources=tuple(sources))


def anchor_from_table(document: Mapping[str, Any], gate: Thresholds) -> AnchorStatus:
    """The anchor recomputed from its published 2x2 table (``AnchorStatus.to_dict``)."""
    table = document["table"]
    pairs = (
        [(True, True)] * int(table["passed_accepted"])
        + [(True, False)] * int(table["passed_rejected"])
        + [(False, True)] * int(table["failed_accepted"])
        + [(False, False)] * int(table["failed_rejected"])
    )
    status = _from_pairs(pairs, int(document["pending"]), int(document["unmatched"]), gate)
    # Where imported labels came from is provenance, not arithmetic: carried as published.
    sources = tuple(AnchorSource.from_dict(s) for s in document.get("sources") or ())
    return replace(status, sources=sources)


def stale_stamps(stamps: Mapping[str, Any], specs: SpecSet) -> str:
    """Which of an anchor's stamps (``{"oracle": ..., "recipes": {name: ...}}``) are not
    the current specs' ("" when all are). The hypotheses are not among them: they change
    no verdict."""
    stale = [] if stamps.get("oracle") == specs.oracle_stamp else ["the oracle spec"]
    for name, value in sorted(dict(stamps.get("recipes") or {}).items()):
        recipe = specs.recipes.get(name)
        if recipe is None or recipe.stamp != value:
            stale.append(f"recipe {name}")
    return ", ".join(stale)


def _imported(rows: Sequence[GoldRow], specs: SpecSet) -> tuple[list[GoldRow], list[AnchorSource]]:
    """The rows that count, and the imported anchors behind them (stale ones left out)."""
    found: dict[str, tuple[Mapping[str, Any], list[GoldRow]]] = {}
    counted: list[GoldRow] = []
    for row in rows:
        origin = row.evidence.get(IMPORTED)
        if not isinstance(origin, Mapping):
            counted.append(row)
            continue
        found.setdefault(str(origin.get("digest")), (origin, []))[1].append(row)
    sources = []
    for digest, (origin, members) in sorted(found.items()):
        stale = stale_stamps(origin.get("stamps") or {}, specs)
        counted.extend([] if stale else members)
        sources.append(
            AnchorSource(
                str(origin.get("from")),
                digest,
                str(origin.get("created_at")),
                str(origin.get("signer") or ""),
                len(members),
                stale,
            )
        )
    return counted, sources


def anchor_status(db: Database, specs: SpecSet) -> AnchorStatus:
    """Whether the evaluation behind ``db`` is anchored or broken (for gate, reports, bot)."""
    counted, sources = _imported(gold_rows(db), specs)
    return anchor_from_rows(counted, specs.oracle.gate, sources)
