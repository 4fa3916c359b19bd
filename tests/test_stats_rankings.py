"""Tests of evalkit.stats.rankings: Bradley–Terry (with its bootstrap over evaluators), Plackett–Luce (with its
bootstrap) and best-of-n shares, against published examples, closed forms and brute force."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

from evalkit.stats import (
    best_of_n_shares,
    binomial_test,
    bootstrap_indexes,
    bradley_terry,
    bradley_terry_bootstrap,
    bradley_terry_matrix,
    plackett_luce,
    plackett_luce_bootstrap,
    wilson_interval,
)

# ----------------------------------------------------------------------------- Bradley–Terry


def citations_records() -> list[tuple[str, str, str]]:
    """Stigler (1994) journal citations, as in R's BradleyTerry2 vignette (being cited = a win)."""
    journals = ["Biometrika", "Comm Statist", "JASA", "JRSS-B"]
    cited_by = [[714, 730, 498, 221],  # row: journal cited; column: citing journal
                [33, 425, 68, 17],
                [320, 813, 1072, 142],
                [284, 276, 325, 188]]
    records = []
    for i, cited in enumerate(journals):
        for j, citing in enumerate(journals):
            if i != j:
                records += [(cited, citing, "a")] * cited_by[i][j]
    return records


def test_bradley_terry_matches_bradleyterry2_citations_example() -> None:
    # BradleyTerry2 vignette: coefficients relative to Biometrika: Comm Statist -2.9491, JASA -0.4796, JRSS-B 0.2690
    bt = bradley_terry(citations_records())
    rel = {k: v - bt["Biometrika"] for k, v in bt.items()}
    assert rel["Comm Statist"] == pytest.approx(-2.9491, abs=1e-4)
    assert rel["JASA"] == pytest.approx(-0.4796, abs=1e-4)
    assert rel["JRSS-B"] == pytest.approx(0.2690, abs=1e-4)
    assert sum(bt.values()) == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_two_items_closed_form_and_ties() -> None:
    records = [("A", "B", "a")] * 3 + [("A", "B", "b")]
    bt = bradley_terry(records)
    assert bt["A"] == pytest.approx(math.log(3) / 2) and bt["B"] == pytest.approx(-math.log(3) / 2)
    with_ties = [("A", "B", "a")] * 2 + [("B", "A", "tie")] * 2  # half: A 3 wins, B 1 win
    assert bradley_terry(with_ties, ties="half") == pytest.approx(bt)
    dropped = bradley_terry([("A", "B", "a"), ("B", "A", "a"), ("A", "B", "tie")] * 2, ties="drop")
    assert dropped == pytest.approx({"A": 0.0, "B": 0.0})
    with pytest.raises(ValueError):
        bradley_terry(records, ties="ignore")
    with pytest.raises(ValueError):
        bradley_terry([("A", "B", "win")])
    with pytest.raises(ValueError):
        bradley_terry([("A", "A", "a")])


