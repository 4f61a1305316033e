"""Judge reliability from the ledger: kappa against hand-computed references, what is
counted and what is left out, the floor and the minimum overlap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from migration_evals.core.model import (
    Changeset,
    Envelope,
    FabricatedMark,
    Stamps,
    Tier,
    Trial,
    Verdict,
)
from migration_evals.core.specs import HandLabel, SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.judges import judge_reliability_probe
from migration_evals.gate.ledger_scan import scan_ledger
from migration_evals.gate.reliability import (
    AgreementStatus,
    JudgeReliability,
    Opinions,
    assess,
    judge_reliability,
)

Verdicts = Sequence[str | None]


def _specs(specs: SpecSet, humans: Verdicts, **gate: float) -> SpecSet:
    """The shipped specs with these hand labels (item i is changeset "c{i}")."""
    labels = tuple(
        HandLabel(f"c{i}", verdict, "a reviewer", date(2026, 11, 1))
        for i, verdict in enumerate(humans)
        if verdict is not None
    )
    thresholds = replace(specs.oracle.gate, **gate)
    return replace(specs, oracle=replace(specs.oracle, gate=thresholds), hand_labels=labels)


def _opinions(primary: Verdicts, secondary: Verdicts | None = None) -> Opinions:
    """Item i is changeset "c{i}"; with a secondary, every item was judged in strict mode."""
    ids = [f"c{i}" for i in range(len(primary))]
    if secondary is None:
        return Opinions(primary=dict(zip(ids, primary, strict=True)))
    return Opinions(
        primary=dict(zip(ids, primary, strict=True)),
        secondary=dict(zip(ids, secondary, strict=True)),
        pairs=dict(zip(ids, zip(primary, secondary, strict=True), strict=True)),
    )


def _table(pp: int, pf: int, fp: int, ff: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (first rater's label first)."""
    first = ["pass"] * (pp + pf) + ["fail"] * (fp + ff)
    second = ["pass"] * pp + ["fail"] * pf + ["pass"] * fp + ["fail"] * ff
    return first, second


def test_the_textbook_table_is_below_the_floor(specs: SpecSet) -> None:
    # Wikipedia, "Cohen's kappa", worked example: 50 items, 20 yes/yes, 5 yes/no, 10 no/yes,
    # 15 no/no: p_o = 35/50 = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.2/0.5 = 0.4.
    judge, humans = _table(20, 5, 10, 15)
    result = assess(_opinions(judge), _specs(specs, humans))
    agreement = result.primary_vs_humans
    assert (agreement.n, agreement.agreed) == (50, 35)
    assert agreement.kappa == pytest.approx(0.4)
    assert agreement.status is AgreementStatus.BELOW_FLOOR
    assert "kappa 0.400 is below the floor 0.6" in agreement.problem
    assert not result.reliable


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # Wikipedia, "Cohen's kappa", "Same percentages but different numbers": both tables
        # agree on 60 of 100 items. (45, 15, 25, 15): p_e = .6*.7 + .4*.3 = .54, kappa =
        # .06/.46 = 0.1304. (25, 35, 5, 35): p_e = .6*.3 + .4*.7 = .46, kappa = .14/.54 = 0.2593.
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
        # By hand: 18 pass/pass, 2 pass/fail, 2 fail/pass, 18 fail/fail; p_o = 0.9,
        # p_e = 0.5*0.5 + 0.5*0.5 = 0.5, kappa = 0.4/0.5 = 0.8.
        ((18, 2, 2, 18), 0.8),
    ],
)
def test_kappa_against_hand_computed_tables(
    specs: SpecSet, table: tuple[int, int, int, int], kappa: float
) -> None:
    judge, humans = _table(*table)
    result = assess(_opinions(judge), _specs(specs, humans))
    assert result.primary_vs_humans.kappa == pytest.approx(kappa, abs=5e-5)


def _good_pair() -> tuple[list[str], list[str], list[str]]:
    """40 items, 20 pass and 20 fail by the humans; each judge flips four of them."""
    humans = ["pass"] * 20 + ["fail"] * 20
    primary, secondary = list(humans), list(humans)
    for i in (0, 1, 20, 21):
        primary[i] = "fail" if humans[i] == "pass" else "pass"
    for i in (2, 3, 22, 23):
        secondary[i] = "fail" if humans[i] == "pass" else "pass"
    return humans, primary, secondary


