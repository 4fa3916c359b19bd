"""The analysis of the ``spans`` kind (evalkit.tasks.spans_analysis) and its statistics (evalkit.stats.spans) on
small hand-built answers and spans, against numbers worked out here (in the comments) and against scipy and
evalkit.stats.cohen_kappa directly; then the edge cases: no spans at all, spans not given, one evaluator, a system
never shown, no answers, answers without the items file, a document of two segments."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from evalkit import stats
from evalkit.analysis import EVALUATION_COLUMNS, Options, TaskContext
from evalkit.items import load_items
from evalkit.tasks import score_analysis, spans_analysis
from evalkit.tasks.spans_analysis import DEFAULT_MQM_WEIGHTS, mqm_weights, span_weight

SPAN_COLUMNS = ["session_id", "task", "question_index", "item_id", "segment", "system", "n", "start_char",
                "end_char", "severity", "category", "text", "origin", "created_at"]
TASK = {"id": "esa", "kind": "spans", "title": "ESA", "systems": ["x", "y", "z"], "protocol": "mqm",
        "severities": ["minor", "major", "critical"],
        "categories": {"Accuracy": ["Mistranslation"], "Fluency": ["Punctuation", "Grammar"]},
        "scales": [{"id": "quality", "label": "Quality", "type": "slider", "min": 0, "max": 100}],
        "missing_token": True, "prefill": True, "outputs_per_question": 1}
# outputs: i1 x "the cat sat" (3 words, 11 characters), y "a dog ran far" (4, 13); i2 x "hello world" (2, 11),
# y "good bye" (2, 8); i3 x "one two three four" (4, 18), y "five six" (2, 8)
OUTPUTS = {"i1": {"x": "the cat sat", "y": "a dog ran far"}, "i2": {"x": "hello world", "y": "good bye"},
           "i3": {"x": "one two three four", "y": "five six"}}


def write_items(tmp: Path, items: dict[str, dict[str, str]] | list[dict]) -> Path:
    path = tmp / "items.jsonl"
    lines = items if isinstance(items, list) else [{"id": i, "input": "source", "outputs": o} for i, o in
                                                   items.items()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def answer(i: int, session: str, index: int, systems: list[str], item: str, scores: list[float] | None = None,
           actions: list[dict] | None = None, task: str = "esa") -> dict:
    """One stored spans answer as ``load_frames(store, full=True)`` returns it (JSON columns as text)."""
    detail = {"scores": {"quality": scores} if scores is not None else {}, "actions": actions or [],
              "confirmed_no_spans": False}
    return {"id": i, "session_id": session, "task": task, "kind": "spans", "question_index": index, "slot": 0,
            "response": "annotated", "review_source": None, "domain": None, "time_spent_ms": 4000,
            "left_source": None, "right_source": None, "sources": json.dumps(systems),
            "item_ids": json.dumps([item]), "matched": 1, "detail": json.dumps(detail),
            "created_at": f"2026-01-01T00:00:{i:02d}Z"}


def span(session: str, index: int, item: str, system: str, start: int, end: int, severity: str,
         category: str | None = None, origin: str = "added", segment: int = 0, task: str = "esa") -> list:
    return [session, task, index, item, segment, system, 0, start, end, severity, category, "", origin,
            "2026-01-01T00:00:00Z"]


def mqm_note(res: spans_analysis.SpansResult) -> str:
    """The note under the MQM table, as the results page shows it."""
    [block] = [b for b in res.blocks() if b.heading == "MQM score per system"]
    return block.note


def evaluations(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


def spans_frame(rows: list[list]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SPAN_COLUMNS)


def study_answers() -> pd.DataFrame:
    """e1 annotates every output of i1-i3, e2 those of i1-i2; two answers carry an action log."""
    return evaluations([
        answer(1, "e1", 0, ["x"], "i1", [80], [{"t": 5000, "action": "create", "output": 0, "segment": 0},
                                               {"t": 9000, "action": "score", "output": 0}]),
        # a gap of 200 s is capped at 120 s; the score action names no output (the answer has one)
        answer(2, "e1", 1, ["y"], "i1", [60], [{"t": 200000, "action": "keep", "output": 0, "segment": 0},
                                               {"t": 203000, "action": "create", "output": 0, "segment": 0},
                                               {"t": 210000, "action": "score"}]),
        answer(3, "e1", 2, ["x"], "i2", [90]), answer(4, "e1", 3, ["y"], "i2", [50]),
        answer(5, "e1", 4, ["x"], "i3", [70]), answer(6, "e1", 5, ["y"], "i3", [40]),
        answer(7, "e2", 0, ["x"], "i1", [70]), answer(8, "e2", 1, ["y"], "i1", [65]),
        answer(9, "e2", 2, ["x"], "i2", [85]), answer(10, "e2", 3, ["y"], "i2", [55])])


def study_spans() -> pd.DataFrame:
    return spans_frame([
        span("e1", 0, "i1", "x", 0, 3, "minor", "Fluency/Grammar"),  # weight 1
        span("e1", 1, "i1", "y", 2, 5, "major", "Accuracy/Mistranslation", "suggested-kept"),  # 5
        span("e1", 1, "i1", "y", 13, 14, "minor", "Accuracy/Mistranslation"),  # 1, the [missing] token
        span("e1", 3, "i2", "y", 0, 4, "critical", "Accuracy/Mistranslation"),  # 25
        span("e1", 4, "i3", "x", 3, 4, "minor", "Fluency/Punctuation"),  # 0.1
        span("e1", 5, "i3", "y", 0, 4, "major", "Accuracy/Mistranslation", "suggested-deleted"),  # not an error
        span("e2", 0, "i1", "x", 0, 7, "minor", "Fluency/Grammar"),  # 1
        span("e2", 1, "i1", "y", 2, 5, "major", "Accuracy/Mistranslation", "suggested-changed"),  # 5
        span("e2", 2, "i2", "x", 6, 11, "minor", "Fluency/Grammar"),  # 1
        # rows of answers the analysis was not given (an excluded session, another task): ignored
        span("e9", 0, "i1", "x", 0, 11, "critical", "Accuracy/Mistranslation"),
        span("e1", 0, "i1", "x", 0, 11, "critical", "Accuracy/Mistranslation", task="other"),
    ])


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory):
    return load_items(write_items(tmp_path_factory.mktemp("spans"), OUTPUTS))


@pytest.fixture(scope="module")
def result(items) -> spans_analysis.SpansResult:
    return spans_analysis.results(study_answers(), TASK, TaskContext(Options(), items, "", None, study_spans()))


def ratio_bootstrap(numerator: list[float], denominator: list[float], options: Options) -> tuple[float, float]:
    """scipy.stats.bootstrap of Σ numerator / Σ denominator, items resampled, as the analysis is meant to call it."""
    res = sst.bootstrap((np.array(numerator, dtype=float), np.array(denominator, dtype=float)),
                        lambda a, b, axis=-1: a.sum(axis=axis) / b.sum(axis=axis), paired=True, vectorized=True,
                        n_resamples=options.bootstrap_resamples, confidence_level=options.confidence,
                        method="percentile", rng=np.random.default_rng(options.bootstrap_seed))
    return res.confidence_interval.low, res.confidence_interval.high


# ----------------------------------------------------------------------------- per system


def test_errors_per_severity_and_category_by_hand(result) -> None:
    e = result.errors.set_index(["system", "severity"])["count"].to_dict()
    # x: e1 i1 minor, e1 i3 minor, e2 i1 minor, e2 i2 minor; y: the [missing] minor, two majors (kept and changed
    # suggestions), one critical; e1's deleted suggestion on i3 y is not an error
    assert e == {("x", "minor"): 4, ("x", "major"): 0, ("x", "critical"): 0,
                 ("y", "minor"): 1, ("y", "major"): 2, ("y", "critical"): 1}
    assert set(result.errors["outputs"]) == {5}
    c = result.categories.set_index(["system", "category"])["count"].to_dict()
    assert c[("x", "Fluency/Grammar")] == 3 and c[("x", "Fluency/Punctuation")] == 1
    assert c[("y", "Accuracy/Mistranslation")] == 4 and c[("y", "Fluency/Grammar")] == 0
    # the taxonomy's order
    assert list(dict.fromkeys(result.categories["category"])) == ["Accuracy/Mistranslation", "Fluency/Punctuation",
                                                                  "Fluency/Grammar"]
    table = next(b.table for b in result.blocks() if b.heading == "Errors per system by severity")
    assert table.to_dict("records")[1] == {"system": "y", "outputs": 5, "minor": 1, "major": 2, "critical": 1,
                                           "spans per output": "0.80"}


def test_mqm_per_output_and_per_100_words_with_bootstrap_intervals_over_items(result) -> None:
    m = result.mqm.set_index("system")
    # x: outputs e1 i1 1, e1 i2 0, e1 i3 0.1 (punctuation), e2 i1 1, e2 i2 1 = 3.1 over 5 outputs of 3+2+4+3+2 = 14
    # words; y: 6 (5 + the [missing] token's 1), 25, 0, 5, 0 = 36 over 5 outputs of 4+2+2+4+2 = 14 words
    assert m.loc["x", "penalty"] == pytest.approx(0.62) and m.loc["y", "penalty"] == pytest.approx(7.2)
    assert m.loc["x", "per_100_words"] == pytest.approx(100 * 3.1 / 14)
    assert m.loc["y", "per_100_words"] == pytest.approx(100 * 36 / 14)
    assert (m.loc["x", "outputs"], m.loc["x", "items"], m.loc["x", "word_items"]) == (5, 3, 3)
    # items i1, i2, i3: x penalties summed over their annotations 2, 1, 0.1 over 2, 2, 1 annotations
    options = Options()
    assert (m.loc["x", "low"], m.loc["x", "high"]) == pytest.approx(ratio_bootstrap([2, 1, 0.1], [2, 2, 1], options))
    assert (m.loc["x", "low_100"], m.loc["x", "high_100"]) == pytest.approx(
        ratio_bootstrap([200, 100, 10], [6, 4, 4], options))
    assert (m.loc["y", "low"], m.loc["y", "high"]) == pytest.approx(ratio_bootstrap([11, 25, 0], [2, 2, 1], options))
    assert m.loc["x", "low"] <= 0.62 <= m.loc["x", "high"]
    rows = [r for r in result.main_rows() if "MQM" in r["section"]]
    assert [(r["label"], r["value"]) for r in rows] == pytest.approx(
        [("x", 0.62), ("x", 100 * 3.1 / 14), ("y", 7.2), ("y", 100 * 36 / 14)])


def test_the_weights_take_the_most_specific_key_and_the_task_overrides_them(items) -> None:
    assert span_weight("minor", "Fluency/Punctuation", DEFAULT_MQM_WEIGHTS) == 0.1
    assert span_weight("minor", "Fluency/Grammar", DEFAULT_MQM_WEIGHTS) == 1
    assert span_weight("major", "Fluency/Punctuation", DEFAULT_MQM_WEIGHTS) == 5
    assert span_weight("critical", None, DEFAULT_MQM_WEIGHTS) == 25
    assert span_weight("neutral", None, DEFAULT_MQM_WEIGHTS) == 0
    weights = mqm_weights({"mqm_weights": {"major": 10, "minor:Fluency": 0.5}})
    assert weights["critical"] == 25 and weights["major"] == 10
    assert span_weight("minor", "Fluency/Grammar", weights) == 0.5  # the top-level key
    assert span_weight("minor", "Fluency/Punctuation", weights) == 0.1  # the full category wins over it
    task = {**TASK, "mqm_weights": {"major": 10, "critical": 0}}
    res = spans_analysis.results(study_answers(), task, TaskContext(Options(), items, "", None, study_spans()))
    # y: 10 + 1, 0, 0, 10, 0 = 21 over 5 outputs
    assert res.mqm.set_index("system").loc["y", "penalty"] == pytest.approx(21 / 5)
    odd = spans_frame([span("e1", 0, "i1", "x", 0, 3, "cosmetic")])
    res = spans_analysis.results(study_answers(), TASK, TaskContext(Options(), items, "", None, odd))
    assert res.unweighted == ["cosmetic"] and "cosmetic" in mqm_note(res)
    assert res.mqm.set_index("system").loc["x", "penalty"] == 0


def test_the_scores_are_the_score_kinds(result, items) -> None:
    """The scales' means, z-scores, Wilcoxon tests and Krippendorff's alpha are the score kind's on the same
    answers: x 80, 90, 70, 70, 85 (mean 79); y 60, 50, 40, 65, 55 (mean 54)."""
    means = result.score.means.set_index("system")["mean"]
    assert means.to_dict() == pytest.approx({"x": 79, "y": 54})
    alone = score_analysis.results(study_answers(), TASK, TaskContext(Options(), items))
    pd.testing.assert_frame_equal(result.score.zscores, alone.zscores)
    pd.testing.assert_frame_equal(result.score.agreement, alone.agreement)
    assert result.score.agreement["units"].iloc[0] == 4 and not math.isnan(result.score.agreement["alpha"].iloc[0])
    headings = [b.heading for b in result.blocks()]
    assert "Slider scales: mean z-score per system" in headings and "Krippendorff's alpha per scale" in headings
    ranking = result.ranking[result.ranking["measure"] == "Quality (mean)"]
    assert list(ranking["system"]) == ["x", "y"] and list(ranking["rank"]) == [1, 1]  # p = .25 with 3 items


def test_a_system_never_shown_is_left_out(result) -> None:
    assert result.systems == ["x", "y"]
    for frame in (result.errors, result.categories, result.mqm, result.ranking, result.esa_ai, result.timing):
        assert "z" not in set(frame["system"])
    assert list(result.pairs["pair"]) == ["x vs y"]


# ----------------------------------------------------------------------------- ranks


def three_systems() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One evaluator, 8 items, systems a (no error), b (one minor per output), c (one major per output)."""
    rows, spans = [], []
    for j in range(8):
        for k, system in enumerate("abc"):
            index = 3 * j + k
            rows.append(answer(index + 1, "e1", index, [system], f"j{j}"))
            if system != "a":
                spans.append(span("e1", index, f"j{j}", system, 0, 1, "minor" if system == "b" else "major"))
    return evaluations(rows), spans_frame(spans)