def test_bradley_terry_item_that_never_wins() -> None:
    base = citations_records()
    loser = [("Loser", j, "b") for j in ("Biometrika", "JASA", "JRSS-B", "Comm Statist") for _ in range(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning flood
        bt = bradley_terry(base + loser)
    assert bt["Loser"] == -math.inf
    alone = bradley_terry(base)
    assert {k: v for k, v in bt.items() if k != "Loser"} == pytest.approx(alone)
    finite = [v for v in bt.values() if math.isfinite(v)]
    assert sum(finite) == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_ties_count_as_something() -> None:
    # An item that only ties is not a never-winner under "half"; under "drop" it has no comparisons left.
    records = [("A", "B", "a"), ("B", "A", "a"), ("C", "A", "tie"), ("C", "B", "tie")]
    half = bradley_terry(records, ties="half")
    assert all(math.isfinite(v) for v in half.values())
    dropped = bradley_terry(records, ties="drop")
    assert math.isnan(dropped["C"]) and dropped["A"] == pytest.approx(0.0)


def test_bradley_terry_never_loses_and_empty() -> None:
    bt = bradley_terry([("A", "B", "a"), ("A", "C", "a"), ("B", "C", "a"), ("C", "B", "a")])
    assert bt["A"] == math.inf and bt["B"] == pytest.approx(0.0) and bt["C"] == pytest.approx(0.0)
    assert bradley_terry([]) == {}


def test_bradley_terry_recovers_known_strengths() -> None:
    rng = np.random.default_rng(1)
    true = {"a": 1.0, "b": 0.3, "c": -0.2, "d": -1.1}
    names = list(true)
    records = []
    for _ in range(20_000):
        i, j = rng.choice(4, size=2, replace=False)
        pa = 1 / (1 + math.exp(true[names[j]] - true[names[i]]))
        records.append((names[i], names[j], "a" if rng.random() < pa else "b"))
    bt = bradley_terry(records)
    for k in names:
        assert bt[k] == pytest.approx(true[k] - np.mean(list(true.values())), abs=0.06)


def test_bradley_terry_accepts_columns() -> None:
    import pandas as pd

    records = [*citations_records(), ("Loser", "JASA", "b"), ("JASA", "JRSS-B", "tie")]
    a, b, o = (np.array(col, dtype=object) for col in zip(*records, strict=True))
    expected = bradley_terry(records)
    assert bradley_terry((a, b, o)) == pytest.approx(expected)
    assert bradley_terry(pd.DataFrame({"x": a, "y": b, "z": o})) == pytest.approx(expected)
    with pytest.raises(ValueError):
        bradley_terry((a, b[:-1], o))


# ----------------------------------------------------------------------------- Bradley–Terry bootstrap


def _comparisons(n_evaluators: int, per_evaluator: int, seed: int) -> tuple[np.ndarray, ...]:
    """Judgments of 4 sources with true log-strengths 0.6, 0.2, -0.2, -0.6 by n evaluators, each with a
    personal bias (so evaluators, not judgments, are the independent units)."""
    rng = np.random.default_rng(seed)
    true = np.array([0.6, 0.2, -0.2, -0.6])
    ev = np.repeat(np.arange(n_evaluators), per_evaluator)
    a = rng.integers(0, 4, len(ev))
    b = (a + rng.integers(1, 4, len(ev))) % 4
    bias = rng.normal(0, 0.3, (n_evaluators, 4))[ev]
    diff = (true[a] + bias[np.arange(len(ev)), a]) - (true[b] + bias[np.arange(len(ev)), b])
    a_wins = rng.random(len(ev)) < 1 / (1 + np.exp(-diff))
    return ev, np.where(a_wins, a, b), np.where(a_wins, b, a)


ITEMS4 = ["s0", "s1", "s2", "s3"]


def _reference_bootstrap(items, ev, winner, loser, weight, idx, confidence=0.95):
    """The slow way: per resample, gather the drawn evaluators' judgments and fit bradley_terry_matrix."""
    k = len(items)
    fits = []
    for draw in idx:
        w = np.zeros((k, k))
        for e in draw:  # an evaluator drawn twice counts twice
            mine = ev == e
            np.add.at(w, (winner[mine], loser[mine]), weight[mine])
        fit = bradley_terry_matrix(items, w)
        fits.append([fit[i] for i in items])
    fits = np.array(fits)
    out = []
    for j in range(k):
        v = fits[:, j][~np.isnan(fits[:, j])]
        out.append((np.quantile(v, (1 - confidence) / 2, method="lower"),
                    np.quantile(v, (1 + confidence) / 2, method="higher")))
    return out


def test_bt_bootstrap_equals_a_loop_over_the_same_resamples() -> None:
    ev, winner, loser = _comparisons(12, 15, seed=3)
    weight = np.ones(len(ev))
    got = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, weight, resamples=200, seed=11)
    expected = _reference_bootstrap(ITEMS4, ev, winner, loser, weight, bootstrap_indexes(12, 200, 11))
    assert list(got["source"]) == ITEMS4
    for (low, high), row in zip(expected, got.itertuples(), strict=True):
        assert row.low == pytest.approx(low, rel=1e-9, abs=1e-12)
        assert row.high == pytest.approx(high, rel=1e-9, abs=1e-12)


def test_bt_bootstrap_with_never_winning_resamples_equals_the_loop() -> None:
    """Few evaluators and a weak source: many resamples in which s3 never wins (-inf) or a source is not
    compared at all (NaN, left out): fitted one by one, still the same as the loop."""
    ev = np.array([0, 0, 1, 1, 2, 2, 3])
    winner = np.array([0, 1, 0, 2, 1, 3, 0])
    loser = np.array([1, 2, 3, 3, 0, 2, 2])
    weight = np.array([1, 1, 1, 0.5, 1, 1, 1.0])
    got = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, weight, resamples=300, seed=2)
    expected = _reference_bootstrap(ITEMS4, ev, winner, loser, weight, bootstrap_indexes(4, 300, 2))
    for (low, high), row in zip(expected, got.itertuples(), strict=True):
        assert row.low == pytest.approx(low, rel=1e-9) and row.high == pytest.approx(high, rel=1e-9)
    assert math.isinf(got.set_index("source").loc["s3", "low"])  # s3 often never wins in a resample