def test_a_pair_at_or_above_the_floor_is_reliable(specs: SpecSet) -> None:
    humans, primary, secondary = _good_pair()
    result = assess(_opinions(primary, secondary), _specs(specs, humans))
    # Each judge vs humans is the 18/2/2/18 table above: kappa 0.8. The judges differ on 8
    # of 40 items with 20 passes each: p_o = 0.8, p_e = 0.5, kappa = 0.6, exactly the floor.
    assert result.primary_vs_humans.kappa == pytest.approx(0.8)
    assert result.secondary_vs_humans.kappa == pytest.approx(0.8)
    assert result.between_judges.kappa == pytest.approx(0.6)
    assert result.strict_disagreements == 8  # graded "judges disagree", still counted
    assert result.reliable, result.problems
    assert result.to_dict()["reliable"] is True


def test_too_few_items_are_unreliable_whatever_the_kappa(specs: SpecSet) -> None:
    humans, primary, secondary = _good_pair()
    result = assess(_opinions(primary, secondary), _specs(specs, humans, judge_kappa_min_n=41))
    assert {a.status for a in result.agreements} == {AgreementStatus.TOO_FEW}
    assert len(result.problems) == 3


def test_one_label_everywhere_leaves_kappa_undefined(specs: SpecSet) -> None:
    everyone = ["pass"] * 40
    result = assess(_opinions(everyone, everyone), _specs(specs, everyone))
    assert result.primary_vs_humans.status is AgreementStatus.UNDEFINED
    assert result.primary_vs_humans.kappa is None
    assert "insufficient data" in result.primary_vs_humans.problem


def test_without_strict_runs_the_judges_were_never_compared(specs: SpecSet) -> None:
    humans, primary, _ = _good_pair()
    result = assess(_opinions(primary), _specs(specs, humans))
    assert result.primary_vs_humans.ok
    assert result.secondary_vs_humans.status is AgreementStatus.NO_ITEMS
    assert result.between_judges.status is AgreementStatus.NO_ITEMS
    assert not result.reliable


def test_items_without_a_valid_verdict_or_label_are_not_compared(specs: SpecSet) -> None:
    humans, primary, secondary = _good_pair()
    primary[5] = None  # the primary judge gave no valid verdict on c5
    labels: list[str | None] = list(humans)
    labels[6] = None  # nobody labelled c6
    result = assess(_opinions(primary, secondary), _specs(specs, labels))
    assert result.primary_vs_humans.n == 38
    assert result.secondary_vs_humans.n == 39
    assert result.between_judges.n == 39


# -- from the ledger ---------------------------------------------------------------------


def _envelope(
    specs: SpecSet,
    changeset: str,
    verdicts: Sequence[str | None],
    *,
    oracle: str | None = None,
    **changes: object,
) -> Envelope:
    judges = [
        {"role": role, "model": "m", "answer": {"verdict": verdict}}
        for role, verdict in zip(("primary", "secondary"), verdicts, strict=False)
    ]
    envelope = Envelope(
        trial_id=f"t-{changeset}",
        changeset_id=changeset,
        tier=Tier.JUDGE,
        verdict=Verdict.PASS,
        list_cost_usd=0.08,
        actual_cost_usd=0.01,
        duration_s=1.0,
        stamps=Stamps(oracle or specs.oracle_stamp, "r", "h"),
        details={"strict": len(judges) == 2, "judges": judges},
    )
    return replace(envelope, **changes)  # type: ignore[arg-type]


def _store(tmp_path: Path, runs: dict[str, list[Envelope]]) -> Store:
    store = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    for run_id, envelopes in runs.items():
        for envelope in envelopes:
            changeset = Changeset(
                envelope.changeset_id,
                "repo",
                "0" * 40,
                "patch",
                "java8-to-17",
                "gpt-5",
                date(2021, 1, 1),
            )
            store.ledger.append_trial(Trial(envelope.trial_id, run_id, changeset, (envelope,)), {})
    return store