def test_systems_are_ranked_by_holm_corrected_paired_tests() -> None:
    ev, spans = three_systems()
    task = {"id": "esa", "kind": "spans", "title": "ESA", "systems": ["a", "b", "c"], "protocol": "esa",
            "severities": ["minor", "major"], "categories": None}
    res = spans_analysis.results(ev, task, TaskContext(Options(), None, "no items file", None, spans))
    assert res.score is None  # no scales
    p = res.pairs.set_index("pair")
    # every pair differs by the same amount on all 8 items: the exact signed-rank p is 2 / 2^8
    assert p["p_value"].to_numpy() == pytest.approx([2 / 256] * 3)
    assert p["p_value"].to_numpy() == pytest.approx([sst.wilcoxon([-1.0 + 0.01 * k for k in range(8)]).pvalue] * 3)
    # Holm: 3p, 2p, p made non-decreasing = 3p for all three
    assert p["p_holm"].to_numpy() == pytest.approx([6 / 256] * 3)
    assert p.loc["a vs b", "mean_diff"] == -1 and p.loc["b vs c", "mean_diff"] == -4
    r = res.ranking.set_index("system")
    assert r["rank"].to_dict() == {"a": 1, "b": 2, "c": 3}
    assert r.loc["a", "better_than"] == "b, c" and r.loc["c", "better_than"] == ""
    assert r["value"].to_dict() == {"a": 0, "b": 1, "c": 5}
    # without the items file: no words, so no score per 100 words, and the note says why
    assert res.mqm["per_100_words"].isna().all() and "items file" in mqm_note(res)
    # one evaluator: no agreement, and the table says why
    assert res.agreement["value"].isna().all()
    assert "only one evaluator has annotated" in res.agreement["note"].iloc[0]