def test_bt_bootstrap_contains_the_estimate_and_shrinks_with_more_evaluators() -> None:
    widths = []
    for n in (15, 150):
        ev, winner, loser = _comparisons(n, 20, seed=5)
        w = np.zeros((4, 4))
        np.add.at(w, (winner, loser), 1)
        point = bradley_terry_matrix(ITEMS4, w)
        ci = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=1).set_index("source")
        for item in ITEMS4:
            assert ci.loc[item, "low"] <= point[item] <= ci.loc[item, "high"], (n, item)
        widths.append((ci["high"] - ci["low"]).to_numpy())
    assert (widths[1] < widths[0]).all()
    assert (widths[1] < 0.6 * widths[0]).mean() >= 0.75  # ~ 1/sqrt(10) in theory


def test_bt_bootstrap_resamples_evaluators_not_judgments() -> None:
    """Evaluators who disagree among themselves (a third of them prefer the weaker sources throughout):
    resampling evaluators gives wider intervals than treating every judgment as independent."""
    ev, winner, loser = _comparisons(12, 60, seed=9)
    flip = (ev % 3 == 0)
    winner, loser = np.where(flip, loser, winner), np.where(flip, winner, loser)
    by_evaluator = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=4)
    by_judgment = bradley_terry_bootstrap(ITEMS4, np.arange(len(ev)), winner, loser, seed=4)
    ratio = (by_evaluator["high"] - by_evaluator["low"]) / (by_judgment["high"] - by_judgment["low"])
    assert ratio.mean() > 1.5, ratio


def test_bt_bootstrap_is_seeded_and_checks_its_input() -> None:
    ev, winner, loser = _comparisons(20, 10, seed=1)
    a = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=7)
    assert a.equals(bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=7))
    assert not a.equals(bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=8))
    assert bootstrap_indexes(5, 3, 1).shape == (3, 5)
    empty = bradley_terry_bootstrap(ITEMS4, [], [], [])
    assert list(empty["source"]) == ITEMS4 and empty["low"].isna().all()
    with pytest.raises(ValueError, match="same length"):
        bradley_terry_bootstrap(ITEMS4, [0, 1], [0], [1])
    with pytest.raises(ValueError, match="item indexes"):
        bradley_terry_bootstrap(ITEMS4, [0], [0], [4])
    with pytest.raises(ValueError, match="confidence"):
        bradley_terry_bootstrap(ITEMS4, [0], [0], [1], confidence=1.5)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_indexes(3, 0)


def test_bt_bootstrap_with_one_evaluator_has_no_interval() -> None:
    """One evaluator: every resample would be the data themselves (a zero-width interval); there is nothing to
    resample, so every interval is NaN, as the Plackett–Luce bootstrap reports it."""
    ev, winner, loser = _comparisons(1, 40, seed=2)
    one = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, seed=0)
    assert list(one["source"]) == ITEMS4 and one[["low", "high"]].isna().all().all()
    # a second evaluator whose only judgment has weight 0 does not count; with a real one there are intervals
    weight = np.append(np.ones(len(ev)), 0.0)
    zero = bradley_terry_bootstrap(ITEMS4, np.append(ev, 1), np.append(winner, 0), np.append(loser, 1), weight)
    assert zero[["low", "high"]].isna().all().all()
    two_ev, two_w, two_l = _comparisons(2, 40, seed=2)
    two = bradley_terry_bootstrap(ITEMS4, two_ev, two_w, two_l, seed=0)
    assert not two[["low", "high"]].isna().any().any()


def test_bt_bootstrap_source_that_never_wins_gets_minus_infinity() -> None:
    ev = np.arange(36) % 6
    rng = np.random.default_rng(0)
    first = rng.random(36) < 0.5
    winner = np.where(np.arange(36) % 2 == 0, np.where(first, 0, 1), np.where(first, 0, 1))
    loser = np.where(np.arange(36) % 2 == 0, np.where(first, 1, 0), 2)  # s2 loses every comparison it is in
    ci = bradley_terry_bootstrap(ITEMS4[:3], ev, winner, loser, seed=0).set_index("source")
    assert ci.loc["s2", "low"] == -math.inf and ci.loc["s2", "high"] == -math.inf
    assert math.isfinite(ci.loc["s0", "low"]) and ci.loc["s0", "low"] <= ci.loc["s0", "high"]


