"""The contamination tripwire: a clear pre-cutoff advantage trips it, a balanced one not."""

from __future__ import annotations

from migration_evals.core.specs import SpecSet
from migration_evals.gate.contamination import ContaminationStatus, contamination
from migration_evals.gate.stats import two_proportion_ztest
from tests.gate.ledgers import POST, PRE, facts


def _trials(model: str, pre: tuple[int, int], post: tuple[int, int]) -> list:  # type: ignore[type-arg]
    made, n = [], 0
    for created, (passed, total) in ((PRE, pre), (POST, post)):
        for index in range(total):
            outcome = "pass" if index < passed else "fail"
            made.append(facts(n, model, outcome=outcome, created=created))
            n += 1
    return made


def test_a_clear_pre_cutoff_advantage_trips(specs: SpecSet) -> None:
    (found,) = contamination(_trials("gpt-5", (18, 20), (6, 20)), specs)
    assert found.status is ContaminationStatus.TRIPPED
    z, p = two_proportion_ztest(18, 20, 6, 20, "larger")
    assert (found.z, found.p) == (z, p) and p < 0.05
    assert (found.pre.passed, found.pre.graded, found.post.passed, found.post.graded) == (
        18,
        20,
        6,
        20,
    )
    assert found.pre.low < 0.9 < found.pre.high


def test_a_balanced_model_does_not_trip(specs: SpecSet) -> None:
    (found,) = contamination(_trials("gpt-5", (10, 20), (10, 20)), specs)
    assert found.status is ContaminationStatus.CLEAR and found.p == 0.5


def test_a_post_cutoff_advantage_does_not_trip(specs: SpecSet) -> None:
    (found,) = contamination(_trials("gpt-5", (4, 20), (16, 20)), specs)
    assert found.status is ContaminationStatus.CLEAR


def test_a_small_bucket_is_insufficient_data_not_clean(specs: SpecSet) -> None:
    (found,) = contamination(_trials("gpt-5", (9, 9), (0, 30)), specs)
    assert found.status is ContaminationStatus.INSUFFICIENT_DATA
    assert found.p is None and not found.tripped
    assert found.summary().startswith("insufficient data (pre-cutoff 100% of 9")


def test_errors_are_not_counted_and_unknown_models_have_no_cutoff(specs: SpecSet) -> None:
    trials = [*_trials("gpt-5", (10, 20), (10, 20)), facts(99, "gpt-5", outcome="error")]
    trials += [facts(100 + n, "some-model") for n in range(3)]
    gpt, unknown = sorted(contamination(trials, specs), key=lambda c: c.model)
    assert gpt.pre.graded == 20
    assert unknown.status is ContaminationStatus.NO_CUTOFF


def test_the_cutoff_day_itself_is_pre_cutoff(specs: SpecSet) -> None:
    cutoff = specs.models["gpt-5"].training_cutoff
    (found,) = contamination([facts(1, "gpt-5", created=cutoff)], specs)
    assert (found.pre.graded, found.post.graded) == (1, 0)


def test_an_unknown_creation_date_is_in_no_bucket_and_is_counted(specs: SpecSet) -> None:
    trials = _trials("gpt-5", (10, 20), (10, 20))
    trials += [facts(200 + n, "gpt-5", created=None) for n in range(3)]
    (found,) = contamination(trials, specs)
    assert (found.pre.graded, found.post.graded, found.unknown_date) == (20, 20, 3)
    assert found.to_dict()["unknown_date"] == 3
    assert "3 left out, creation date unknown" in found.summary()
