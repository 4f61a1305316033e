"""Statistics for the gate and the reports: a small public API on the standard library's
normal distribution and scipy's exact binomial test.

Degenerate inputs never turn into a silent NaN: empty or mismatched inputs raise
``ValueError``; a statistic that is mathematically undefined for the data (kappa when
both raters use one and the same category, phi when a margin is empty) raises
``UndefinedStatistic``, which callers report as "insufficient data".
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from statistics import NormalDist
from typing import Literal

__all__ = [
    "UndefinedStatistic",
    "cohens_kappa",
    "matthews_corrcoef",
    "mcnemar_exact",
    "newcombe_interval",
    "two_proportion_ztest",
    "wilson_interval",
]

Alternative = Literal["two-sided", "larger", "smaller"]


# The standard normal from the standard library: the gate's checks need only its CDF and
# quantile, and loading scipy.special for them cost each `gate check` a seventh of a second.
_STANDARD_NORMAL = NormalDist()


def _normal_cdf(x: float) -> float:
    """The standard normal CDF through erfc, as scipy's ``ndtr`` computes it: exact in the
    far tail too, where ``1 + erf`` would cancel to zero."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


class UndefinedStatistic(ValueError):
    """The statistic has no value for these data (a zero denominator)."""


def _check_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> None:
    if len(a) != len(b):
        raise ValueError(f"the two label lists differ in length ({len(a)} and {len(b)})")
    if not a:
        raise ValueError("no labels to compare")


def two_proportion_ztest(
    x1: int, n1: int, x2: int, n2: int, alternative: Alternative = "two-sided"
) -> tuple[float, float]:
    """z and p for H0 p1 == p2 with the pooled standard error.

    ``alternative="larger"`` tests p1 > p2, ``"smaller"`` p1 < p2. When the pooled
    proportion is 0 or 1 the two samples are identical, so the result is (0.0, 1.0).
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError(f"both samples need at least one trial (n1={n1}, n2={n2})")
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError(f"successes must lie in [0, n] (x1={x1}/{n1}, x2={x2}/{n2})")
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0, 1.0
    z = (x1 / n1 - x2 / n2) / se
    if alternative == "two-sided":
        p = 2 * _normal_cdf(-abs(z))
    elif alternative == "larger":
        p = _normal_cdf(-z)
    elif alternative == "smaller":
        p = _normal_cdf(z)
    else:
        raise ValueError(f"alternative must be two-sided, larger or smaller, not {alternative!r}")
    return z, min(p, 1.0)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact test for paired binary outcomes: the two-sided p-value of the
    discordant pairs (``only_a``: pairs where only the first passed; ``only_b``: only the
    second) under H0 that either is equally likely, i.e. a binomial test of ``only_a`` in
    ``only_a + only_b`` at 1/2 (``scipy.stats.binomtest``). Pairs that agree carry no
    information about the difference. With no discordant pair there is no evidence of a
    difference: p is 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"counts of discordant pairs cannot be negative ({only_a}, {only_b})")
    if only_a + only_b == 0:
        return 1.0
    from scipy.stats import binomtest  # noqa: PLC0415 - deferred like the normal's, see above

    return min(1.0, float(binomtest(only_a, only_a + only_b, 0.5).pvalue))


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels over the same items."""
    _check_pairs(a, b)
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    left, right = Counter(a), Counter(b)
    expected = sum(left[label] * right[label] for label in left) / (n * n)
    if expected == 1:
        raise UndefinedStatistic("kappa is undefined: both raters used one and the same label")
    return (observed - expected) / (1 - expected)


def matthews_corrcoef(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Matthews correlation (phi) of two binary label lists."""
    _check_pairs(a, b)
    tp = sum(bool(x) and bool(y) for x, y in zip(a, b, strict=True))
    tn = sum(not x and not y for x, y in zip(a, b, strict=True))
    fp = sum(not x and bool(y) for x, y in zip(a, b, strict=True))
    fn = sum(bool(x) and not y for x, y in zip(a, b, strict=True))
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    if denominator == 0:
        raise UndefinedStatistic("phi is undefined: one list (or both) has only one class")
    return (tp * tn - fp * fn) / denominator


def wilson_interval(x: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0.0, 1.0) when n is 0."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), not {confidence}")
    if n == 0:
        return 0.0, 1.0
    if not 0 <= x <= n:
        raise ValueError(f"successes must lie in [0, n] (x={x}, n={n})")
    z = _quantile(1 - (1 - confidence) / 2)
    phat = x / n
    denominator = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denominator
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denominator
    # At x = 0 (x = n) the bound is exactly 0 (1): centre and half are then equal, but
    # computed apart they may differ in their last bit.
    low = 0.0 if x == 0 else max(0.0, centre - half)
    high = 1.0 if x == n else min(1.0, centre + half)
    return low, high


def newcombe_interval(
    x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 - p2 (his method 10), from the two Wilson
    intervals; no continuity correction. Both samples need at least one trial."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError(f"both samples need at least one trial (n1={n1}, n2={n2})")
    low1, high1 = wilson_interval(x1, n1, confidence)
    low2, high2 = wilson_interval(x2, n2, confidence)
    p1, p2 = x1 / n1, x2 / n2
    difference = p1 - p2
    below = math.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2)
    above = math.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2)
    return max(-1.0, difference - below), min(1.0, difference + above)


@functools.lru_cache(maxsize=16)
def _quantile(probability: float) -> float:
    """The standard normal quantile; the same few confidences are asked for again and again."""
    return _STANDARD_NORMAL.inv_cdf(probability)