def test_bradley_terry_groups_that_never_beat_each_other() -> None:
    """a and b beat each other, c and d beat each other, a and b always beat c and d: no finite fit exists
    (the old fit ran 100,000 iterations and returned arbitrary numbers). The dominated group gets -inf,
    the dominant one +inf; within a strongly connected remainder the fit is as before."""
    w = np.array([[0, 2, 3, 1], [1, 0, 2, 2], [0, 0, 0, 2], [0, 0, 1, 0]], dtype=float)
    assert bradley_terry_matrix(["a", "b", "c", "d"], w) == {"a": math.inf, "b": math.inf, "c": -math.inf,
                                                             "d": -math.inf}
    # a chain of three groups: the middle one is fitted among itself
    w6 = np.zeros((6, 6))
    for i, j in ((0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4), (0, 2), (2, 4), (1, 5)):
        w6[i, j] = 1
    got = bradley_terry_matrix(list("abcdef"), w6)
    assert got["a"] == got["b"] == math.inf and got["e"] == got["f"] == -math.inf
    assert got["c"] == pytest.approx(0) and got["d"] == pytest.approx(0)


def test_bt_bootstrap_large_counts_take_the_double_precision_path() -> None:
    """Win counts too large for exact single-precision sums are multiplied in double precision: still the loop's
    result (weights of 10 million; a tie's half as 0.5)."""
    ev, winner, loser = _comparisons(8, 12, seed=6)
    weight = np.full(len(ev), 1e7) + 0.5
    got = bradley_terry_bootstrap(ITEMS4, ev, winner, loser, weight, resamples=100, seed=3)
    expected = _reference_bootstrap(ITEMS4, ev, winner, loser, weight, bootstrap_indexes(8, 100, 3))
    for (low, high), row in zip(expected, got.itertuples(), strict=True):
        assert row.low == pytest.approx(low, rel=1e-9) and row.high == pytest.approx(high, rel=1e-9)


def test_batched_newton_fit_equals_the_one_by_one_fit_also_on_lopsided_data() -> None:
    from evalkit.stats.rankings import _fit_bt, _fit_bt_batch

    rng = np.random.default_rng(5)
    mats = [rng.integers(1, 30, size=(4, 4)).astype(float) for _ in range(20)]
    lopsided = np.array([[0, 2000, 2000], [1, 0, 2000], [1, 1, 0]], dtype=float)  # near-separable
    mats.append(lopsided)
    for m in mats:
        np.fill_diagonal(m, 0)
    got = _fit_bt_batch(np.stack([m for m in mats if m.shape == (4, 4)]))
    for row, m in zip(got, [m for m in mats if m.shape == (4, 4)], strict=True):
        want = np.log(_fit_bt(m))
        assert np.allclose(row, want - want.mean(), atol=1e-8)
    [row] = _fit_bt_batch(lopsided[None])
    want = np.log(_fit_bt(lopsided))
    assert np.allclose(row, want - want.mean(), atol=1e-6)
    assert row[0] > row[1] > row[2] and row[0] - row[2] > 10


# ----------------------------------------------------------------------------- Plackett–Luce

RANKINGS = [["a", "b", "c", "d"], ["b", "a", "d", "c"], ["a", "c", "b"], ["d", "a"], ["c", "b", "d"],
            ["b", "d", "a", "c"], ["c", "a", "d"], ["d", "c", "b", "a"]]


def _pl_gradient(rankings: list[list[str]], theta: dict[str, float]) -> dict[str, float]:
    """d log-likelihood / d theta_i, one stage at a time: 1 for the item chosen, minus its choice probability."""
    grad = dict.fromkeys(theta, 0.0)
    for ranking in rankings:
        for s in range(len(ranking) - 1):
            left = ranking[s:]
            total = sum(math.exp(theta[x]) for x in left)
            grad[ranking[s]] += 1
            for x in left:
                grad[x] -= math.exp(theta[x]) / total
    return grad


def test_plackett_luce_is_the_maximum_and_matches_choix() -> None:
    pl = plackett_luce(RANKINGS)
    assert list(pl) == ["a", "b", "c", "d"] and sum(pl.values()) == pytest.approx(0, abs=1e-12)
    assert all(abs(g) < 1e-8 for g in _pl_gradient(RANKINGS, pl).values())
    # choix 0.4.1: choix.mm_rankings(4, rankings as indexes, tol=1e-12), centred (opt_rankings agrees to 1e-6)
    assert pl == pytest.approx({"a": 0.0628204418, "b": 0.3551790406, "c": -0.0915961598, "d": -0.3264033225},
                               abs=1e-9)
    moved = {**pl, "b": pl["b"] + 0.01}  # not a stationary point
    assert abs(_pl_gradient(RANKINGS, moved)["b"]) > 1e-3