def test_holm_adjustment_by_hand() -> None:
    # sorted .01, .03, .04 -> .03, .06, .04 -> non-decreasing .03, .06, .06; NaN kept out of m
    assert stats.holm([0.04, 0.01, math.nan, 0.03]) == pytest.approx([0.06, 0.03, math.nan, 0.06], nan_ok=True)
    assert stats.holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]).shape == (0,)


# ----------------------------------------------------------------------------- agreement


def char_labels(length: int, *spans: tuple[int, int]) -> list[int]:
    marked = {c for start, end in spans for c in range(start, end)}
    return [int(c in marked) for c in range(length)]


def test_character_f1_and_kappa_between_evaluators_by_hand(result) -> None:
    a = result.agreement.set_index("measure")
    # e1 and e2 share 4 outputs: i1 x {0-2} vs {0-6}: F1 6/10; i1 y {2-4, 13} vs {2-4}: 6/7; i2 x {} vs {6-10}:
    # 0; i2 y {0-3} vs {}: 0 (e1's deleted suggestion on i3 y is not theirs to share)
    assert a.loc["character F1", "value"] == pytest.approx((0.6 + 6 / 7 + 0 + 0) / 4)
    # kappa over every character of the 4 outputs and the [missing] token after each (12, 14, 12, 9 positions)
    first = (char_labels(12, (0, 3)) + char_labels(14, (2, 5), (13, 14)) + char_labels(12) +
             char_labels(9, (0, 4)))
    second = char_labels(12, (0, 7)) + char_labels(14, (2, 5)) + char_labels(12, (6, 11)) + char_labels(9)
    kappa = stats.cohen_kappa(first, second)
    assert a.loc["Cohen's kappa (characters)", "value"] == pytest.approx(kappa)
    assert kappa == pytest.approx(stats.kappa_from_counts(6, 5, 9, 27))  # the 2x2 table: 6, 5, 9, 27
    assert (a["pairs"].tolist(), a["units"].tolist(), a["evaluators"].tolist()) == ([1, 1], [4, 4], [2, 2])
    for measure in a.index:
        assert a.loc[measure, "low"] <= a.loc[measure, "value"] <= a.loc[measure, "high"]
    assert (a["note"] == "").all()


