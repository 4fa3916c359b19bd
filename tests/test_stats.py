"""evalkit.stats against published worked examples, hand-computed cases and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.stats import (
    alpha_from_long,
    binomial_test,
    cohen_kappa,
    cohens_h,
    correlation,
    d_prime,
    expected_calibration_error,
    fleiss_kappa,
    krippendorff_alpha,
    mann_whitney_u,
    mean_ci,
    median_ci,
    paired_wilcoxon,
    sample_size_one_proportion,
    sample_size_paired,
    sample_size_two_proportions,
    wilcoxon_signed_rank,
    wilson_interval,
    win_rate,
    zscores_by_evaluator,
)

# ----------------------------------------------------------------------------- Fleiss' kappa

# Fleiss (1971)-style worked example from Wikipedia, "Fleiss' kappa": 10 subjects, 14 raters, 5 categories.
WIKI_FLEISS = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
               [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_wikipedia_example() -> None:
    assert fleiss_kappa(WIKI_FLEISS) == pytest.approx(0.20993, abs=5e-6)  # published: 0.210


def test_fleiss_kappa_hand_computed() -> None:
    # 3 subjects, 2 raters, categories x/y: (2,0), (0,2), (1,1)
    # P_i = 1, 1, 0 -> P_bar = 2/3; p = (3/6, 3/6) -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1]]) == pytest.approx(1 / 3)


def test_fleiss_kappa_uses_marginals_not_uniform_chance() -> None:
    # Skewed marginals: uniform chance (1/k) would give a different value.
    table = [[3, 0], [3, 0], [2, 1], [3, 0]]
    n, k = 3, 2
    p_i = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in table]
    p_bar = sum(p_i) / len(p_i)
    p_j = [sum(row[j] for row in table) / (n * len(table)) for j in range(k)]
    expected = (p_bar - sum(p * p for p in p_j)) / (1 - sum(p * p for p in p_j))
    assert fleiss_kappa(table) == pytest.approx(expected)
    assert fleiss_kappa(table) != pytest.approx((p_bar - 1 / k) / (1 - 1 / k))


def test_fleiss_kappa_edges() -> None:
    assert fleiss_kappa([[3, 0, 0], [0, 3, 0], [0, 0, 3]]) == pytest.approx(1.0)  # perfect agreement
    assert math.isnan(fleiss_kappa([[4, 0], [4, 0]]))  # a single category everywhere: 0/0
    assert math.isnan(fleiss_kappa([[1, 0], [0, 1]]))  # no subject with two ratings
    assert math.isnan(fleiss_kappa(np.zeros((0, 3))))
    # subjects with one rating are skipped, not counted as disagreement
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1], [1, 0]]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(ValueError):
        fleiss_kappa([[1, -1]])


# ----------------------------------------------------------------------------- Cohen's kappa


def test_cohen_kappa_wikipedia_example() -> None:
    # Wikipedia, "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_hand_computed_and_edges() -> None:
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["x"] * 5, ["x"] * 5))
    assert math.isnan(cohen_kappa([], []))
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])


# ----------------------------------------------------------------------------- Krippendorff's alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x 12 units example.
K2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
         [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                                  ("ratio", 0.797)])
def test_krippendorff_alpha_published_example(level: str, published: float) -> None:
    assert krippendorff_alpha(K2011, level) == pytest.approx(published, abs=5e-4)


def test_krippendorff_alpha_text_labels_nan_and_edges() -> None:
    text = [["a", "b", "b", None], ["a", "b", "c", "c"]]
    coded = [[0, 1, 1, None], [0, 1, 2, 2]]
    assert krippendorff_alpha(text) == pytest.approx(krippendorff_alpha(coded))
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], "ordinal") == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, 3]]))  # no variation: undefined
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]]))  # nothing pairable
    assert krippendorff_alpha([[1.0, float("nan"), 2], [1, 2, 2]]) == krippendorff_alpha([[1, None, 2], [1, 2, 2]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(K2011, "cardinal")
    with pytest.raises(ValueError, match="needs numbers"):
        krippendorff_alpha(text, "ordinal")
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2], [1]])



def _long(table: list[list]) -> tuple[list, list, list]:
    """A raters x units table as long columns (item, rater, value), missing cells included as None."""
    rows = [(f"u{u}", f"r{r}", v) for r, row in enumerate(table) for u, v in enumerate(row)]
    return tuple(list(c) for c in zip(*rows, strict=True))  # type: ignore[return-value]


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                                  ("ratio", 0.797)])
def test_alpha_from_long_published_example(level: str, published: float) -> None:
    item, rater, value = _long(K2011)
    assert alpha_from_long(item, rater, value, level) == pytest.approx(published, abs=5e-4)
    assert alpha_from_long(item, rater, value, level) == pytest.approx(krippendorff_alpha(K2011, level), rel=1e-12)
    # rows in any order, the missing cells left out instead of marked: the same alpha
    order = np.random.default_rng(0).permutation(len(item))
    kept = [k for k in order if value[k] is not None]
    shuffled = alpha_from_long(np.array(item)[kept], np.array(rater)[kept], np.array(value, dtype=float)[kept], level)
    assert shuffled == pytest.approx(published, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_from_long_equals_the_krippendorff_package_on_sparse_ratings(level: str) -> None:
    rng = np.random.default_rng(7)
    table = rng.integers(0, 5, size=(12, 60)).astype(float)  # 0..4: the ratio metric meets 0 + 0
    table[rng.random(table.shape) < 0.7] = np.nan  # most items judged by a few raters, some by one or none
    item, rater, value = _long(table.tolist())
    assert alpha_from_long(item, rater, value, level) == pytest.approx(krippendorff_alpha(table, level), rel=1e-10)


def test_alpha_from_long_edges() -> None:
    # text labels, nominal: as krippendorff_alpha codes them
    text = [["a", "b", "b", None], ["a", "b", "c", "c"]]
    assert alpha_from_long(*_long(text)) == pytest.approx(krippendorff_alpha(text))
    with pytest.raises(ValueError, match="needs numbers"):
        alpha_from_long(*_long(text), level="ordinal")
    # only one item with two judgments: NaN, though its two values differ
    assert math.isnan(alpha_from_long(["x", "x", "y", "z"], [1, 2, 1, 2], [1, 2, 3, 4], "interval"))
    # two pairable items: defined; the singly judged item z does not change it
    two = alpha_from_long(["x", "x", "y", "y"], [1, 2, 1, 2], [1, 2, 3, 3], "interval")
    assert two == pytest.approx(krippendorff_alpha([[1, 3], [2, 3]], "interval"))
    assert alpha_from_long(["x", "x", "y", "y", "z"], [1, 2, 1, 2, 1], [1, 2, 3, 3, 9], "interval") == two
    assert math.isnan(alpha_from_long(["x", "x", "y", "y"], [1, 2, 1, 2], [3, 3, 3, 3]))  # no variation
    assert math.isnan(alpha_from_long([], [], []))
    assert math.isnan(alpha_from_long(["x", "x"], [1, 2], [None, float("nan")]))
    with pytest.raises(ValueError, match="more than once"):
        alpha_from_long(["x", "x", "y", "y"], ["r1", "r1", "r1", "r2"], [1, 2, 3, 3])
    with pytest.raises(ValueError, match="same length"):
        alpha_from_long(["x", "x"], [1, 2], [1])
    with pytest.raises(ValueError, match="level"):
        alpha_from_long(["x"], [1], [1], "cardinal")
    with pytest.raises(ValueError, match="missing labels"):
        alpha_from_long(["x", None], [1, 2], [1, 2])


# ----------------------------------------------------------------------------- proportions


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (score, no continuity correction)
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_newcombe(k: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_hand_formula_and_edges() -> None:
    k, n, z = 7, 10, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half))
    low, high = wilson_interval(10, 10)
    assert high == pytest.approx(1.0) and 0.69 < low < 0.73
    assert wilson_interval(0, 10)[0] == 0.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert wilson_interval(5, 10, 0.99)[0] < wilson_interval(5, 10, 0.95)[0]
    for bad in ((11, 10), (-1, 10), (1.5, 3)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, confidence=1.5)


def test_binomial_test_matches_the_exact_rule() -> None:
    # Hand-rolled exact rule: sum of probabilities of outcomes no more likely than the observed one.
    from math import comb

    def exact(k, n, p):
        probs = [comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(n + 1)]
        return min(1.0, sum(q for q in probs if q <= probs[k] * (1 + 1e-7)))

    for k, n, p in [(7, 10, 0.5), (2, 20, 1 / 3), (13, 20, 1 / 3), (0, 12, 0.5), (12, 12, 0.5), (5, 30, 0.2)]:
        assert binomial_test(k, n, p) == pytest.approx(exact(k, n, p), rel=1e-9)
    # R: binom.test(682, 925, p = 0.75) -> p-value = 0.3825 (the documentation's example)
    assert binomial_test(682, 925, 0.75) == pytest.approx(0.3825, abs=1e-4)
    assert binomial_test(0, 0) == 1.0
    with pytest.raises(ValueError):
        binomial_test(3, 2)


def test_win_rate_bundles_rate_interval_and_test() -> None:
    r = win_rate(18, 25)
    assert (r.rate, r.successes, r.n, r.p0) == (0.72, 18, 25, 0.5)
    assert (r.low, r.high) == wilson_interval(18, 25)
    assert r.p_value == binomial_test(18, 25, 0.5)
    third = win_rate(5, 30, p0=1 / 3)
    assert third.p_value == binomial_test(5, 30, 1 / 3)
    empty = win_rate(0, 0)
    assert math.isnan(empty.rate) and empty.p_value == 1.0


def test_cohens_h_and_sample_size() -> None:
    assert cohens_h(0.65, 0.45) == pytest.approx(2 * math.asin(math.sqrt(0.65)) - 2 * math.asin(math.sqrt(0.45)))
    assert cohens_h(0.5, 0.5) == 0.0 and cohens_h(0.45, 0.65) == -cohens_h(0.65, 0.45)
    # R pwr: pwr.2p.test(h = 0.3, power = 0.8) -> n = 174.4195 per group
    h03 = (0.5, math.sin((2 * math.asin(math.sqrt(0.5)) - 0.3) / 2) ** 2)
    assert cohens_h(*h03) == pytest.approx(0.3)
    assert sample_size_two_proportions(*h03) == 175
    # h = 0.2 (Cohen's 'small'): 2 * (2.8016 / 0.2)^2 = 392.4 -> 393 per group (Cohen's 1988 table prints 392)
    h02 = (0.5, math.sin((2 * math.asin(math.sqrt(0.5)) - 0.2) / 2) ** 2)
    assert sample_size_two_proportions(*h02) == 393
    assert sample_size_two_proportions(0.65, 0.45) == 96
    assert sample_size_two_proportions(0.65, 0.45, power=0.9) > 96
    with pytest.raises(ValueError, match="zero effect"):
        sample_size_two_proportions(0.4, 0.4)


def test_one_proportion_sample_size_matches_pwr_and_the_exact_binomial_power() -> None:
    """A win rate against 50 % (or a share against chance) is one sample against a fixed value: R's pwr gives
    pwr.p.test(h = 0.3, power = 0.8) -> n = 87.21; the two-sample formula (n per condition) would ask twice as
    many. At that n the exact binomial test has about the power asked (0.7-0.8: the arcsine approximation and the
    binomial's steps), where twice as many judgments give far more than asked."""
    from scipy.stats import binom, binomtest

    h03 = (0.5, math.sin((2 * math.asin(math.sqrt(0.5)) + 0.3) / 2) ** 2)
    assert sample_size_one_proportion(*h03) == 88
    for p in (0.6, 0.65, 0.75):
        n = sample_size_one_proportion(p, 0.5)
        assert abs(2 * n - sample_size_two_proportions(p, 0.5)) <= 2  # half the n per condition, up to rounding

        def exact_power(n: int, p: float = p) -> float:
            k = np.arange(n + 1)
            rejected = np.array([binomtest(int(x), n, 0.5).pvalue < 0.05 for x in k])
            return float(binom.pmf(k, n, p)[rejected].sum())

        assert 0.7 < exact_power(n) < 0.85
        assert exact_power(2 * n) > 0.93
    with pytest.raises(ValueError, match="zero effect"):
        sample_size_one_proportion(0.5, 0.5)
    with pytest.raises(ValueError):
        cohens_h(1.2, 0.5)


# ----------------------------------------------------------------------------- means and rank tests


def test_mean_ci_student_sleep_data() -> None:
    # R: t.test(sleep$extra[sleep$group == 1]) -> mean 0.75, 95 % CI -0.5297804 2.0297804
    group1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    m = mean_ci(group1)
    assert m.mean == pytest.approx(0.75) and m.n == 10
    assert (m.low, m.high) == pytest.approx((-0.5297804, 2.0297804), abs=1e-7)
    assert m.sd == pytest.approx(1.789010, abs=1e-6)


def test_mean_ci_edges() -> None:
    one = mean_ci([4])
    assert one.mean == 4 and one.n == 1 and math.isnan(one.low) and math.isnan(one.sd)
    none = mean_ci([])
    assert none.n == 0 and math.isnan(none.mean)
    same = mean_ci([3, 3, 3])
    assert (same.mean, same.low, same.high, same.sd) == (3, 3, 3, 0)
    assert mean_ci([1, None, 3, float("nan")]).n == 2


def test_wilcoxon_signed_rank_r_example() -> None:
    # R: wilcox.test(x, y, paired = TRUE) (Hollander & Wolfe depression data): V = 40, exact p = 0.03906
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    assert wilcoxon_signed_rank(x, y) == pytest.approx(0.0390625)
    assert math.isnan(wilcoxon_signed_rank([1, 2], [1, 2]))
    with pytest.raises(ValueError):
        wilcoxon_signed_rank([1, 2], [1])


def test_mann_whitney_u_r_example() -> None:
    # R: wilcox.test(x, y, alternative = "g") -> W = 35, p = 0.1272; two-sided doubles it (exact)
    x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
    y = [1.15, 0.88, 0.90, 0.74, 1.21]
    assert mann_whitney_u(x, y) == pytest.approx(2 * 0.1272061, abs=1e-6)
    assert math.isnan(mann_whitney_u([], [1]))



def test_median_ci_order_statistics() -> None:
    # n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024 for B ~ Binomial(10, 1/2), so the 95 % interval
    # runs from the 2nd to the 9th smallest value (Conover 1999, table A3); coverage 1 - 2 * 11/1024 = 0.979
    values = [7.1, 3.2, 9.9, 1.5, 4.4, 8.0, 2.6, 6.3, 5.7, 0.4]
    m = median_ci(values)
    ordered = sorted(values)
    assert (m.median, m.low, m.high, m.n) == (pytest.approx((4.4 + 5.7) / 2), ordered[1], ordered[8], 10)
    # at 80 %: P(B <= 2) = 56/1024 <= 0.1 < P(B <= 3) = 176/1024: the 3rd to the 8th
    assert (median_ci(values, 0.8).low, median_ci(values, 0.8).high) == (ordered[2], ordered[7])


def test_median_ci_edges() -> None:
    assert median_ci([]).n == 0 and math.isnan(median_ci([]).median)
    five = median_ci([1, 2, 3, 4, 5])  # [min, max] covers 1 - 2/32 = 0.9375 < 0.95: no 95 % interval
    assert five.median == 3 and math.isnan(five.low) and math.isnan(five.high)
    six = median_ci([1, 2, 3, 4, 5, 6])  # 1 - 2/64 = 0.969
    assert (six.low, six.high) == (1, 6)
    assert median_ci([3, None, float("nan"), 1, 2]).n == 3
    with pytest.raises(ValueError, match="confidence"):
        median_ci([1, 2], confidence=95)


# ----------------------------------------------------------------------------- z-scores per evaluator


def test_zscores_by_evaluator_equal_a_loop_over_evaluators() -> None:
    rng = np.random.default_rng(4)
    evaluator = rng.choice(["ann", "bob", "cy", "dee"], size=200)
    scores = rng.integers(0, 101, size=200).astype(float) + np.where(evaluator == "bob", 30, 0)
    scores[rng.random(200) < 0.1] = np.nan
    got = zscores_by_evaluator(scores, evaluator)
    for e in np.unique(evaluator):
        mine = (evaluator == e) & ~np.isnan(scores)
        mean, sd = scores[mine].mean(), scores[mine].std(ddof=1)
        np.testing.assert_allclose(got[mine], (scores[mine] - mean) / sd, rtol=1e-12)
        assert got[mine].mean() == pytest.approx(0, abs=1e-12) and got[mine].std(ddof=1) == pytest.approx(1)
    assert np.isnan(got[np.isnan(scores)]).all()


def test_zscores_by_evaluator_hand_example_and_edges() -> None:
    # evaluator a: 1, 2, 3 -> mean 2, sd 1; b: a single score; c: constant 0.1s (whose float mean is not 0.1)
    z = zscores_by_evaluator([1, 2, 3, 50, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
                             ["a", "a", "a", "b"] + ["c"] * 10)
    assert list(z[:3]) == [-1.0, 0.0, 1.0]
    assert (z[3:] == 0).all()  # no spread: 0 by choice, exactly (not a rounding error blown up)
    assert list(zscores_by_evaluator(np.array([4.0, 6.0]), np.array([7, 7]))) == pytest.approx(
        [-1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert zscores_by_evaluator([], []).shape == (0,)
    with pytest.raises(ValueError, match="same length"):
        zscores_by_evaluator([1, 2], ["a"])
    with pytest.raises(ValueError, match="missing labels"):
        zscores_by_evaluator([1, 2], ["a", None])
    with pytest.raises(ValueError, match="finite"):
        zscores_by_evaluator([1, math.inf], ["a", "a"])


# ----------------------------------------------------------------------------- paired Wilcoxon with effect sizes

# Hollander & Wolfe depression data (R's wilcox.test example): V = 40, exact p = 0.03906
HW_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def _walsh_brute(d: np.ndarray) -> float:
    i, j = np.triu_indices(len(d))
    return float(np.median((d[i] + d[j]) / 2))


def test_paired_wilcoxon_r_example() -> None:
    r = paired_wilcoxon(HW_X, HW_Y)
    assert r.statistic == 40 and r.p_value == pytest.approx(0.0390625) and (r.n, r.n_nonzero) == (9, 9)
    assert r.p_value == wilcoxon_signed_rank(HW_X, HW_Y)
    # differences sorted: -0.147 -0.08 0.01 0.43 0.49 0.59 0.62 0.952 1.022
    assert r.median_difference == pytest.approx(0.49)
    assert r.hodges_lehmann == pytest.approx(_walsh_brute(np.subtract(HW_X, HW_Y)))
    assert r.hodges_lehmann == pytest.approx(0.46)  # the 23rd of the 45 Walsh averages
    flipped = paired_wilcoxon(HW_Y, HW_X)
    assert flipped.statistic == 9 * 10 / 2 - 40 and flipped.hodges_lehmann == pytest.approx(-0.46)


def test_paired_wilcoxon_zeros_nans_and_edges() -> None:
    r = paired_wilcoxon([3, 4, 5, 2, 4], [3, 2, 5, 1, 1])  # differences 0 2 0 1 3: zeros dropped from the test
    assert (r.n, r.n_nonzero, r.statistic) == (5, 3, 6)
    assert r.median_difference == 1
    # Walsh averages of 0 2 0 1 3 (15 of them), sorted: 0 0 0 0.5 0.5 1 1 1 1.5 1.5 1.5 2 2 2.5 3 -> median 1
    assert r.hodges_lehmann == 1
    same = paired_wilcoxon([1, 2, 3], [1, 2, 3])
    assert math.isnan(same.p_value) and (same.statistic, same.hodges_lehmann, same.n, same.n_nonzero) == (0, 0, 3, 0)
    dropped = paired_wilcoxon([1, float("nan"), 3, 4], [0, 1, float("nan"), 2])
    assert dropped.n == 2 and dropped.statistic == 3
    empty = paired_wilcoxon([], [])
    assert empty.n == 0 and math.isnan(empty.p_value) and math.isnan(empty.hodges_lehmann)
    with pytest.raises(ValueError, match="paired"):
        paired_wilcoxon([1, 2], [1])


def test_paired_wilcoxon_small_tied_samples_match_scipys_permutation_test() -> None:
    """n <= 13 with ties or zeros: scipy's "auto" runs an exhaustive permutation test (seconds per call); the
    convolution gives the same p-values."""
    from scipy import stats as sst

    rng = np.random.default_rng(3)
    cases = [np.array([2.0, 2, 2]), np.array([0, 2, 0, 1, 3.0]), np.array([1, -1, 2, 2, -2, 3, 0.5, 0.5])]
    cases += [rng.integers(-3, 4, size=n).astype(float) for n in (4, 7, 10, 13) for _ in range(3)]
    for d in cases:
        if not np.any(d != 0):
            continue
        expected = sst.wilcoxon(d, method=sst.PermutationMethod()).pvalue
        assert paired_wilcoxon(d, np.zeros(len(d))).p_value == pytest.approx(expected, rel=1e-9), d


def _signed_rank_brute_p(d: np.ndarray) -> float:
    """Two-sided p of W+ by listing all 2^m sign patterns of the m nonzero differences' midranks (zeros dropped)."""
    from scipy import stats as sst

    nonzero = d[d != 0]
    doubled = np.round(2 * sst.rankdata(np.abs(nonzero))).astype(np.int64)
    observed = int(doubled[nonzero > 0].sum())
    signs = (np.arange(2 ** len(doubled))[:, None] >> np.arange(len(doubled))[None, :]) & 1
    w = signs @ doubled
    return min(1.0, 2 * min(float(np.mean(w <= observed)), float(np.mean(w >= observed))))


def test_signed_rank_small_tied_samples_equal_the_brute_force_enumeration() -> None:
    """n <= 12 with ties and zeros (Likert differences): both functions give the p-value of the exact
    conditional distribution, computed here by listing every sign pattern."""
    rng = np.random.default_rng(12)
    cases = [np.array([1.0, 1, 1, 1, 1]), np.array([0, 0, 0, 1.0]), np.array([-1, 1, -2, 2, 0, 3, -3.0])]
    cases += [(rng.integers(1, 6, n) - rng.integers(1, 6, n)).astype(float) for n in (2, 3, 5, 8, 11, 12)
              for _ in range(4)]
    checked = 0
    for d in cases:
        if not np.any(d != 0):
            continue
        expected = _signed_rank_brute_p(d)
        assert paired_wilcoxon(d, np.zeros(len(d))).p_value == pytest.approx(expected, rel=1e-12), d
        assert wilcoxon_signed_rank(d, np.zeros(len(d))) == pytest.approx(expected, rel=1e-12), d
        checked += 1
    assert checked >= 20


def test_signed_rank_equals_scipy_where_scipy_is_quick() -> None:
    """Without ties (exact, n <= 50) and beyond that (n > 50, or n > 13 with ties: normal approximation with tie
    and continuity corrections, zeros dropped), the p-value is scipy's ``wilcoxon(method="auto",
    correction=True)``."""
    from scipy import stats as sst

    rng = np.random.default_rng(50)
    for n in (5, 13, 14, 20, 50, 51, 1000):
        for d in (rng.normal(size=n), (rng.integers(1, 6, n) - rng.integers(1, 6, n)).astype(float)):
            if n <= 13 and np.any(d == np.round(d)):
                continue  # tied: scipy's slow permutation path, checked against enumeration above
            expected = float(sst.wilcoxon(d, method="auto", correction=True).pvalue)
            assert wilcoxon_signed_rank(d, np.zeros(n)) == pytest.approx(expected, rel=1e-12), (n, d)
            assert paired_wilcoxon(d, np.zeros(n)).p_value == pytest.approx(expected, rel=1e-12), (n, d)


def test_signed_rank_normal_approximation_has_the_continuity_correction() -> None:
    """n = 30 pairs with tied differences (the normal approximation): the continuity correction of R's
    ``wilcox.test(x, y, paired = TRUE, correct = TRUE, exact = FALSE)``, the reference (R's default), moves p
    from 0.1711 (uncorrected, as scipy's default ``correction=False`` gave) to 0.1743."""
    from scipy import stats as sst

    # |d| = 1 twelve times (8 positive), 2 twelve times (6 positive), 3 five times (all positive), 4 once (negative)
    d = np.array([1.0] * 8 + [-1] * 4 + [2] * 6 + [-2] * 6 + [3] * 5 + [-4])
    n = len(d)
    # R's formula: V = 298 (midranks 6.5, 18.5, 27, 30), sigma² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 (tie correction),
    # z = (V − n(n+1)/4 − ½ sign) / sigma
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - (2 * (12**3 - 12) + 5**3 - 5) / 48)
    centred = 298 - n * (n + 1) / 4
    corrected = 2 * sst.norm.sf((abs(centred) - 0.5) / sigma)
    uncorrected = 2 * sst.norm.sf(abs(centred) / sigma)
    assert (round(uncorrected, 4), round(corrected, 4)) == (0.1711, 0.1743)
    assert corrected == pytest.approx(sst.wilcoxon(d, correction=True).pvalue, rel=1e-12)
    r = paired_wilcoxon(d, np.zeros(n))
    assert r.statistic == 298 and r.p_value == pytest.approx(corrected, rel=1e-12)
    assert r.p_value != pytest.approx(uncorrected, rel=1e-3)
    assert wilcoxon_signed_rank(d, np.zeros(n)) == pytest.approx(0.1743, abs=5e-5)
    # the correction shrinks |z| toward 0 on either side: the differences reversed give the same p
    assert paired_wilcoxon(-d, np.zeros(n)).p_value == pytest.approx(corrected, rel=1e-12)


def _differences(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "ratings":  # many ties
        return rng.integers(-4, 5, n).astype(float)
    if kind == "decimals":  # sums that round (0.1 + 0.2 != 0.3)
        return rng.choice([0.1, 0.2, 0.3, -0.1, 0.0], n)
    return rng.normal(size=n) * (1e-300 if kind == "tiny" else 1.0)


@pytest.mark.parametrize("kind", ["normal", "ratings", "decimals", "tiny"])
def test_hodges_lehmann_selection_equals_the_median_of_all_walsh_averages(kind: str) -> None:
    """The selection (no n^2 list) gives exactly the brute-force median, with ties, rounding and odd/even counts."""
    rng = np.random.default_rng(len(kind))
    for n in [1, 2, 3, 4, 7, 10, 33, 200, 1500]:
        d = _differences(kind, n, rng)
        got = paired_wilcoxon(d, np.zeros(n)).hodges_lehmann
        assert got == _walsh_brute(d), (kind, n)


# ----------------------------------------------------------------------------- bounded t intervals


def test_mean_ci_is_clipped_to_the_scale_and_says_so() -> None:
    """Issue #10: [3.58, 5.42] on a 1-5 scale. With bounds the interval stops at 5 and is flagged."""
    plain = mean_ci([4, 5, 5, 4])
    assert plain.high > 5  # the textbook t interval runs past the scale
    m = mean_ci([4, 5, 5, 4], bounds=(1, 5))
    assert (m.mean, m.low, m.sd, m.n) == pytest.approx((plain.mean, plain.low, plain.sd, 4))
    assert m.high == 5 and m.clipped
    inside = mean_ci([2, 3, 4, 3, 2, 4], bounds=(1, 5))  # an interval within the scale is the t interval
    assert (inside.low, inside.high) == (mean_ci([2, 3, 4, 3, 2, 4]).low, mean_ci([2, 3, 4, 3, 2, 4]).high)
    assert not inside.clipped
    low = mean_ci([1, 1, 2, 1], bounds=(1, 5))
    assert low.low == 1 and low.clipped
    assert not mean_ci([5], bounds=(1, 5)).clipped and mean_ci([], bounds=(1, 5)).n == 0


def test_mean_ci_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="bounds"):
        mean_ci([1, 2], bounds=(5, 1))
    with pytest.raises(ValueError, match="outside the bounds"):
        mean_ci([1, 7], bounds=(1, 5))


# ----------------------------------------------------------------------------- signal detection and calibration


def test_d_prime_against_normal_quantile_arithmetic() -> None:
    from scipy.stats import norm

    # H = 0.8, F = 0.2 without correction: d' = 2 z(0.8) = 2 * 0.8416 = 1.683, no bias (Macmillan & Creelman)
    plain = d_prime(40, 50, 10, 50, correction="none")
    assert plain.d_prime == pytest.approx(1.6832424, abs=1e-7) and plain.criterion == pytest.approx(0, abs=1e-12)
    assert (plain.hit_rate, plain.false_alarm_rate) == (0.8, 0.2)
    # log-linear (Hautus 1995): (40 + 0.5) / (50 + 1) and (10 + 0.5) / (50 + 1), applied although no rate is extreme
    r = d_prime(40, 50, 10, 50)
    h, f = 40.5 / 51, 10.5 / 51
    assert (r.hit_rate, r.false_alarm_rate) == pytest.approx((h, f))
    assert r.d_prime == pytest.approx(norm.ppf(h) - norm.ppf(f)) and r.d_prime < plain.d_prime
    # H = 0.9, F = 0.5: c = -(1.2816 + 0) / 2, a liberal observer (says "signal" readily)
    lib = d_prime(9, 10, 5, 10, correction="none")
    assert lib.criterion == pytest.approx(-0.6407758, abs=1e-7) and lib.d_prime == pytest.approx(1.2815516, abs=1e-7)


def test_d_prime_extreme_rates_and_edges() -> None:
    from scipy.stats import norm

    perfect = d_prime(20, 20, 0, 20)  # H = 20.5/21, F = 0.5/21: finite
    assert perfect.d_prime == pytest.approx(2 * norm.ppf(20.5 / 21)) and perfect.criterion == pytest.approx(0)
    assert math.isfinite(perfect.d_prime) and d_prime(20, 20, 0, 20, correction="none").d_prime == math.inf
    chance = d_prime(0, 10, 0, 30)  # never "signal": d' small but not 0, as the sample sizes differ
    assert chance.d_prime == pytest.approx(norm.ppf(0.5 / 11) - norm.ppf(0.5 / 31)) and chance.criterion > 0
    assert math.isnan(d_prime(0, 0, 3, 10).d_prime) and math.isnan(d_prime(3, 10, 0, 0).criterion)
    with pytest.raises(ValueError):
        d_prime(11, 10, 0, 10)
    with pytest.raises(ValueError, match="correction"):
        d_prime(1, 10, 0, 10, correction="1/2n")


def test_expected_calibration_error_hand_example() -> None:
    # three levels -> stated 0.5, 0.75, 1.0. Level 1: 2 of 4 right; level 2: 2 of 4; level 3: 1 of 2.
    # ECE = 0.4 * |0.5 - 0.5| + 0.4 * |0.5 - 0.75| + 0.2 * |0.5 - 1| = 0.2
    levels = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    right = [1, 0, 1, 0, True, False, False, True, 1, 0]
    cal = expected_calibration_error(levels, right, 3)
    assert cal.ece == pytest.approx(0.2) and cal.n == 10
    assert cal.accuracy == 0.5 and cal.mean_stated == pytest.approx(0.7)  # over-confident
    t = cal.table
    assert list(t["level"]) == [1, 2, 3] and list(t["stated"]) == [0.5, 0.75, 1.0]
    assert list(t["n"]) == [4, 4, 2] and list(t["accuracy"]) == [0.5, 0.5, 0.5]
    assert (t.loc[2, "low"], t.loc[2, "high"]) == wilson_interval(1, 2)
    # a calibrated evaluator: right half the time when guessing, always when sure
    assert expected_calibration_error([1, 1, 3, 3], [0, 1, 1, 1], 3).ece == 0


def test_expected_calibration_error_mapping_unused_levels_and_edges() -> None:
    cal = expected_calibration_error([1, 4, 4, float("nan")], [1, 1, 0, 1], 4)  # NaN pair dropped
    assert list(cal.table["stated"]) == pytest.approx([0.5, 2 / 3, 5 / 6, 1.0])
    assert list(cal.table["n"]) == [1, 0, 0, 2] and math.isnan(cal.table.loc[1, "accuracy"])
    assert cal.ece == pytest.approx(1 / 3 * 0.5 + 2 / 3 * 0.5) and cal.n == 3
    custom = expected_calibration_error([1, 2], [1, 1], 2, stated=[0.6, 0.9])
    assert custom.ece == pytest.approx(0.5 * 0.4 + 0.5 * 0.1)
    empty = expected_calibration_error([], [], 5)
    assert math.isnan(empty.ece) and empty.n == 0 and list(empty.table["n"]) == [0] * 5
    for levels, right, k in (([0, 1], [1, 1], 3), ([4], [1], 3), ([1.5], [1], 3), ([1], [2], 3), ([1], [1], 1)):
        with pytest.raises(ValueError):
            expected_calibration_error(levels, right, k)
    with pytest.raises(ValueError, match="paired"):
        expected_calibration_error([1, 2], [1], 3)
    with pytest.raises(ValueError, match="stated"):
        expected_calibration_error([1], [1], 3, stated=[0.5, 1.0])


def test_sample_size_paired_matches_g_power() -> None:
    # G*Power 3.1, t tests, means: difference from constant (one sample / matched pairs), two tails,
    # alpha .05, power .80: d = 0.5 -> 34, d = 0.3 -> 90, d = 0.8 -> 15
    assert [sample_size_paired(d) for d in (0.5, 0.3, 0.8, -0.5)] == [34, 90, 15, 34]
    with pytest.raises(ValueError, match="non-zero"):
        sample_size_paired(0.0)


# ----------------------------------------------------------------------------- correlation

# Hollander & Wolfe (1973) p. 187, R's cor.test example
HW_CX = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1]
HW_CY = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8]


def test_correlation_pearson_r_example() -> None:
    # R: cor.test(x, y) -> t = 1.8411, df = 7, p-value = 0.1082; 95 % CI -0.1497426 0.8955795; cor 0.5711816
    c = correlation(HW_CX, HW_CY)
    assert (c.r, c.low, c.high) == pytest.approx((0.5711816, -0.1497426, 0.8955795), abs=1e-7)
    assert c.p_value == pytest.approx(0.1082, abs=5e-5) and (c.n, c.method) == (9, "pearson")
    # the Fisher z interval by hand: tanh(atanh(r) -+ 1.96 / sqrt(n - 3))
    z = math.atanh(c.r)
    half = 1.959964 / math.sqrt(9 - 3)
    assert (c.low, c.high) == pytest.approx((math.tanh(z - half), math.tanh(z + half)), abs=1e-6)


def test_correlation_spearman_bonett_wright_example() -> None:
    # Bonett's statpsych, ci.spear(.05, y, x): Estimate 0.8699639, LL 0.5840951, UL 0.9638297
    y = [21, 4, 9, 12, 35, 18, 10, 22, 24, 1, 6, 8, 13, 16, 19]
    x = [67, 28, 30, 28, 52, 40, 25, 37, 44, 10, 14, 20, 28, 40, 51]
    c = correlation(x, y, "spearman")
    assert (c.r, c.low, c.high) == pytest.approx((0.8699639, 0.5840951, 0.9638297), abs=1e-7)
    assert correlation(HW_CX, HW_CY, "spearman").r == pytest.approx(0.6)  # R: rho 0.6


def test_correlation_spearman_exact_p_for_few_points_r_tuna_example() -> None:
    # R's ?cor.test tuna example (Hollander & Wolfe 1973, p. 187): cor.test(x, y, method = "spearman",
    # alternative = "greater") -> S = 48, p-value = 0.0484, rho 0.6 (exact). correlation's p is two-sided
    # (scipy's default alternative): twice that, R's cor.test(x, y, method = "spearman") -> p-value = 0.0968.
    # scipy's t approximation gives 0.0876.
    from scipy import stats as sst

    c = correlation(HW_CX, HW_CY, "spearman")
    assert c.r == pytest.approx(0.6) and c.p_value == pytest.approx(0.0968, abs=5e-5)
    assert c.p_value == pytest.approx(2 * 0.0484, abs=1e-4) and c.p_method == "exact permutation"
    assert sst.spearmanr(HW_CX, HW_CY).pvalue == pytest.approx(0.0876, abs=5e-5)  # what it was
    # n = 10 is still exact; n = 11 is scipy's t approximation
    rng = np.random.default_rng(8)
    x = rng.normal(size=11)
    y = x + rng.normal(size=11)
    assert correlation(x[:10], y[:10], "spearman").p_method == "exact permutation"
    eleven = correlation(x, y, "spearman")
    assert eleven.p_method == "t approximation" and eleven.p_value == sst.spearmanr(x, y).pvalue
    # the other methods name theirs; no p, no method
    assert correlation(HW_CX, HW_CY).p_method == "t"
    assert correlation(HW_CX, HW_CY, "kendall").p_method == "exact"
    assert correlation([1, 2, 2, 3, 4], [1, 3, 2, 5, 4], "kendall").p_method == "normal approximation"
    assert correlation([1, 2, 3, 4, 5], [2, 2, 2, 2, 2], "spearman").p_method == ""
    assert correlation([1, 2], [2, 1], "spearman").p_method == ""


def test_spearman_exact_p_equals_scipys_permutation_test() -> None:
    """The dynamic programme's distribution is the one scipy's exhaustive permutation test lists (n!
    pairings), with ties too (the midranks' conditional distribution)."""
    from scipy import stats as sst

    from evalkit.stats.correlations import _spearman_exact_p

    rng = np.random.default_rng(21)
    cases = [(np.arange(3.0), np.array([2.0, 0, 1])), (np.array([1.0, 2, 2, 3]), np.array([4.0, 1, 3, 2]))]
    cases += [(rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)) for n in (4, 5, 6, 7)
              for _ in range(3)]
    cases += [(rng.normal(size=n), rng.normal(size=n)) for n in (5, 7)]
    checked = 0
    for x, y in cases:
        if len(np.unique(x)) < 2 or len(np.unique(y)) < 2:
            continue
        expected = sst.permutation_test((x,), lambda v, y=y: sst.spearmanr(v, y).statistic,
                                        permutation_type="pairings", n_resamples=np.inf).pvalue
        assert _spearman_exact_p(x, y) == pytest.approx(expected, rel=1e-9), (x, y)
        assert correlation(x, y, "spearman").p_value == pytest.approx(expected, rel=1e-9)
        checked += 1
    assert checked >= 10