def test_plackett_luce_near_separable_data_is_finished_by_bfgs() -> None:
    """Five items, 5,000 rankings in one order and one reversed: the MM steps alone were not done after 100,000
    steps; the BFGS finish reaches the maximum (gradient ~0) in a second or two, and BFGS alone agrees with MM
    where MM converges."""
    from evalkit.stats.rankings import _fit_pl

    rankings = [["a", "b", "c", "d", "e"]] * 5000 + [["e", "d", "c", "b", "a"]]
    pl = plackett_luce(rankings)
    assert pl["a"] > pl["b"] > pl["c"] > pl["d"] > pl["e"] and pl["a"] - pl["e"] > 25
    assert all(abs(g) < 1e-6 for g in _pl_gradient(rankings, pl).values())
    codes = {x: i for i, x in enumerate("abcd")}
    ranked = np.full((len(RANKINGS), 4), -1)
    for r, ranking in enumerate(RANKINGS):
        ranked[r, : len(ranking)] = [codes[x] for x in ranking]
    lengths = np.array([len(r) for r in RANKINGS])
    mm, bfgs = _fit_pl(ranked, lengths, 4), _fit_pl(ranked, lengths, 4, mm_steps=0)
    assert np.allclose(np.log(bfgs), np.log(mm), atol=1e-8)


def test_plackett_luce_on_pairs_is_bradley_terry() -> None:
    pairs = [("A", "B", "a")] * 3 + [("A", "B", "b")] + [("B", "C", "a"), ("C", "A", "a"), ("C", "B", "a")] * 2
    as_rankings = [[a, b] if o == "a" else [b, a] for a, b, o in pairs]
    assert plackett_luce(as_rankings) == pytest.approx(bradley_terry(pairs), abs=1e-9)
    assert plackett_luce([["a", "b"]] * 3 + [["b", "a"]]) == pytest.approx({"a": math.log(3) / 2,
                                                                              "b": -math.log(3) / 2})


def test_plackett_luce_recovers_known_strengths() -> None:
    rng = np.random.default_rng(2)
    true = np.array([1.0, 0.3, -0.2, -1.1, 0.0])
    rankings = []
    for _ in range(5000):
        left = list(rng.choice(5, size=rng.integers(2, 6), replace=False))
        ranking = []
        while left:
            w = np.exp(true[left])
            ranking.append(f"s{left.pop(rng.choice(len(left), p=w / w.sum()))}")
        rankings.append(ranking)
    pl = plackett_luce(rankings)
    for j in range(5):
        assert pl[f"s{j}"] == pytest.approx(true[j] - true.mean(), abs=0.08)


def test_plackett_luce_without_a_finite_fit_and_items() -> None:
    # a is first wherever it appears: +inf; the rest fitted on the rankings without it (b above c 2 to 1)
    got = plackett_luce([["a", "b", "c"], ["a", "c", "b"], ["b", "c"]])
    assert got["a"] == math.inf and got["b"] == pytest.approx(math.log(2) / 2) and got["c"] == -got["b"]
    last = plackett_luce([*RANKINGS, ["a", "z"], ["d", "z"], ["c", "z"]])  # z is always last
    assert last["z"] == -math.inf
    assert {k: v for k, v in last.items() if k != "z"} == pytest.approx(plackett_luce(RANKINGS), abs=1e-9)
    inside = plackett_luce([*RANKINGS, ["b", "c", "z"]])  # z left out, b above c remains
    assert inside["z"] == -math.inf
    assert {k: v for k, v in inside.items() if k != "z"} == pytest.approx(plackett_luce([*RANKINGS, ["b", "c"]]),
                                                                          abs=1e-9)
    # items fixes the order; an item never ranked with another has no estimate; one-item rankings are skipped
    got = plackett_luce([["b", "a"], ["a", "b"], ["c"]], items=["c", "b", "a", "x"])
    assert list(got) == ["c", "b", "a", "x"] and math.isnan(got["c"]) and math.isnan(got["x"])
    assert got["a"] == pytest.approx(0) and got["b"] == pytest.approx(0)
    assert plackett_luce([]) == {}


def test_plackett_luce_rejects_ties_and_unknown_items() -> None:
    with pytest.raises(ValueError, match="ties"):
        plackett_luce([["a", ("b", "c")]])
    with pytest.raises(ValueError, match="twice"):
        plackett_luce([["a", "b"], ["a", "b", "a"]])
    with pytest.raises(ValueError, match="unknown item 'q'"):
        plackett_luce([["a", "q"]], items=["a", "b"])
    with pytest.raises(ValueError, match="string"):
        plackett_luce(["abc"])
    with pytest.raises(ValueError, match="strings"):
        plackett_luce([["a", 3]])


# ----------------------------------------------------------------------------- best of n