def test_reliability_reads_each_judges_own_verdicts_from_the_ledger(
    specs: SpecSet, tmp_path: Path
) -> None:
    spec = _specs(specs, ["pass", "fail", "pass"])
    mark = FabricatedMark("judge", "k", "path", "no cassette")
    store = _store(
        tmp_path,
        {
            "r1": [
                _envelope(spec, "c0", ["fail", "fail"]),  # superseded by the later run
                _envelope(spec, "c1", ["fail", "pass"], verdict=Verdict.FAIL),  # disagreement
                _envelope(spec, "c2", ["pass", "pass"], oracle="0" * 64),  # stale
            ],
            "r2": [
                _envelope(spec, "c0", ["pass", "pass"]),
                _envelope(spec, "c0", ["fail", "fail"], cached=True),  # a cache hit: a copy
                _envelope(spec, "c2", ["fail", "fail"], fabricated=(mark,)),
                _envelope(spec, "c3", [], verdict=Verdict.ERROR, details={}),
                _envelope(spec, "c4", [], verdict=Verdict.SKIPPED, details={}),
            ],
        },
    )
    result = judge_reliability(store.ledger, spec)
    assert result.judged == 2  # c0 (latest) and c1
    assert result.left_out == {"cached": 1, "fabricated": 1, "no judge answer": 1, "stale": 1}
    assert result.strict_disagreements == 1
    assert (result.primary_vs_humans.n, result.primary_vs_humans.agreed) == (2, 2)
    assert (result.secondary_vs_humans.n, result.secondary_vs_humans.agreed) == (2, 1)
    assert result.oracle_stamp == spec.oracle_stamp
    assert result.labels_stamp == spec.hand_labels_stamp

    only_r1 = judge_reliability(store.ledger, spec, run_id="r1")
    assert only_r1.judged == 2
    assert only_r1.primary_vs_humans.agreed == 1  # c0 said fail in r1
    store.close()


def test_a_later_non_strict_run_keeps_the_strict_pair(specs: SpecSet, tmp_path: Path) -> None:
    spec = _specs(specs, ["pass"])
    store = _store(
        tmp_path,
        {
            "strict": [_envelope(spec, "c0", ["pass", "fail"], verdict=Verdict.FAIL)],
            "plain": [_envelope(spec, "c0", ["fail"])],
        },
    )
    result = judge_reliability(store.ledger, spec)
    # Each judge's latest word against the humans; the pair from the one strict question.
    assert result.primary_vs_humans.agreed == 0  # the later plain run said fail
    assert result.secondary_vs_humans.agreed == 0
    assert (result.between_judges.n, result.strict_disagreements) == (1, 1)
    store.close()


def test_the_gate_scan_finds_the_same_opinions_as_reading_the_ledger(
    specs: SpecSet, tmp_path: Path
) -> None:
    spec = _specs(specs, ["pass", "fail", "pass", "fail"])
    mark = FabricatedMark("judge", "k", "path", "no cassette")
    runs = {
        "r1": [
            _envelope(spec, "c0", ["fail", "fail"]),
            _envelope(spec, "c1", ["fail", "pass"], verdict=Verdict.FAIL),
            _envelope(spec, "c2", ["pass", "pass"], oracle="0" * 64),
            _envelope(spec, "c3", ["pass"]),
        ],
        "r2": [
            _envelope(spec, "c0", ["pass", "pass"]),
            _envelope(spec, "c1", ["fail", "fail"], cached=True),
            _envelope(spec, "c2", ["fail", "fail"], fabricated=(mark,)),
            _envelope(spec, "c3", [None, "fail"]),
            _envelope(spec, "c4", [], verdict=Verdict.ERROR, details={}),
            _envelope(spec, "c5", [], verdict=Verdict.SKIPPED, details={}),
        ],
    }
    # One trial per envelope, as the cascade writes them.
    unique = {
        run: [replace(e, trial_id=f"{run}-{e.changeset_id}") for e in envelopes]
        for run, envelopes in runs.items()
    }
    store = _store(tmp_path, unique)
    scanned = scan_ledger(store).trials
    for run_id in (None, "r1", "r2"):
        trials = [t for t in scanned if run_id is None or t.run_id == run_id]
        from_scan = judge_reliability_probe(trials, spec)
        assert isinstance(from_scan, JudgeReliability)
        assert from_scan.to_dict() == judge_reliability(store.ledger, spec, run_id=run_id).to_dict()
    assert from_scan.left_out == {"cached": 1, "fabricated": 1, "no judge answer": 1}
    store.close()
