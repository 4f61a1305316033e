"""The incremental gate's counting from columns, beside the trial-by-trial rules it stands
in for (the decisions themselves are compared on real ledgers in ``test_snapshot``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from migration_evals.gate.columns import TrialColumns
from migration_evals.gate.incremental import _counted, _gathered
from migration_evals.gate.reliability import gather
from migration_evals.gate.selection import select_trials
from migration_evals.gate.trials import JudgeOpinion, TrialFacts
from tests.gate.ledgers import facts


def _rerun(trial: TrialFacts, n: int, first: int, last: int) -> TrialFacts:
    """Another trial of ``trial``'s changeset, recipe and model."""
    return trial._replace(trial_id=f"t{n}", first_seq=first, last_seq=last)


def _counted_ids(columns: TrialColumns) -> list[str]:
    found = _counted(columns, np.arange(len(columns)))
    return [bytes(columns.trial_id[i]).decode() for i in found.tolist()]


def _selected_ids(trials: list[TrialFacts]) -> list[str]:
    return [t.trial_id for t in select_trials(trials).trials]


def test_the_latest_trial_per_key_counts_as_selection_says() -> None:
    trials = [facts(n) for n in range(0, 40, 4)]
    trials.append(_rerun(trials[2], 99, 50, 53))  # a re-run: it counts, not trial 8
    columns = TrialColumns().extended(trials)
    assert _counted_ids(columns) == _selected_ids(trials)
    assert "t8" not in _counted_ids(columns) and "t99" in _counted_ids(columns)


def test_a_trial_that_ended_before_an_earlier_one_of_its_key_is_not_the_latest() -> None:
    # Rows interleaved: trial 60 starts after trial 8's re-run 50 but ends before it.
    trials = [facts(n) for n in range(0, 40, 4)]
    trials += [_rerun(trials[2], 50, 50, 70), _rerun(trials[2], 60, 60, 65)]
    columns = TrialColumns().extended(trials)
    assert _counted_ids(columns) == _selected_ids(trials)
    assert "t50" in _counted_ids(columns)


def test_keys_sharing_the_high_half_of_their_digest_are_told_apart() -> None:
    trials = [facts(n) for n in range(0, 40, 4)]
    trials.append(_rerun(trials[2], 99, 50, 53))
    columns = TrialColumns().extended(trials)
    shared = np.full(len(columns), columns.key_hi[0], dtype=np.uint64)  # every key collides
    assert _counted_ids(replace(columns, key_hi=shared)) == _selected_ids(trials)


def test_columns_read_back_from_their_plain_form_are_the_same() -> None:
    trials = [facts(n, recorded_at=f"2026-11-29T00:00:{n:02d}+00:00") for n in range(5)]
    trials[3] = trials[3]._replace(marks=("row 13 judge: details.fabricated",))
    columns = TrialColumns().extended(trials)
    again = TrialColumns.from_plain(columns.to_plain())
    assert _counted_ids(again) == _counted_ids(columns) == [f"t{n}" for n in range(5)]
    assert again.marks == {3: "row 13 judge: details.fabricated"}
    assert bytes(again.recorded_at[4]).decode() == "2026-11-29T00:00:04+00:00"
    assert again.changeset_ids.values() == [f"c{n}" for n in range(5)]


def _judged(n: int, changeset: str, verdicts: tuple[tuple[str, str | None], ...]) -> TrialFacts:
    opinion = JudgeOpinion(changeset, "stamp", "", verdicts)
    return facts(n)._replace(changeset_id=changeset, judge_opinion=opinion)


def _opinion_trials() -> list[TrialFacts]:
    both = (("primary", "pass"), ("secondary", "fail"))
    return [
        _judged(1, "c-a", both),
        _judged(2, "c-b", (("primary", "fail"),)),
        _judged(3, "c-a", (("primary", "pass"), ("secondary", "pass"))),  # c-a's latest
        _judged(4, "c-c", ()),  # no judge answer: left out
        _judged(5, "c-b", (("secondary", None),)),
        facts(6),  # no judge tier
    ]


def test_opinions_are_gathered_from_columns_as_from_trials() -> None:
    trials = _opinion_trials()
    columns = TrialColumns().extended(trials)
    expected = gather((t.judge_opinion for t in trials if t.judge_opinion), "stamp")
    assert _gathered(columns, np.arange(len(columns)), "stamp") == expected
    assert expected.pairs == {"c-a": ("pass", "pass")}  # the case is not trivial


def test_changesets_sharing_the_high_half_of_their_digest_are_told_apart() -> None:
    trials = _opinion_trials()
    columns = TrialColumns().extended(trials)
    shared = np.full(len(columns), columns.cs_hi[0], dtype=np.uint64)
    expected = gather((t.judge_opinion for t in trials if t.judge_opinion), "stamp")
    assert _gathered(replace(columns, cs_hi=shared), np.arange(len(columns)), "stamp") == expected