def test_best_of_n_shares_fixed_n_is_the_binomial_test() -> None:
    shown = [["a", "b", "c"]] * 12
    winners = ["a"] * 8 + ["b"] * 3 + ["c"]
    t = best_of_n_shares(winners, shown).set_index("item")
    assert list(t.index) == ["a", "b", "c"] and list(t["wins"]) == [8, 3, 1] and (t["shown"] == 12).all()
    assert t.loc["a", "share"] == pytest.approx(8 / 12) and list(t["chance"]) == pytest.approx([1 / 3] * 3)
    assert (t.loc["a", "low"], t.loc["a", "high"]) == wilson_interval(8, 12)
    assert t.loc["a", "p_value"] == binomial_test(8, 12, 1 / 3) and t.loc["c", "p_value"] == binomial_test(1, 12, 1 / 3)


def test_best_of_n_shares_mixed_n_is_exact() -> None:
    """a is shown in three questions of 2 and two of 4 and wins four: the p-value from the 2^5 outcomes."""
    from itertools import product

    shown = [["a", "b"], ["a", "c"], ["b", "a"], ["a", "b", "c", "d"], ["d", "c", "a", "b"]]
    winners = ["a", "a", "a", "a", "b"]
    probs = [1 / 2, 1 / 2, 1 / 2, 1 / 4, 1 / 4]
    pmf = [0.0] * 6
    for outcome in product([0, 1], repeat=5):
        pmf[sum(outcome)] += math.prod(p if o else 1 - p for o, p in zip(outcome, probs, strict=True))
    expected = sum(q for q in pmf if q <= pmf[4] * (1 + 1e-7))
    t = best_of_n_shares(winners, shown).set_index("item")
    assert t.loc["a", "p_value"] == pytest.approx(expected, rel=1e-12)
    assert t.loc["a", "chance"] == pytest.approx(sum(probs) / 5) and t.loc["a", "share"] == 0.8
    assert t.loc["a", "p_value"] != pytest.approx(binomial_test(4, 5, sum(probs) / 5))  # not one binomial
    # d: shown in the two questions of 4, never chosen: Binomial(2, 1/4)
    assert t.loc["d", "p_value"] == binomial_test(0, 2, 1 / 4)


def test_best_of_n_shares_items_and_errors() -> None:
    t = best_of_n_shares(["b"], [["a", "b"]], items=["b", "a", "z"])
    assert list(t["item"]) == ["b", "a", "z"]
    z = t.set_index("item").loc["z"]
    assert z["shown"] == 0 and math.isnan(z["share"]) and z["p_value"] == 1.0
    assert best_of_n_shares([], []).empty
    with pytest.raises(ValueError, match="not among the items shown"):
        best_of_n_shares(["c"], [["a", "b"]])
    with pytest.raises(ValueError, match="fewer than two"):
        best_of_n_shares(["a"], [["a"]])
    with pytest.raises(ValueError, match="twice"):
        best_of_n_shares(["a"], [["a", "b", "a"]])
    with pytest.raises(ValueError, match="one entry per question"):
        best_of_n_shares(["a", "b"], [["a", "b"]])
    with pytest.raises(ValueError, match="unknown item"):
        best_of_n_shares(["a"], [["a", "b"]], items=["a"])


def test_best_of_n_shares_weights_count_questions() -> None:
    """Each distinct (shown, winner) once with its count gives the table of the questions listed one by one, for
    fixed and mixed n; a weight of 0 removes the question."""
    shown = [["a", "b"], ["a", "c"], ["b", "a"], ["a", "b", "c", "d"], ["d", "c", "a", "b"], ["c", "d"]]
    winners = ["a", "c", "b", "a", "b", "d"]
    counts = [3, 1, 2, 4, 1, 0]
    expanded = best_of_n_shares([w for w, c in zip(winners, counts, strict=True) for _ in range(c)],
                                [s for s, c in zip(shown, counts, strict=True) for _ in range(c)],
                                items=["a", "b", "c", "d"])
    weighted = best_of_n_shares(winners, shown, items=["a", "b", "c", "d"], weights=counts)
    # wins: a 3 + 4, b 2 + 1, c 1, d 0; shown: a 3+1+2+4+1, b 3+2+4+1, c 1+4+1 (+0), d 4+1 (+0)
    assert weighted.to_dict("list") == pytest.approx(expanded.to_dict("list"), rel=1e-12, nan_ok=True)
    assert list(weighted["wins"]) == [7, 3, 1, 0] and list(weighted["shown"]) == [11, 10, 6, 5]
    with pytest.raises(ValueError, match="whole numbers"):
        best_of_n_shares(["a"], [["a", "b"]], weights=[0.5])
    with pytest.raises(ValueError, match="one number per question"):
        best_of_n_shares(["a"], [["a", "b"]], weights=[1, 2])
    with pytest.raises(ValueError, match=">= 0"):
        best_of_n_shares(["a"], [["a", "b"]], weights=[-1])