def test_pair_agreement_averages_pairs_and_resamples_units() -> None:
    # pair 0 on units 0 and 1 (F1 1 and 0.5), pair 1 on unit 1 (F1 0): mean over pairs (0.75 + 0) / 2
    counts = [[2, 0, 0, 8], [1, 1, 1, 7], [0, 2, 0, 8]]
    res = stats.pair_agreement([0, 0, 1], [0, 1, 1], [1.0, 0.5, 0.0], counts, resamples=200, seed=3)
    # pair 0 pooled: 3, 1, 1, 15 (n 20): p_o .9, p_e .2 x .2 + .8 x .8 = .68, kappa .22 / .32 = .6875; pair 1:
    # 0, 2, 0, 8: p_o .8 = p_e .2 x 0 + .8 x 1, kappa 0
    assert res.f1 == pytest.approx(0.375) and res.pairs == 2 and res.units == 2
    assert stats.kappa_from_counts(3, 1, 1, 15) == pytest.approx(0.6875)
    assert res.kappa == pytest.approx(0.6875 / 2)
    assert res.f1_low <= res.f1 <= res.f1_high and res.kappa_low <= res.kappa <= res.kappa_high
    again = stats.pair_agreement([0, 0, 1], [0, 1, 1], [1.0, 0.5, 0.0], counts, resamples=200, seed=3)
    assert (res.f1_low, res.f1_high) == (again.f1_low, again.f1_high)  # the same seed, the same interval
    one = stats.pair_agreement([0], [0], [0.5], [[1, 1, 1, 7]])
    assert one.f1 == 0.5 and math.isnan(one.f1_low)  # one unit: nothing to resample


