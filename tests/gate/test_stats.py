"""migration_evals.gate.stats against published worked examples and independent references."""

from __future__ import annotations

from typing import Any

import pytest

from migration_evals.gate.stats import (
    UndefinedStatistic,
    _normal_cdf,
    _quantile,
    cohens_kappa,
    matthews_corrcoef,
    mcnemar_exact,
    two_proportion_ztest,
    wilson_interval,
)
from tests.conftest import SCIPY_STATS_GROUP

pytestmark = pytest.mark.xdist_group(SCIPY_STATS_GROUP)


def chi2_contingency(table: list[list[int]], correction: bool) -> Any:
    """scipy's chi-square test of independence, imported here (see ``SCIPY_STATS_GROUP``)."""
    from scipy.stats import chi2_contingency as reference  # imported here: see SCIPY_STATS_GROUP

    return reference(table, correction=correction)


def test_wilson_matches_newcombe_1998() -> None:
    # Newcombe RG (1998), "Two-sided confidence intervals for the single proportion:
    # comparison of seven methods", Stat Med 17:857-872, Table I: 81/263, Wilson score
    # interval 0.2553 to 0.3662.
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert 0.2 < high < 0.35
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_kappa_matches_the_textbook_two_by_two() -> None:
    # The worked example in Wikipedia's "Cohen's kappa" article: 50 items, 20 yes/yes,
    # 5 yes/no, 10 no/yes, 15 no/no -> p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohens_kappa(a, b) == pytest.approx(0.4)


def test_kappa_perfect_and_degenerate() -> None:
    assert cohens_kappa(["p", "f", "p"], ["p", "f", "p"]) == pytest.approx(1.0)
    with pytest.raises(UndefinedStatistic):
        cohens_kappa(["p", "p"], ["p", "p"])
    with pytest.raises(ValueError, match="differ in length"):
        cohens_kappa(["p"], ["p", "f"])
    with pytest.raises(ValueError, match="no labels"):
        cohens_kappa([], [])


def test_ztest_agrees_with_the_chi_square_test() -> None:
    # With pooled SE, z squared equals Pearson's chi-square without continuity correction.
    z, p = two_proportion_ztest(73, 86, 43, 64)
    chi2, chi_p, _, _ = chi2_contingency([[73, 13], [43, 21]], correction=False)
    assert z * z == pytest.approx(chi2)
    assert p == pytest.approx(chi_p)
    assert z == pytest.approx(2.5603, abs=1e-4)


def test_ztest_one_sided() -> None:
    _, larger = two_proportion_ztest(73, 86, 43, 64, alternative="larger")
    _, smaller = two_proportion_ztest(73, 86, 43, 64, alternative="smaller")
    _, both = two_proportion_ztest(73, 86, 43, 64)
    assert larger == pytest.approx(both / 2)
    assert larger + smaller == pytest.approx(1.0)


def test_ztest_degenerate() -> None:
    assert two_proportion_ztest(0, 10, 0, 20) == (0.0, 1.0)
    with pytest.raises(ValueError, match="at least one trial"):
        two_proportion_ztest(0, 0, 1, 2)


def test_phi_hand_computed_and_against_chi_square() -> None:
    # TP=6, TN=3, FP=1, FN=2: (6*3 - 1*2) / sqrt(7*8*4*5) = 16 / sqrt(1120).
    a = [True] * 6 + [False] * 3 + [False] + [True] * 2
    b = [True] * 6 + [False] * 3 + [True] + [False] * 2
    phi = matthews_corrcoef(a, b)
    assert phi == pytest.approx(16 / 1120**0.5)
    chi2 = chi2_contingency([[6, 2], [1, 3]], correction=False)[0]
    assert phi == pytest.approx((chi2 / len(a)) ** 0.5)


def test_phi_one_class_is_undefined() -> None:
    with pytest.raises(UndefinedStatistic):
        matthews_corrcoef([True, True], [True, False])


def test_mcnemar_exact_is_the_binomial_test_of_the_discordant_pairs() -> None:
    # 3 of 13 discordant pairs: 2 * P(X <= 3) for X ~ Bin(13, 1/2) = 2 * 378 / 8192.
    assert mcnemar_exact(3, 10) == pytest.approx(756 / 8192, abs=1e-12)
    assert mcnemar_exact(10, 3) == mcnemar_exact(3, 10)  # two-sided: symmetric
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pair: no evidence of a difference
    with pytest.raises(ValueError, match="negative"):
        mcnemar_exact(-1, 2)


@pytest.mark.parametrize("z", [-30.0, -12.5, -8.0, -3.3, -1.96, -0.5, 0.0, 0.7, 2.4, 6.0])
def test_the_ztests_normal_agrees_with_scipys_to_twelve_digits_far_into_the_tail(z: float) -> None:
    from scipy.special import ndtr  # imported here: see SCIPY_STATS_GROUP

    assert _normal_cdf(z) == pytest.approx(float(ndtr(z)), rel=1e-12, abs=0.0)


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999999])
def test_the_intervals_quantile_is_scipys(confidence: float) -> None:
    from scipy.special import ndtri  # imported here: see SCIPY_STATS_GROUP

    probability = 1 - (1 - confidence) / 2
    assert _quantile(probability) == pytest.approx(float(ndtri(probability)), rel=1e-14)