def test_plackett_luce_weights_count_rankings() -> None:
    distinct = [["a", "b", "c"], ["b", "a", "c"], ["c", "a"], ["a", "d", "b", "c"], ["d", "c"], ["b", "d"]]
    counts = [5, 2, 3, 1, 2, 0]
    expanded = [r for r, c in zip(distinct, counts, strict=True) for _ in range(c)]
    assert plackett_luce(distinct, weights=counts) == pytest.approx(plackett_luce(expanded), abs=1e-9)
    assert plackett_luce(RANKINGS, weights=[1] * len(RANKINGS)) == pytest.approx(plackett_luce(RANKINGS), abs=1e-12)
    # the weight-0 ranking (b above d) does not count: d is then never above b, but still above c
    near = [["a", "b", "c", "d", "e"], ["e", "d", "c", "b", "a"]]
    assert plackett_luce(near, weights=[5000, 1]) == pytest.approx(plackett_luce(near[:1] * 5000 + near[1:]),
                                                                    abs=1e-6)


# ----------------------------------------------------------------------------- Plackett–Luce bootstrap

PERMS4 = [list(p) for p in itertools.permutations(ITEMS4)]


def _rankings_by_evaluator(n_evaluators: int, per_evaluator: int, seed: int, true: Sequence[float] = (0.6, 0.2, -0.2,
                           -0.6)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full rankings of ITEMS4 drawn from Plackett–Luce (Gumbel trick) with a personal bias per evaluator, as rows
    (evaluator, index into PERMS4, count)."""
    rng = np.random.default_rng(seed)
    ev = np.repeat(np.arange(n_evaluators), per_evaluator)
    utility = np.asarray(true) + rng.normal(0, 0.3, (n_evaluators, 4))[ev] + rng.gumbel(size=(len(ev), 4))
    order = np.argsort(-utility, axis=1)
    index = {tuple(p): i for i, p in enumerate(itertools.permutations(range(4)))}
    code = np.array([index[tuple(o)] for o in order])
    cell, count = np.unique(ev * 24 + code, return_counts=True)
    return cell // 24, cell % 24, count


def _reference_pl_bootstrap(rankings, ev, ranking, count, idx, items, confidence=0.95):
    """The slow way: per resample, count the drawn evaluators' rankings and fit plackett_luce."""
    fits = []
    for draw in idx:
        w = np.zeros(len(rankings))
        for e in draw:
            np.add.at(w, ranking[ev == e], count[ev == e])
        fit = plackett_luce(rankings, items=items, weights=w)
        fits.append([fit[i] for i in items])
    fits = np.array(fits)
    out = []
    for j in range(len(items)):
        v = fits[:, j][~np.isnan(fits[:, j])]
        out.append((np.quantile(v, (1 - confidence) / 2, method="lower"),
                    np.quantile(v, (1 + confidence) / 2, method="higher")) if len(v) else (math.nan, math.nan))
    return out


def test_pl_bootstrap_equals_a_loop_over_the_same_resamples() -> None:
    ev, ranking, count = _rankings_by_evaluator(12, 4, seed=3)
    got = plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, resamples=200, seed=11)
    expected = _reference_pl_bootstrap(PERMS4, ev, ranking, count, bootstrap_indexes(12, 200, 11), ITEMS4)
    assert list(got["item"]) == ITEMS4
    for (low, high), row in zip(expected, got.itertuples(), strict=True):
        assert row.low == pytest.approx(low, rel=1e-8, abs=1e-10)
        assert row.high == pytest.approx(high, rel=1e-8, abs=1e-10)


def test_pl_bootstrap_with_infinite_and_missing_resamples_equals_the_loop() -> None:
    """Few evaluators, partial rankings: resamples in which an item is never ranked above another (-inf) or not
    ranked at all (NaN, left out) are fitted one by one, still the same as the loop."""
    rankings = [["s0", "s1", "s2"], ["s1", "s0"], ["s2", "s3"], ["s0", "s3", "s1"], ["s3", "s2", "s0"]]
    ev = np.array([0, 0, 1, 2, 2, 3])
    ranking = np.array([0, 1, 2, 3, 1, 4])
    count = np.array([1, 2, 1, 1, 1, 1.0])
    got = plackett_luce_bootstrap(rankings, ev, ranking, count, items=ITEMS4, resamples=300, seed=2)
    expected = _reference_pl_bootstrap(rankings, ev, ranking, count, bootstrap_indexes(4, 300, 2), ITEMS4)
    for (low, high), row in zip(expected, got.itertuples(), strict=True):
        assert row.low == pytest.approx(low, rel=1e-8, abs=1e-10) and row.high == pytest.approx(high, rel=1e-8,
                                                                                                   abs=1e-10)
    assert np.isinf(got[["low", "high"]].to_numpy()).any()  # some resamples have no finite fit