def test_kappa_from_counts_is_cohens_kappa() -> None:
    for table in ([3, 1, 2, 10], [0, 4, 4, 0], [5, 0, 0, 5], [1, 2, 3, 4]):
        labels = [(1, 1)] * table[0] + [(1, 0)] * table[1] + [(0, 1)] * table[2] + [(0, 0)] * table[3]
        assert stats.kappa_from_counts(*table) == pytest.approx(
            stats.cohen_kappa([x for x, _ in labels], [y for _, y in labels]))
    assert math.isnan(stats.kappa_from_counts(0, 0, 0, 10))  # nothing marked by either: undefined
    assert math.isnan(stats.kappa_from_counts(0, 0, 0, 0))
    both = stats.kappa_from_counts(np.array([3, 0]), np.array([1, 0]), np.array([2, 0]), np.array([10, 10]))
    assert both[0] == pytest.approx(stats.kappa_from_counts(3, 1, 2, 10)) and math.isnan(both[1])


def test_ratio_ci_edge_cases() -> None:
    assert math.isnan(stats.ratio_ci([], []).value)
    single = stats.ratio_ci([3], [2])
    assert single.value == 1.5 and math.isnan(single.low) and single.units == 1
    same = stats.ratio_ci([2, 4, 6], [1, 2, 3])
    assert (same.value, same.low, same.high) == (2, 2, 2)
    with pytest.raises(ValueError, match="paired"):
        stats.ratio_ci([1, 2], [1])


def test_agreement_when_no_output_is_shared() -> None:
    ev = evaluations([answer(1, "e1", 0, ["x"], "i1"), answer(2, "e2", 0, ["x"], "i2")])
    res = spans_analysis.results(ev, TASK, TaskContext(Options(), None, "no file", None, spans_frame([])))
    assert res.agreement["value"].isna().all()
    assert "no output was annotated by two or more evaluators" in res.agreement["note"].iloc[0]
    note = next(b.note for b in res.blocks() if b.heading == "Agreement on the spans")
    assert "no output was annotated by two or more evaluators" in note


# ----------------------------------------------------------------------------- ESA-AI and time


