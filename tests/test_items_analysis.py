"""The analyses of the items kinds (compare, score, rank, realfake) on small hand-built answers, checked against
numbers worked out here and against scipy / krippendorff directly; then end to end through a store, the report
and the CLI."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from evalkit import stats
from evalkit.analysis import EVALUATION_COLUMNS, Options, TaskContext, analyse, items_of, load_frames, score_values
from evalkit.export import latex_table, main_results, markdown_report, results_csv
from evalkit.items import load_items
from evalkit.tasks import compare_analysis, rank_analysis, realfake_analysis, score_analysis
from evalkit.tasks.items_analysis import wilson_fractional

CONTEXT = TaskContext(Options())


def answer(i: int, session: str, task: str, kind: str, index: int, systems: list[str], item: str, response: str,
           detail: dict | None = None) -> dict:
    """One stored answer as ``load_frames(store, full=True)`` returns it (JSON columns as text)."""
    return {"id": i, "session_id": session, "task": task, "kind": kind, "question_index": index, "slot": 0,
            "response": response, "review_source": systems[0] if len(systems) == 1 else None, "domain": None,
            "time_spent_ms": 4000, "left_source": systems[0] if len(systems) == 2 else None,
            "right_source": systems[1] if len(systems) == 2 else None, "sources": json.dumps(systems),
            "item_ids": json.dumps([item]), "matched": 1, "detail": json.dumps(detail or {}),
            "created_at": f"2026-01-01T00:00:{i:02d}Z"}


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


# ----------------------------------------------------------------------------- compare

COMPARE = {"id": "c", "kind": "compare", "title": "Better?", "systems": [], "response": "choice-tie"}


def compare_rows() -> pd.DataFrame:
    # (evaluator, [left, right], response): x wins 5 times, y twice, 2 ties
    given = [("e1", ["x", "y"], "A"), ("e1", ["y", "x"], "B"), ("e1", ["x", "y"], "tie"),
             ("e2", ["x", "y"], "A"), ("e2", ["y", "x"], "A"), ("e2", ["y", "x"], "tie"),
             ("e3", ["x", "y"], "A"), ("e3", ["y", "x"], "B"), ("e3", ["x", "y"], "B")]
    return frame([answer(i + 1, e, "c", "compare", i, pair, f"i{i % 3 + 1}", r)
                  for i, (e, pair, r) in enumerate(given)])


def test_compare_win_rates_ties_excluded_and_as_half() -> None:
    res = compare_analysis.results(compare_rows(), COMPARE, CONTEXT)
    w = res.win_rates.set_index("system")
    assert (w.loc["x", "wins"], w.loc["x", "ties"], w.loc["x", "losses"], w.loc["x", "n"]) == (5, 2, 2, 7)
    assert (w.loc["y", "wins"], w.loc["y", "losses"], w.loc["x", "n_all"]) == (2, 5, 9)
    exact = sst.binomtest(5, 7, 0.5)  # the sign test: ties left out
    assert w.loc["x", "rate"] == pytest.approx(5 / 7) and w.loc["x", "p_value"] == pytest.approx(exact.pvalue)
    ci = exact.proportion_ci(confidence_level=0.95, method="wilson")
    assert (w.loc["x", "low"], w.loc["x", "high"]) == pytest.approx((ci.low, ci.high))
    # ties as half: (5 + 2/2) / 9 = 2/3; 6 of 9 is a whole count, so it is the ordinary Wilson interval
    assert w.loc["x", "half_rate"] == pytest.approx(6 / 9) and w.loc["y", "half_rate"] == pytest.approx(3 / 9)
    whole = sst.binomtest(6, 9).proportion_ci(method="wilson")
    assert (w.loc["x", "half_low"], w.loc["x", "half_high"]) == pytest.approx((whole.low, whole.high))
    # the win share of a system over all its comparisons is the same here (one pair)
    share = res.shares.set_index("system")
    assert share.loc["x", "share"] == pytest.approx(6 / 9) and share.loc["x", "comparisons"] == 9
    # Bradley–Terry on the same comparisons (ties as half), with intervals around it
    records = [("x", "y", "a")] * 5 + [("x", "y", "b")] * 2 + [("x", "y", "tie")] * 2
    bt = res.bradley_terry.set_index("system")
    assert bt["log_strength"].to_dict() == pytest.approx(stats.bradley_terry(records))
    assert (bt["low"] <= bt["log_strength"]).all() and (bt["log_strength"] <= bt["high"]).all()
    # judgments needed for the current 5/7 against 50 %
    power = res.power.iloc[0]
    assert power["needed_total"] == stats.sample_size_one_proportion(5 / 7, 0.5)
    assert power["further"] == power["needed_total"] - 7
    assert res.slider.empty and res.n_answers == 9
    assert "sign test" in res.blocks()[0].heading and "Dixon & Mood" in res.blocks()[0].note


def test_wilson_fractional_is_the_wilson_score_formula() -> None:
    for k, n in ((0, 5), (3, 7), (7, 7), (12, 40)):
        assert wilson_fractional(k, n) == pytest.approx(stats.wilson_interval(k, n))
    # 6.5 of 10 by hand: z = 1.959964, centre (p + z²/2n)/(1 + z²/n), half z sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n)
    z, p, n = 1.959963984540054, 0.65, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_fractional(6.5, 10) == pytest.approx((centre - half, centre + half))
    assert all(math.isnan(v) for v in wilson_fractional(0, 0))


def test_compare_slider_mean_preference_and_draws() -> None:
    rows = frame([answer(1, "e1", "h", "compare", 0, ["x", "y"], "i1", "-40", {"button": "accept"}),  # x by 40
                  answer(2, "e2", "h", "compare", 0, ["y", "x"], "i1", "60", {"button": "reject"}),   # x by 60
                  answer(3, "e3", "h", "compare", 0, ["x", "y"], "i1", "0", {"button": "accept"}),    # draw +
                  answer(4, "e3", "h", "compare", 1, ["x", "y"], "i2", "20", {"button": "reject"})])  # y by 20
    res = compare_analysis.results(rows, {**COMPARE, "id": "h", "response": "slider"}, CONTEXT)
    s = res.slider.iloc[0]
    m = stats.mean_ci([40, 60, 0, -20])
    assert s["favoured"] == "x" and (s["mean"], s["low"], s["high"]) == pytest.approx((m.mean, m.low, m.high))
    assert (s["positive_draws"], s["negative_draws"]) == (1, 0)
    w = res.win_rates.set_index("system")
    assert (w.loc["x", "wins"], w.loc["x", "ties"], w.loc["x", "n"]) == (2, 1, 3)  # the draw is a tie
    assert [b.heading for b in res.blocks()][1] == "Slider: mean preference"


# ----------------------------------------------------------------------------- score

SCORE = {"id": "s", "kind": "score", "title": "Scores", "systems": [], "outputs_per_question": 2, "textfield": "none",
         "scales": [{"id": "q", "label": "Quality", "type": "likert", "min": 1, "max": 5},
                    {"id": "v", "label": "Overall", "type": "slider", "min": 0, "max": 100}]}
# (evaluator, item, systems in display order, Likert q per output, slider v per output)
SCORED = [("e1", "i1", ["x", "y"], [4, 2], [80, 40]), ("e1", "i2", ["y", "x"], [3, 5], [50, 90]),
          ("e2", "i1", ["x", "y"], [5, 3], [70, 65]), ("e2", "i3", ["x", "y"], [4, 4], [60, 60]),
          ("e3", "i2", ["y", "x"], [2, 4], [20, 30]), ("e3", "i3", ["y", "x"], [1, 5], [10, 95])]


def score_rows() -> pd.DataFrame:
    return frame([answer(k + 1, e, "s", "score", k, systems, item, "scored", {"scores": {"q": q, "v": v}})
                  for k, (e, item, systems, q, v) in enumerate(SCORED)])


def long_scores() -> pd.DataFrame:
    """The same scores one per row, by hand: evaluator, item, system, q, v."""
    return pd.DataFrame([(e, item, system, q[p], v[p]) for e, item, systems, q, v in SCORED
                         for p, system in enumerate(systems)], columns=["evaluator", "item", "system", "q", "v"])


def test_score_means_medians_and_distributions() -> None:
    res = score_analysis.results(score_rows(), SCORE, CONTEXT)
    means = res.means.set_index(["scale", "system"])
    table = long_scores()
    for (scale, system), row in means.iterrows():
        values = table.loc[table["system"] == system, scale].to_numpy(dtype=float)
        half = sst.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
        low, high = (1, 5) if scale == "q" else (0, 100)
        assert row["mean"] == pytest.approx(values.mean()) and row["n"] == 6
        assert (row["low"], row["high"]) == pytest.approx((max(low, values.mean() - half),
                                                           min(high, values.mean() + half)))
        ci = sst.quantile_test(values, q=np.median(values)).confidence_interval()
        assert (row["median"], row["median_low"], row["median_high"]) == pytest.approx(
            (np.median(values), ci.low, ci.high))
    assert means.loc[("q", "x"), "mean"] == 4.5 and bool(means.loc[("q", "x"), "clipped"])  # 4.5 + 0.57 > 5
    dist = res.distribution[(res.distribution["scale"] == "q") & (res.distribution["system"] == "x")]
    assert dist.set_index("bin_label")["count"].to_dict() == {"1": 0, "2": 0, "3": 0, "4": 3, "5": 3}
    sliders = res.distribution[res.distribution["scale"] == "v"]
    assert sliders["count"].sum() == 12 and sliders.loc[sliders["bin_label"] == "90–100", "count"].sum() == 2


def test_score_zscores_follow_the_wmt_convention() -> None:
    res = score_analysis.results(score_rows(), SCORE, CONTEXT)
    table = long_scores()
    by = table.groupby("evaluator")["v"]
    table["z"] = (table["v"] - by.transform("mean")) / by.transform(lambda v: v.std(ddof=1))
    z = res.zscores.set_index("system")
    assert list(res.zscores["scale"].unique()) == ["v"]  # sliders only
    for system in ("x", "y"):
        values = table.loc[table["system"] == system, "z"]
        assert z.loc[system, "mean"] == pytest.approx(values.mean())
        assert z.loc[system, "sd"] == pytest.approx(values.std(ddof=1))


def test_score_paired_wilcoxon_on_item_means_and_pairs_needed() -> None:
    res = score_analysis.results(score_rows(), SCORE, CONTEXT)
    w = res.wilcoxon.set_index("scale")
    # per item mean of v: i1 x (80+70)/2=75, y (40+65)/2=52.5; i2 x (90+30)/2=60, y 35; i3 x 77.5, y 35
    d = np.array([75 - 52.5, 60 - 35, 77.5 - 35])
    assert w.loc["v", "pair"] == "x vs y" and w.loc["v", "n"] == 3
    assert w.loc["v", "p_value"] == pytest.approx(sst.wilcoxon(d).pvalue)
    assert w.loc["v", "w_plus"] == 6 and w.loc["v", "mean_diff"] == pytest.approx(d.mean())
    assert w.loc["v", "needed"] == stats.sample_size_paired(d.mean() / d.std(ddof=1))
    # q: every item's difference is 4.5 - 2.5 = 2: no spread, so no sample size
    assert w.loc["q", "mean_diff"] == 2 and pd.isna(w.loc["q", "needed"])


def test_score_alpha_per_scale_equals_krippendorff() -> None:
    res = score_analysis.results(score_rows(), SCORE, CONTEXT)
    table = long_scores()
    table["unit"] = table["item"] + "/" + table["system"]
    agree = res.agreement.set_index("scale")
    for scale, level in (("q", "ordinal"), ("v", "interval")):
        matrix = table.pivot(index="evaluator", columns="unit", values=scale).to_numpy(dtype=float)
        assert agree.loc[scale, "alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement=level), rel=1e-9)
        assert (agree.loc[scale, "level"], agree.loc[scale, "units"], agree.loc[scale, "raters"]) == (level, 6, 3)
    one = score_analysis.results(score_rows().iloc[:1], SCORE, CONTEXT).agreement
    assert one["alpha"].isna().all() and "two or more" in one["note"].iloc[0]


def test_score_values_are_parsed_in_bulk_from_either_column() -> None:
    rows = score_rows()
    rows.loc[1, "detail"] = json.dumps({"scores": {"q": [None, 5], "v": [50, 90]}, "texts": ["a\nb", "c"]})
    rows.loc[2, "detail"] = None
    plain = score_values(rows, ["q", "v"])
    columnar = score_values(rows.assign(score_detail=rows["detail"].astype("category")).drop(columns="detail"),
                            ["q", "v"])
    for scale in ("q", "v"):
        for a, b in zip(plain[scale], columnar[scale], strict=True):
            np.testing.assert_array_equal(a, b)
    row, position, value = plain["q"]
    assert list(row[:3]) == [0, 0, 1] and list(position[:3]) == [0, 1, 1] and list(value[:3]) == [4, 2, 5]
    assert 2 not in set(row)  # the answer without scores


def test_score_without_a_description_finds_its_scales() -> None:
    res = score_analysis.results(score_rows(), {"id": "s", "kind": "score", "title": "s"}, CONTEXT)
    kinds = {s["id"]: s["type"] for s in res.scales}
    assert kinds == {"q": "likert", "v": "slider"} and len(res.means) == 4


# ----------------------------------------------------------------------------- rank

RANKING = {"id": "r", "kind": "rank", "title": "Order", "systems": [], "response": "ranking",
           "outputs_per_question": 0}
RANKED = [("e1", ["x", "y", "z"], "A>B>C"), ("e1", ["y", "z", "x"], "C>A>B"), ("e2", ["z", "x", "y"], "B>C>A"),
          ("e2", ["x", "y", "z"], "B>A>C"), ("e3", ["x", "y", "z"], "A>C>B")]
# in systems: x>y>z, x>y>z, x>y>z, y>x>z, x>z>y
AS_SYSTEMS = [["x", "y", "z"]] * 3 + [["y", "x", "z"], ["x", "z", "y"]]


def test_rank_full_rankings() -> None:
    rows = frame([answer(k + 1, e, "r", "rank", k, systems, f"i{k}", r) for k, (e, systems, r) in enumerate(RANKED)])
    res = rank_analysis.results(rows, RANKING, CONTEXT)
    shares = res.shares.set_index("system")
    assert shares["wins"].to_dict() == {"x": 4, "y": 1, "z": 0} and (shares["shown"] == 5).all()
    assert shares.loc["x", "p_value"] == pytest.approx(sst.binomtest(4, 5, 1 / 3).pvalue)
    assert shares.loc["x", "chance"] == pytest.approx(1 / 3)
    mean_rank = res.mean_rank.set_index("system")["mean"]
    assert mean_rank.to_dict() == pytest.approx({"x": 6 / 5, "y": 10 / 5, "z": 14 / 5})
    pl = res.plackett_luce.set_index("system")["log_strength"]
    assert pl.to_dict() == pytest.approx(stats.plackett_luce(AS_SYSTEMS), abs=1e-9)
    implied = [(r[i], r[j], "a") for r in AS_SYSTEMS for i in range(3) for j in range(i + 1, 3)]
    bt = res.bradley_terry.set_index("system")
    assert bt["log_strength"].to_dict() == pytest.approx(stats.bradley_terry(implied), abs=1e-9)
    assert res.n_rankings == 5 and res.n_answers == 5

def _ranking_rows(given: list[tuple[str, list[str], str]]) -> pd.DataFrame:
    return frame([answer(k + 1, e, "r", "rank", k, systems, f"i{k}", r) for k, (e, systems, r) in enumerate(given)])


def test_rank_plackett_luce_intervals_resample_evaluators() -> None:
    """The Plackett–Luce intervals are stats.plackett_luce_bootstrap over the evaluators' rankings (the same seed
    and resamples), contain the estimates, and are shown in the table and the headline rows."""
    rng = random.Random(4)
    given = []
    for e in range(12):
        for _ in range(3):
            shown = rng.sample(["x", "y", "z"], 3)
            order = sorted(range(3), key=lambda i: -({"x": 1.0, "y": 0.3, "z": 0.0}[shown[i]] + rng.gauss(0, 1)))
            given.append((f"e{e}", shown, ">".join("ABC"[i] for i in order)))
    res = rank_analysis.results(_ranking_rows(given), RANKING, CONTEXT)
    pl = res.plackett_luce.set_index("system")
    as_systems = [[shown["ABC".index(c)] for c in r.split(">")] for _, shown, r in given]
    distinct = sorted({tuple(r) for r in as_systems})
    cells = pd.Series([(int(e[1:]), distinct.index(tuple(r))) for (e, _, _), r in zip(given, as_systems,
                                                                                       strict=True)]).value_counts()
    expected = stats.plackett_luce_bootstrap(
        [list(r) for r in distinct], [c[0] for c in cells.index], [c[1] for c in cells.index], cells.to_numpy(),
        items=["x", "y", "z"], resamples=CONTEXT.options.bootstrap_resamples, seed=CONTEXT.options.bootstrap_seed)
    for r in expected.itertuples():
        assert (pl.loc[r.item, "low"], pl.loc[r.item, "high"]) == pytest.approx((r.low, r.high), abs=1e-9)
        assert r.low < pl.loc[r.item, "log_strength"] < r.high
    assert res.n_ranking_evaluators == 12
    block = next(b for b in res.blocks() if b.heading == "Plackett–Luce strengths")
    assert list(block.table.columns) == ["system", "log_strength", "95% CI"]
    assert block.table["95% CI"].str.match(r"^\[-?\d+\.\d{3}, -?\d+\.\d{3}\]$").all()
    assert "Efron & Tibshirani 1993" in block.note and "Hunter 2004" in block.note and "1,000 resamples" in block.note
    rows = [r for r in res.main_rows() if r["section"].endswith("Plackett–Luce log-strength")]
    assert len(rows) == 3 and all(r["interval"].startswith("bootstrap percentile") for r in rows)
    assert {r["label"]: (r["low"], r["high"]) for r in rows} == pytest.approx(
        {r.item: (r.low, r.high) for r in expected.itertuples()})


def test_rank_plackett_luce_edge_cases() -> None:
    # one evaluator: estimates, no interval, and a note saying why
    one = rank_analysis.results(_ranking_rows([(e.replace("e2", "e1").replace("e3", "e1"), s, r)
                                               for e, s, r in RANKED]), RANKING, CONTEXT)
    block = next(b for b in one.blocks() if b.heading == "Plackett–Luce strengths")
    assert one.n_ranking_evaluators == 1 and one.plackett_luce[["low", "high"]].isna().all().all()
    assert (block.table["95% CI"] == "–").all() and "no interval until a second one" in block.note
    # every ranking in the same order: no finite fit; a note instead of a table of infinities, no headline rows
    same = rank_analysis.results(_ranking_rows([("e1", ["x", "y", "z"], "A>B>C"), ("e2", ["z", "y", "x"], "C>B>A"),
                                                ("e3", ["y", "x", "z"], "B>A>C")]), RANKING, CONTEXT)
    block = next(b for b in same.blocks() if b.heading == "Plackett–Luce strengths")
    assert block.table is None and "No finite Plackett–Luce fit" in block.note and "(x > y > z)" in block.note
    assert "inf" not in block.note.replace("infinite", "")
    assert not [r for r in same.main_rows() if "Plackett–Luce" in r["section"]]
    # a system shown but never ranked (its answer unreadable): no estimate, no interval; the others have both
    odd = rank_analysis.results(_ranking_rows([*RANKED, ("e3", ["w", "x", "y"], "A>A>B")]), RANKING, CONTEXT)
    pl = odd.plackett_luce.set_index("system")
    assert pl.loc["w"].isna().all()
    known = pl.loc[["x", "y", "z"]]  # three evaluators: many resamples have no finite fit, so ends can be infinite
    assert np.isfinite(known["log_strength"]).all() and not known.isna().any().any()
    assert ((known["low"] <= known["log_strength"]) & (known["log_strength"] <= known["high"])).all()



def test_rank_best_of_n_with_questions_of_two_sizes() -> None:
    given = [("e1", ["x", "y", "z"], "A"), ("e1", ["y", "z", "x"], "C"), ("e2", ["z", "x", "y"], "B"),
             ("e2", ["x", "y"], "B")]
    rows = frame([answer(k + 1, e, "b", "rank", k, systems, f"i{k}", r) for k, (e, systems, r) in enumerate(given)])
    res = rank_analysis.results(rows, {**RANKING, "id": "b", "response": "best"}, CONTEXT)
    shares = res.shares.set_index("system")
    # x: shown 4 times, 3 of 3 and once of 2, wins 3; chance (1/3 * 3 + 1/2) / 4
    assert (shares.loc["x", "wins"], shares.loc["x", "shown"]) == (3, 4)
    assert shares.loc["x", "chance"] == pytest.approx((1 + 0.5) / 4)
    expected = stats.best_of_n_shares(["x", "x", "x", "y"], [g[1] for g in given]).set_index("item")
    assert shares["p_value"].to_dict() == pytest.approx(expected["p_value"].to_dict())
    assert res.mean_rank.empty and res.plackett_luce.empty  # no full rankings
    implied = [("x", "y", "a"), ("x", "z", "a"), ("x", "y", "a"), ("x", "z", "a"), ("x", "z", "a"),
               ("x", "y", "a"), ("y", "x", "a")]
    assert res.bradley_terry.set_index("system")["log_strength"].to_dict() == pytest.approx(
        stats.bradley_terry(implied), abs=1e-9)


# ----------------------------------------------------------------------------- realfake

REALFAKE = {"id": "rf", "kind": "realfake", "title": "Real?", "systems": [], "target": "human", "questions": 10,
            "confidence": ["guess", "somewhat", "sure", "very sure"], "from": "items"}
JUDGED = [("human", "real", 4), ("human", "real", 3), ("human", "generated", 1), ("human", "real", 2),
          ("gpt", "real", 2), ("gpt", "generated", 4), ("gpt", "generated", 3),
          ("t5", "generated", 4), ("t5", "generated", 4), ("t5", "real", 1)]


def realfake_rows() -> pd.DataFrame:
    return frame([answer(k + 1, f"e{k % 3}", "rf", "realfake", k, [system], f"i{k}", said, {"confidence": level})
                  for k, (system, said, level) in enumerate(JUDGED)])


def test_realfake_accuracy_fooling_and_d_prime_by_hand() -> None:
    res = realfake_analysis.results(realfake_rows(), REALFAKE, CONTEXT)
    acc = res.accuracy.iloc[0]
    # correct: human said real 3 of 4, gpt said generated 2 of 3, t5 2 of 3
    assert (acc["correct"], acc["n"]) == (7, 10) and acc["p_value"] == pytest.approx(sst.binomtest(7, 10).pvalue)
    systems = res.systems.set_index("system")
    assert systems.loc["gpt", "rate"] == pytest.approx(1 / 3) and systems.loc["gpt", "role"] == "generated"
    assert systems.loc["gpt", "p_value"] == pytest.approx(sst.binomtest(1, 3).pvalue)
    assert systems.loc["gpt", "detection"] == pytest.approx(2 / 3)
    assert systems.loc["gpt", "detection_low"] == pytest.approx(1 - systems.loc["gpt", "high"])
    # d': H = 3 of 4 real texts called real, F = 2 of 6 generated; log-linear: (3.5 / 5), (2.5 / 7)
    h, f = 3.5 / 5, 2.5 / 7
    d = res.signal.set_index("versus").loc["all generated"]
    assert d["d_prime"] == pytest.approx(sst.norm.ppf(h) - sst.norm.ppf(f))
    assert d["criterion"] == pytest.approx(-(sst.norm.ppf(h) + sst.norm.ppf(f)) / 2)
    se = math.sqrt(h * (1 - h) / (5 * sst.norm.pdf(sst.norm.ppf(h)) ** 2)
                   + f * (1 - f) / (7 * sst.norm.pdf(sst.norm.ppf(f)) ** 2))
    assert (d["low"], d["high"]) == pytest.approx((d["d_prime"] - 1.959964 * se, d["d_prime"] + 1.959964 * se))
    gpt = res.signal.set_index("versus").loc["gpt"]  # against gpt alone: F = 1 of 3 -> 1.5 / 4
    assert gpt["d_prime"] == pytest.approx(sst.norm.ppf(h) - sst.norm.ppf(1.5 / 4))


def test_realfake_calibration_by_hand() -> None:
    res = realfake_analysis.results(realfake_rows(), REALFAKE, CONTEXT)
    stated = {1: 0.5, 2: 2 / 3, 3: 5 / 6, 4: 1.0}
    right = [(system == "human") == (said == "real") for system, said, _ in JUDGED]
    ece = 0.0
    for level, p in stated.items():
        mine = [r for r, (_, _, lv) in zip(right, JUDGED, strict=True) if lv == level]
        ece += len(mine) / len(JUDGED) * abs(sum(mine) / len(mine) - p)
    assert res.ece == pytest.approx(ece)
    table = res.calibration.set_index("level")
    assert list(table["label"]) == REALFAKE["confidence"] and table.loc[4, "n"] == 4 and table.loc[4, "accuracy"] == 1
    without = realfake_analysis.results(realfake_rows(), {**REALFAKE, "confidence": []}, CONTEXT)
    assert without.calibration.empty and "Calibration" not in " ".join(b.heading for b in without.blocks())


# ----------------------------------------------------------------------------- automatic metrics


def metric_items(tmp: Path) -> Path:
    path = tmp / "items.jsonl"
    bleu = {"i1": {"x": 30, "y": 10}, "i2": {"x": 25, "y": 15}, "i3": {"x": 40, "y": 5}}
    path.write_text("".join(json.dumps({"id": i, "input": "in", "outputs": {"x": "a", "y": "b"},
                                        "metrics": {s: {"bleu": v} for s, v in m.items()}}) + "\n"
                            for i, m in bleu.items()), encoding="utf-8")
    return path


def test_correlation_with_metrics_at_item_and_system_level(tmp_path: Path) -> None:
    items = load_items(metric_items(tmp_path))
    res = score_analysis.results(score_rows(), SCORE, TaskContext(Options(), items))
    c = res.correlations.set_index(["level", "measure", "method"])
    # item level, slider v: per (item, system) means x 75, 60, 77.5 and y 52.5, 35, 35 against bleu
    human = [75, 60, 77.5, 52.5, 35, 35]
    bleu = [30, 25, 40, 10, 15, 5]
    row = c.loc[("item", "Overall", "pearson")]
    assert row["r"] == pytest.approx(sst.pearsonr(human, bleu).statistic) and row["n"] == 6
    assert c.loc[("item", "Overall", "kendall"), "r"] == pytest.approx(sst.kendalltau(human, bleu).statistic)
    ci = sst.pearsonr(human, bleu).confidence_interval()
    assert (row["low"], row["high"]) == pytest.approx((ci.low, ci.high))
    assert c.loc[("item", "Overall", "spearman"), "r"] == pytest.approx(sst.spearmanr(human, bleu).statistic)
    system = c.loc[("system", "Overall", "pearson")]
    assert system["n"] == 2 and math.isnan(system["r"])  # two systems: no correlation
    # without the items file, or with a file without metrics: a note instead of the table
    none = score_analysis.results(score_rows(), SCORE, CONTEXT)
    assert none.correlations.empty and "not given" in none.correlation_note
    bare = tmp_path / "bare.jsonl"
    bare.write_text('{"id": "i1", "outputs": {"x": "a", "y": "b"}}\n', encoding="utf-8")
    no_metrics = score_analysis.results(score_rows(), SCORE, TaskContext(Options(), load_items(bare)))
    assert "has no metrics" in no_metrics.correlation_note
    compare = compare_analysis.results(compare_rows(), COMPARE, TaskContext(Options(), items))
    assert set(compare.correlations["level"]) == {"system"} and (compare.correlations["n"] == 2).all()


def test_correlation_p_values_name_their_method(tmp_path: Path) -> None:
    """Each p-value says how it was obtained (p_method, the page's "p method" column, the headline rows' detail):
    Spearman's is exact for few points (here n = 6 at item level, with a tie), from its permutation
    distribution."""
    items = load_items(metric_items(tmp_path))
    res = score_analysis.results(score_rows(), SCORE, TaskContext(Options(), items))
    c = res.correlations.set_index(["level", "measure", "method"])
    human = np.array([75, 60, 77.5, 52.5, 35, 35])
    bleu = np.array([30, 25, 40, 10, 15, 5])
    spearman = c.loc[("item", "Overall", "spearman")]
    exact = sst.permutation_test((human,), lambda h: sst.spearmanr(h, bleu).statistic, permutation_type="pairings",
                                 n_resamples=np.inf).pvalue
    assert spearman["p_method"] == "exact permutation" and spearman["p_value"] == pytest.approx(exact, rel=1e-9)
    assert spearman["p_value"] != pytest.approx(sst.spearmanr(human, bleu).pvalue, rel=1e-3)  # not the t approx
    assert c.loc[("item", "Overall", "pearson"), "p_method"] == "t"
    assert c.loc[("item", "Overall", "kendall"), "p_method"] == "normal approximation"  # a tie: not exact
    assert c.loc[("system", "Overall", "spearman"), "p_method"] == ""  # two systems: no p
    block = next(b for b in res.blocks() if b.heading == "Correlation with automatic metrics")
    assert list(block.table.columns) == ["level", "measure", "metric", "method", "r", "95% CI", "p", "p method", "n"]
    assert "p method" in block.note and "exact up to n = 10" in block.note
    details = {r["detail"] for r in res.main_rows() if "correlation with bleu (item level)" in r["section"]}
    assert details == {"pearson, p: t", "kendall, p: normal approximation"}


def test_bradley_terry_with_one_evaluator_has_no_interval_and_says_why() -> None:
    one = compare_analysis.results(compare_rows().assign(session_id="e1"), COMPARE, CONTEXT)
    assert one.n_bt_evaluators == 1 and one.bradley_terry[["low", "high"]].isna().all().all()
    block = next(b for b in one.blocks() if b.heading == "Bradley–Terry strengths")
    assert (block.table["95% CI"] == "–").all() and "no interval until a second one" in block.note
    three = compare_analysis.results(compare_rows(), COMPARE, CONTEXT)
    block = next(b for b in three.blocks() if b.heading == "Bradley–Terry strengths")
    assert three.n_bt_evaluators == 3 and "no interval until" not in block.note
    assert three.bradley_terry[["low", "high"]].notna().all().all()
    # rank: Bradley–Terry from the implied pairs of one evaluator's answers
    ranked = rank_analysis.results(_ranking_rows([("e1", s, r) for _, s, r in RANKED]), RANKING, CONTEXT)
    block = next(b for b in ranked.blocks() if b.heading == "Bradley–Terry strengths from implied pairs")
    assert ranked.n_pair_evaluators == 1 and ranked.bradley_terry[["low", "high"]].isna().all().all()
    assert "no interval until a second one" in block.note
    several = rank_analysis.results(_ranking_rows(RANKED), RANKING, CONTEXT)
    assert several.n_pair_evaluators == 3 and "no interval until" not in next(
        b for b in several.blocks() if b.heading == "Bradley–Terry strengths from implied pairs").note


# ----------------------------------------------------------------------------- end to end


def fill_items_study(config: Path, location: Path | str, evaluators: int = 10) -> None:
    """``evaluators`` sessions through every items task of the items study, into the database at ``location``."""
    from evalkit.config import open_study, study_summary
    from evalkit.store import open_store
    from tests.helpers import answer_items_tasks

    loaded = open_study(config)
    with open_store(location) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        rng = random.Random(4)
        for e in range(evaluators):
            answer_items_tasks(store, loaded, store.create_session(study_version=loaded.version,
                                                                    evaluator_name=f"e{e}"), rng)


@pytest.fixture(scope="module")
def items_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.helpers import make_demo_with_items_tasks

    return make_demo_with_items_tasks(tmp_path_factory.mktemp("items") / "study")


@pytest.fixture(scope="module")
def items_db(items_config: Path) -> tuple[Path, Path]:
    """A SQLite database of 10 evaluators through every items task of the items study (and the config)."""
    db = items_config.parent.parent / "db.sqlite"
    fill_items_study(items_config, db)
    return items_config, db


def test_columnar_and_plain_frames_give_the_same_items_results(items_config: Path, db_url: str) -> None:
    """On both backends: the columnar read (categoricals, JSON keys and the score detail read in SQL) gives the
    same tables as every column read as stored and coded by the analysis."""
    from evalkit.config import open_study
    from evalkit.store import open_store
    from tests.test_analysis import flat_report

    fill_items_study(items_config, db_url, evaluators=6)
    items = items_of(open_study(items_config))
    with open_store(db_url) as store:
        columnar, plain = load_frames(store), load_frames(store, full=True)
    assert isinstance(columnar.evaluations["item_ids"].dtype, pd.CategoricalDtype)
    assert "detail" not in columnar.evaluations and "score_detail" in columnar.evaluations
    a, b = flat_report(analyse(columnar, items=items)), flat_report(analyse(plain, items=items))
    assert [r.task for r in analyse(columnar, items=items).item_tasks] == ["cmp", "help", "sc", "best", "order",
                                                                            "rf"]
    keys = [key for key in a if key.startswith((".tasks", ".across"))]  # every task and the study-level BT
    assert len(keys) > 50 and keys == [key for key in b if key.startswith((".tasks", ".across"))]
    for key in keys:
        x, y = a[key], b[key]
        if isinstance(x, pd.DataFrame):
            pd.testing.assert_frame_equal(x.astype(object), y.astype(object), check_exact=False, rtol=1e-12, obj=key)
        elif isinstance(x, float):
            assert (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12), key
        elif not isinstance(x, Options):
            assert x == y, key


def test_report_tables_exports_and_charts_of_the_items_kinds(items_db: tuple[Path, Path]) -> None:
    from evalkit.charts import report_specs
    from evalkit.config import open_study
    from evalkit.store import open_store

    config, db = items_db
    with open_store(db) as store:
        report = analyse(load_frames(store), items=items_of(open_study(config)))
    table = main_results(report)
    sections = set(table["section"])
    for needle in ("Which reply is better? Win rate (vs 50%)", "Score the replies: Fluency mean (1–5)",
                   "Score the replies: Quality mean z-score", "The best reply: chosen as the best (vs chance)",
                   "Order the replies: Plackett–Luce log-strength", "Written by the owner? Accuracy (vs 50%)",
                   "Written by the owner? Sensitivity d'", "Score the replies: correlation with bleu (item level)"):
        assert needle in sections, needle
    back = pd.read_csv(io.StringIO(results_csv(report)))
    assert len(back) == len(table) and back["n"].dropna().map(float.is_integer).all()
    latex = latex_table(report)
    assert "Fisher-$z$" in latex and "Written by the owner? Sensitivity d'" in latex
    # the caption names both models whose strengths carry bootstrap intervals
    assert "Bradley--Terry and Plackett--Luce log-strengths with percentile bootstrap intervals" in latex
    md = markdown_report(report)
    for heading in ("## Which reply is better? (`cmp`, compare, choice-tie)", "(`help`, compare, slider)",
                    "(`sc`, score, 2 outputs per question)", "(`best`, rank, best of n)",
                    "(`order`, rank, full ranking)", "(`rf`, real or generated, real = human)",
                    "Krippendorff's alpha per scale:", "Calibration of the confidence:", "Mean rank:"):
        assert heading in md, heading
    specs = report_specs(report)
    for key in ("compare_wins:cmp", "compare_bt:help", "score_means:sc", "score_dist:sc", "rank_shares:order",
                "rank_bt:best", "realfake_systems:rf", "realfake_calibration:rf"):
        assert key in specs, key
    for result in report.item_tasks:  # every chart a block names exists
        assert all(b.chart in specs for b in result.blocks() if b.chart)


def test_report_cli_with_and_without_the_config(items_db: tuple[Path, Path]) -> None:
    from evalkit.config import open_study
    from evalkit.store import open_store
    from tests.test_analysis import run_cli

    config, db = items_db
    with open_store(db) as store:
        frames = load_frames(store)
    with_items = analyse(frames, items=items_of(open_study(config)))
    out = run_cli("report", "--db", str(db), "--config", str(config))
    assert out.returncode == 0, out.stderr
    assert out.stdout == markdown_report(with_items) + "\n" * (not markdown_report(with_items).endswith("\n"))
    assert "Score the replies: correlation with bleu (item level)" in run_cli(
        "report", "--db", str(db), "--config", str(config), "--format", "csv").stdout
    bare = run_cli("report", "--db", str(db))
    assert bare.returncode == 0 and "the study's items files were not given to the analysis" in bare.stdout
    assert "correlation with bleu" not in run_cli("report", "--db", str(db), "--format", "csv").stdout


def test_evaluator_table_ignores_what_is_not_an_answer() -> None:
    """A score answer's response is always "scored" (not straight-lining) and a realfake answer's review_source
    is the text shown (not a pick for the majority agreement); a rank answer's best is a pick."""
    from evalkit.analysis import RATING_COLUMNS, quality_signals
    from tests.test_analysis import sessions_frame

    ses = sessions_frame(("e1", "active", False), ("e2", "active", False))
    no_ratings = pd.DataFrame(columns=RATING_COLUMNS)
    rows = [answer(k + 1, "e1", "s", "score", k, ["x"], f"i{k}", "scored", {"scores": {"q": [3]}}) for k in range(4)]
    rows += [answer(10 + k, e, "rf", "realfake", k, ["x"], "i1", said, {"confidence": 1})
             for e in ("e1", "e2") for k, said in enumerate(["real", "generated"])]
    q = quality_signals(ses, frame(rows), no_ratings).set_index("session_id")
    # counted, the four "scored" would be a run of 4; the realfake answers alternate: runs of 1
    assert q.loc["e1", "longest_same_run"] == 1 and q.loc["e1", "answers"] == 6
    assert q["majority_agreement"].isna().all()  # both realfake answers "picked" x on slot 0: not picks
    best = frame([answer(k + 1, e, "b", "rank", 0, ["x", "y"], "i1", "A") for k, e in enumerate(["e1", "e2"])])
    best["review_source"], best["slot"] = "x", 0
    agree = quality_signals(ses, best, no_ratings).set_index("session_id")
    assert (agree["majority_agreement"] == 1.0).all()  # both picked x on item slot 0: a pick