def test_pl_bootstrap_contains_the_estimate_and_shrinks_with_more_evaluators() -> None:
    widths = []
    for n in (20, 200):
        ev, ranking, count = _rankings_by_evaluator(n, 10, seed=5)
        point = plackett_luce(PERMS4, items=ITEMS4, weights=np.bincount(ranking, weights=count, minlength=24))
        ci = plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, seed=1).set_index("item")
        for item in ITEMS4:
            assert ci.loc[item, "low"] < point[item] < ci.loc[item, "high"], (n, item)
        widths.append((ci["high"] - ci["low"]).to_numpy())
    assert (widths[1] < 0.6 * widths[0]).all()  # ~ 1/sqrt(10) in theory


def test_pl_bootstrap_is_seeded_and_checks_its_input() -> None:
    ev, ranking, count = _rankings_by_evaluator(30, 5, seed=7)
    a = plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, seed=7)
    assert a.equals(plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, seed=7))
    assert not a.equals(plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, seed=8))
    with pytest.raises(ValueError, match="same length"):
        plackett_luce_bootstrap(PERMS4, [0, 1], [0], items=ITEMS4)
    with pytest.raises(ValueError, match="index the rankings"):
        plackett_luce_bootstrap(PERMS4, [0], [24], items=ITEMS4)
    with pytest.raises(ValueError, match="evaluator"):
        plackett_luce_bootstrap(PERMS4, [-1], [0], items=ITEMS4)
    with pytest.raises(ValueError, match="weights"):
        plackett_luce_bootstrap(PERMS4, [0], [0], [-1], items=ITEMS4)
    with pytest.raises(ValueError, match="twice"):
        plackett_luce_bootstrap([["s0", "s0"]], [0], [0], items=ITEMS4)
    with pytest.raises(ValueError, match="unknown item"):
        plackett_luce_bootstrap([["s0", "x"]], [0], [0], items=ITEMS4)
    with pytest.raises(ValueError, match="confidence"):
        plackett_luce_bootstrap(PERMS4, [0], [0], items=ITEMS4, confidence=1.5)


def test_pl_bootstrap_edge_cases() -> None:
    # one evaluator: nothing to resample, no interval (not a zero-width one)
    one = plackett_luce_bootstrap(PERMS4, [0, 0], [0, 5], [3, 1], items=ITEMS4)
    assert one[["low", "high"]].isna().all().all()
    # an item never ranked: NaN; the others get finite intervals
    ev, ranking, count = _rankings_by_evaluator(30, 5, seed=1)
    items5 = [*ITEMS4, "never"]
    ci = plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=items5, seed=0).set_index("item")
    assert ci.loc["never"].isna().all() and np.isfinite(ci.loc[ITEMS4].to_numpy()).all()
    # every ranking the same: no finite fit; each interval is the estimate's infinity, no error
    same = plackett_luce_bootstrap(PERMS4, np.arange(5), np.zeros(5, dtype=int), items=ITEMS4).set_index("item")
    point = plackett_luce([ITEMS4] * 5, items=ITEMS4)
    for item in ITEMS4:
        assert same.loc[item, "low"] == same.loc[item, "high"] == point[item] and math.isinf(point[item])
    # nothing at all, or rankings of one item only
    assert plackett_luce_bootstrap(PERMS4, [], [], items=ITEMS4)[["low", "high"]].isna().all().all()
    assert plackett_luce_bootstrap([["s0"]], [0, 1], [0, 0], items=ITEMS4)[["low", "high"]].isna().all().all()


def test_pl_bootstrap_on_a_large_study() -> None:
    """2,000 evaluators x 20 rankings of 4 systems: every interval is finite and holds the estimate (its speed is
    benchmark 9's, bench/bench_stats.py)."""
    ev, ranking, count = _rankings_by_evaluator(2000, 20, seed=2)
    ci = plackett_luce_bootstrap(PERMS4, ev, ranking, count, items=ITEMS4, resamples=1000, seed=0).set_index("item")
    point = plackett_luce([PERMS4[r] for r in ranking], ITEMS4, weights=count)
    assert np.isfinite(ci[["low", "high"]].to_numpy()).all()
    for item in ITEMS4:
        assert ci.loc[item, "low"] < point[item] < ci.loc[item, "high"]