def test_esa_ai_shares_of_suggestions_and_spans_added(result) -> None:
    e = result.esa_ai.set_index("system")
    # y: e1 kept one, e2 changed one, e1 deleted one; added the [missing] span and the critical one
    assert e.loc["y", ["suggestions", "kept", "changed", "deleted", "added"]].tolist() == [3, 1, 1, 1, 2]
    assert e.loc["y", ["kept_share", "changed_share", "deleted_share"]].tolist() == pytest.approx([1 / 3] * 3)
    assert e.loc["y", "added_per_output"] == pytest.approx(2 / 5)
    assert e.loc["x", "suggestions"] == 0 and math.isnan(e.loc["x", "kept_share"]) and e.loc["x", "added"] == 4


def test_time_per_span_and_per_segment_from_the_action_log(result) -> None:
    t = result.timing.set_index("system")
    # x: e1's i1 answer alone has a log: a create after 5 s, the score 4 s later; 1 span, 1 segment
    assert t.loc["x", ["outputs", "span_seconds", "spans", "segment_seconds", "segments"]].tolist() == [1, 5, 1, 9, 1]
    # y: keep after 200 s (capped at 120), create 3 s later, score 7 s later; its spans: the kept suggestion and
    # the [missing] span
    assert t.loc["y", "span_seconds"] == pytest.approx(123) and t.loc["y", "spans"] == 2
    assert t.loc["y", "seconds_per_span"] == pytest.approx(61.5)
    assert t.loc["y", "seconds_per_segment"] == pytest.approx(130)
    assert spans_analysis.ACTION_GAP_CAP_MS == 120_000


# ----------------------------------------------------------------------------- edge cases


def test_no_spans_at_all(items) -> None:
    res = spans_analysis.results(study_answers(), TASK, TaskContext(Options(), items, "", None, spans_frame([])))
    assert (res.errors["count"] == 0).all() and len(res.errors) == 6
    m = res.mqm.set_index("system")
    assert m[["penalty", "low", "high", "per_100_words"]].to_numpy().tolist() == [[0, 0, 0, 0], [0, 0, 0, 0]]
    a = res.agreement.set_index("measure")
    assert a.loc["character F1", "value"] == 1  # both evaluators marked nothing on every shared output
    assert math.isnan(a.loc["Cohen's kappa (characters)", "value"])
    assert "undefined" in a.loc["Cohen's kappa (characters)", "note"]
    e = res.esa_ai.set_index("system")  # a task with suggestions whose answers saw none
    assert (e["suggestions"] == 0).all() and (e["added"] == 0).all()
    assert res.categories["count"].sum() == 0
    assert (res.pairs["p_value"].isna()).all()  # every difference 0: nothing to rank
    assert list(res.ranking.loc[res.ranking["measure"] == "MQM penalty per output", "rank"]) == [1, 1]
    assert all(isinstance(b.heading, str) for b in res.blocks()) and "spans_mqm:esa" in res.charts()


def test_spans_not_given_to_the_analysis(items) -> None:
    res = spans_analysis.results(study_answers(), TASK, TaskContext(Options(), items))
    assert res.spans_note and res.mqm.empty and res.errors.empty
    blocks = res.blocks()
    assert blocks[-1].heading == "Error spans" and "not given" in blocks[-1].note
    assert "Mean and median score per system" in [b.heading for b in blocks]  # the scores still are
    assert list(res.ranking["measure"].unique()) == ["Quality (mean)"]
    assert "spans_mqm:esa" not in res.charts()


def test_no_answers(items) -> None:
    ev = evaluations([answer(1, "e1", 0, ["x"], "i1", [50], task="other")])
    res = spans_analysis.results(ev, TASK, TaskContext(Options(), items, "", None, study_spans()))
    assert res.n_answers == 0 and res.systems == [] and res.mqm.empty and res.timing.empty
    assert "no answers yet" in res.agreement["note"].iloc[0]
    assert res.describe() == "spans, MQM with suggestions, one output per question"
    assert res.headings()[1] == "ESA (`esa`, spans, MQM with suggestions, one output per question): 0 answers"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [b.heading for b in res.blocks()][-1] == "Time per span and per segment"
    assert res.main_rows() == []


def test_without_the_items_file_kappa_says_why(result) -> None:
    res = spans_analysis.results(study_answers(), TASK,
                                 TaskContext(Options(), None, "the study's items files were not given", None,
                                             study_spans()))
    a = res.agreement.set_index("measure")
    assert a.loc["character F1", "value"] == pytest.approx(result.agreement["value"].iloc[0])
    assert math.isnan(a.loc["Cohen's kappa (characters)", "value"])
    assert "items file" in a.loc["Cohen's kappa (characters)", "note"]
    assert res.mqm["penalty"].tolist() == pytest.approx(result.mqm["penalty"].tolist())
    assert res.mqm["per_100_words"].isna().all()