def test_correlation_kendall() -> None:
    # R: cor.test(x, y, method = "kendall") -> T = 26, p-value = 0.1194, tau 0.4444444 (exact)
    c = correlation(HW_CX, HW_CY, "kendall")
    assert c.r == pytest.approx(4 / 9) and c.p_value == pytest.approx(0.1194, abs=5e-5)
    half = 1.959963984540054 * math.sqrt(0.437 / (9 - 4))  # Fieller et al. (1957) variance
    assert (c.low, c.high) == pytest.approx((math.tanh(math.atanh(4 / 9) - half), math.tanh(math.atanh(4 / 9) + half)))
    wider = correlation(HW_CX, HW_CY, "kendall", confidence=0.99)
    assert wider.low < c.low and wider.high > c.high


def test_correlation_nans_small_samples_and_errors() -> None:
    nan = float("nan")
    with_gaps = correlation([*HW_CX, nan, 1.0], [*HW_CY, 3.0, nan])
    assert with_gaps == correlation(HW_CX, HW_CY)
    two = correlation([1, 2], [2, 1])
    assert two.n == 2 and math.isnan(two.r) and math.isnan(two.p_value)
    three = correlation([1, 2, 3], [1, 3, 2])
    assert three.r == pytest.approx(0.5) and math.isnan(three.low) and math.isnan(three.high)
    four = correlation([1, 2, 3, 4], [1, 3, 2, 4], "kendall")
    assert four.r == pytest.approx(2 / 3) and math.isnan(four.low)
    assert math.isfinite(correlation([1, 2, 3, 4], [1, 3, 2, 4], "spearman").low)
    flat = correlation([1, 2, 3, 4, 5], [2, 2, 2, 2, 2])
    assert math.isnan(flat.r) and math.isnan(flat.low) and math.isnan(flat.p_value)
    perfect = correlation([1, 2, 3, 4, 5], [2, 4, 6, 8, 10], "spearman")
    assert (perfect.r, perfect.low, perfect.high) == pytest.approx((1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="method"):
        correlation([1, 2, 3], [1, 2, 3], "cosine")
    with pytest.raises(ValueError, match="paired"):
        correlation([1, 2, 3], [1, 2])