def test_two_outputs_per_question_are_told_apart(items) -> None:
    ev = evaluations([answer(1, "e1", 0, ["y", "x"], "i1", [40, 90],
                             [{"t": 2000, "action": "create", "output": 1, "segment": 0},
                              {"t": 3000, "action": "create", "output": 0, "segment": 0}])])
    spans = spans_frame([span("e1", 0, "i1", "x", 0, 3, "major"), span("e1", 0, "i1", "y", 0, 1, "minor")])
    task = {**TASK, "outputs_per_question": 2}
    res = spans_analysis.results(ev, task, TaskContext(Options(), items, "", None, spans))
    assert res.mqm.set_index("system")["penalty"].to_dict() == {"x": 5, "y": 1}
    assert res.timing.set_index("system")["span_seconds"].to_dict() == {"x": 2, "y": 1}  # output 1 is x
    assert res.score.means.set_index("system")["mean"].to_dict() == {"x": 90, "y": 40}
    assert "2 outputs per question" in res.describe()


def test_a_document_is_annotated_segment_by_segment(tmp_path: Path) -> None:
    items = load_items(write_items(tmp_path, [{"id": "d1", "segments": [
        {"input": "a", "outputs": {"x": "one two", "y": "three"}},
        {"input": "b", "outputs": {"x": "four", "y": "five six"}}]}]))
    ev = evaluations([answer(1, "e1", 0, ["x"], "d1", [70], [{"t": 1000, "action": "create", "output": 0,
                                                              "segment": 0},
                                                             {"t": 3000, "action": "score", "output": 0}]),
                      answer(2, "e2", 0, ["x"], "d1", [60])])
    spans = spans_frame([span("e1", 0, "d1", "x", 0, 3, "minor", segment=0),
                         span("e2", 0, "d1", "x", 0, 4, "minor", segment=1)])
    task = {**TASK, "missing_token": False}
    res = spans_analysis.results(ev, task, TaskContext(Options(), items, "", None, spans))
    a = res.agreement.set_index("measure")
    # segment 0 "one two": {0-2} vs {}; segment 1 "four": {} vs {0-3}: F1 0 on both
    assert a.loc["character F1", "value"] == 0 and a.loc["character F1", "units"] == 2
    kappa = stats.cohen_kappa(char_labels(7, (0, 3)) + char_labels(4), char_labels(7) + char_labels(4, (0, 4)))
    assert a.loc["Cohen's kappa (characters)", "value"] == pytest.approx(kappa)
    m = res.mqm.set_index("system")
    assert m.loc["x", "penalty"] == 1 and m.loc["x", "per_100_words"] == pytest.approx(100 * 2 / 6)  # 3 words each
    t = res.timing.set_index("system")
    assert t.loc["x", "segments"] == 2 and t.loc["x", "seconds_per_segment"] == pytest.approx(1.5)
    # without the items file the segments are those the spans name: the same units
    bare = spans_analysis.results(ev, task, TaskContext(Options(), None, "none", None, spans))
    assert bare.agreement.set_index("measure").loc["character F1", "units"] == 2


def test_blocks_notes_cite_their_methods(result) -> None:
    blocks = {b.heading: b for b in result.blocks()}
    assert "Freitag et al. (2021)" in blocks["Errors per system by severity"].note
    assert "Kocmi et al. (2024)" in blocks["Errors per system by severity"].note
    assert "Freitag et al. 2021" in blocks["MQM score per system"].note
    assert "minor:Fluency/Punctuation 0.1" in blocks["MQM score per system"].note
    assert "1,000 resamples, seed 0" in blocks["MQM score per system"].note
    assert blocks["MQM score per system"].chart == "spans_mqm:esa"
    assert "Cohen's (1960)" in blocks["Agreement on the spans"].note
    assert "Krippendorff" in blocks["Agreement on the spans"].note
    assert "Zouhar et al. 2025" in blocks["ESA-AI: suggested spans kept, changed and deleted"].note
    assert "120 s" in blocks["Time per span and per segment"].note
    assert "Holm" in blocks["Systems ranked"].note
    first = blocks["MQM score per system"].table.iloc[0]
    assert (first["system"], first["outputs"], first["items"], first["penalty per output"], first["per 100 words"]) \
        == ("x", 5, 3, "0.62", "22.14")
    assert set(result.charts()) == {"score_means:esa", "score_dist:esa", "spans_mqm:esa"}


def test_pair_agreement_interval_is_the_naive_bootstrap() -> None:
    """The vectorised bootstrap equals the plain loop over the same resamples: each resample takes units with
    repetition, every pair's rows of a unit along; per pair the mean F1 (weighted by how often each unit was drawn)
    and kappa of the summed table; averaged over pairs (a pair with no unit drawn left out); percentiles."""
    rng = np.random.default_rng(1)
    pair, unit, f1, counts = [], [], [], []
    for p in range(3):
        for u in rng.choice(6, size=4, replace=False):
            pair.append(p)
            unit.append(int(u))
            f1.append(float(rng.random()))
            both, first, second = (int(x) for x in rng.integers(0, 4, 3))
            counts.append([both, first, second, 10])
    res = stats.pair_agreement(pair, unit, f1, counts, resamples=300, seed=7)
    units = sorted(set(unit))
    draws = stats.bootstrap_indexes(len(units), 300, 7)
    f1s, kappas = [], []
    for draw in draws:
        taken = [units[i] for i in draw]
        per_f1, per_kappa = [], []
        for p in range(3):
            rows = [k for k in range(len(pair)) if pair[k] == p for _ in range(taken.count(unit[k]))]
            if not rows:
                continue
            per_f1.append(np.mean([f1[k] for k in rows]))
            table = np.sum([counts[k] for k in rows], axis=0)
            kappa = stats.kappa_from_counts(*table)
            if not math.isnan(kappa):
                per_kappa.append(kappa)
        f1s.append(np.mean(per_f1))
        kappas.append(np.mean(per_kappa) if per_kappa else math.nan)
    kappas = [k for k in kappas if not math.isnan(k)]
    assert (res.f1_low, res.f1_high) == pytest.approx(tuple(np.percentile(f1s, [2.5, 97.5])))
    assert (res.kappa_low, res.kappa_high) == pytest.approx(tuple(np.percentile(kappas, [2.5, 97.5])))


def test_suggestions_left_unreviewed_are_their_own_share_and_count_as_errors(items) -> None:
    """Two answers on y: one suggestion confirmed (kept), one left as suggested (not reviewed), one deleted: a third
    each; the unreviewed one is an error in the counts, as the kept one is."""
    ev = evaluations([answer(1, "e1", 0, ["y"], "i1", [60]), answer(2, "e2", 0, ["y"], "i1", [70]),
                      answer(3, "e3", 0, ["y"], "i1", [80])])
    spans = spans_frame([span("e1", 0, "i1", "y", 2, 5, "major", "Accuracy/Mistranslation", "suggested-kept"),
                         span("e2", 0, "i1", "y", 2, 5, "major", "Accuracy/Mistranslation", "suggested-unreviewed"),
                         span("e3", 0, "i1", "y", 2, 5, "major", "Accuracy/Mistranslation", "suggested-deleted")])
    res = spans_analysis.results(ev, TASK, TaskContext(Options(), items, "", None, spans))
    e = res.esa_ai.set_index("system")
    assert e.loc["y", ["suggestions", "kept", "unreviewed", "deleted"]].tolist() == [3, 1, 1, 1]
    assert e.loc["y", ["kept_share", "unreviewed_share", "deleted_share"]].tolist() == pytest.approx([1 / 3] * 3)
    errors = res.errors.set_index(["system", "severity"])["count"]
    assert errors.loc[("y", "major")] == 2


def test_the_mqm_note_lists_the_weights_the_task_can_use(items) -> None:
    """An ESA task (no categories) is not told MQM's punctuation and non-translation weights; an MQM task is."""
    ev = evaluations([answer(1, "e1", 0, ["y"], "i1", [60])])
    spans = spans_frame([span("e1", 0, "i1", "y", 2, 5, "major")])
    esa = {**TASK, "protocol": "esa", "categories": None, "severities": ["minor", "major"]}
    note = mqm_note(spans_analysis.results(ev, esa, TaskContext(Options(), items, "", None, spans)))
    assert "minor 1, major 5" in note and "Punctuation" not in note and "critical" not in note
    mqm = {**TASK, "categories": {"Fluency": ["Punctuation"], "Accuracy": ["Mistranslation"]},
           "severities": ["minor", "major"]}
    note = mqm_note(spans_analysis.results(ev, mqm, TaskContext(Options(), items, "", None, spans)))
    assert "minor:Fluency/Punctuation 0.1" in note and "Non-translation" not in note
