"""evalkit.analysis and evalkit.export on small hand-computed data, and end to end through the store and CLI."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats as sst

from evalkit import stats
from evalkit.analysis import (
    EVALUATION_COLUMNS,
    RATING_COLUMNS,
    SESSION_COLUMNS,
    Frames,
    Options,
    analyse,
    evaluations_csv,
    included_sessions,
    load_frames,
    quality_signals,
    ratings_csv,
)
from evalkit.export import fmt_p, latex_table, main_results, markdown_report, results_csv
from evalkit.tasks.pairwise_analysis import pairwise_results
from evalkit.tasks.rating_analysis import rating_results
from evalkit.tasks.triplet_analysis import triplet_results
from tests.helpers import ROOT

TRIPLET = {"id": "t", "kind": "triplet", "title": "Spot it", "sources": ["r", "g", "h"], "target": "r",
           "selection": "per-evaluator"}
PAIRS = {"id": "p", "kind": "pairwise", "title": "Natural", "response": "choice"}
RATING = {"id": "n", "kind": "rating", "title": "Rate",
          "metrics": [{"id": "q", "label": "Quality", "scale": 5}], "familiarity": True}


def ev_row(i, session, task, index, response, source=None, slot=None, domain="a", ms=5000, left=None,
           right=None, kind="triplet", detail="{}"):
    return {"id": i, "session_id": session, "task": task, "kind": kind, "question_index": index, "slot": slot,
            "response": response, "review_source": source, "domain": domain, "time_spent_ms": ms,
            "left_source": left, "right_source": right, "sources": "[]", "item_ids": "[]", "matched": 1,
            "detail": detail, "created_at": f"2026-01-01T00:00:{i:02d}Z"}


def sessions_frame(*specs) -> pd.DataFrame:
    rows = []
    for sid, status, completed in specs:
        rows.append({"session_id": sid, "evaluator_name": sid.upper(), "external_id": "", "seed": 1,
                     "study_version": "v", "started_at": "2026-01-01T00:00:00Z",
                     "completed_at": "2026-01-01T00:10:00Z" if completed else None, "user_agent": "",
                     "status": status, "completion_code": None, "meta": "{}"})
    return pd.DataFrame(rows, columns=SESSION_COLUMNS)


def triplet_rows() -> pd.DataFrame:
    picks = [("e1", 0, "r"), ("e1", 1, "g"), ("e2", 0, "r"), ("e2", 1, "r"), ("e3", 0, "h"), ("e3", 1, "r")]
    return pd.DataFrame([ev_row(i + 1, s, "t", slot, "A", src, slot=slot, domain="ab"[slot])
                         for i, (s, slot, src) in enumerate(picks)], columns=EVALUATION_COLUMNS)


def test_triplet_results_by_hand() -> None:
    res = triplet_results(triplet_rows(), TRIPLET)
    sel = res.selection.set_index("source")
    assert sel.loc["r", "picked"] == 4 and sel.loc["g", "picked"] == 1 and sel.loc["h", "picked"] == 1
    assert sel.loc["r", "rate"] == pytest.approx(4 / 6) and (sel["n"] == 6).all()
    assert sel.loc["r", "p_value"] == pytest.approx(sst.binomtest(4, 6, 1 / 3).pvalue)
    assert (sel.loc["r", "low"], sel.loc["r", "high"]) == stats.wilson_interval(4, 6)
    assert sel.loc["r", "role"] == "target" and sel.loc["g", "role"] == "generated"
    assert list(res.turing["source"]) == ["g", "h"] and list(res.turing["fooled"]) == [1, 1]
    assert res.accuracy["picked"] == 4 and res.accuracy["rate"] == pytest.approx(4 / 6)
    # slot 0: r r h; slot 1: g r r -> P_i = 1/3 each, p = (4/6, 1/6, 1/6), P_e = 1/2 -> kappa = -1/3
    assert res.kappa == pytest.approx(-1 / 3)
    assert (res.kappa_subjects, res.kappa_raters, res.kappa_basis) == (2, 3, "question slots")
    dom = res.per_domain.set_index(["domain", "source"])
    assert dom.loc[("a", "r"), "picked"] == 2 and dom.loc[("a", "r"), "n"] == 3
    assert dom.loc[("b", "g"), "picked"] == 1
    shared = triplet_results(triplet_rows(), {**TRIPLET, "selection": "shared"})
    assert shared.kappa_basis == "identical triplets"


def test_triplet_with_no_answers() -> None:
    res = triplet_results(pd.DataFrame(columns=EVALUATION_COLUMNS), TRIPLET)
    assert (res.selection["n"] == 0).all() and math.isnan(res.kappa) and res.n_answers == 0


def pair_rows() -> pd.DataFrame:
    rows = [
        ev_row(1, "e1", "p", 0, "A", "x", 0, left="x", right="y", kind="pairwise"),   # x wins
        ev_row(2, "e1", "p", 1, "B", "x", 1, left="y", right="x", kind="pairwise"),   # x wins
        ev_row(3, "e2", "p", 0, "B", "y", 0, left="x", right="y", kind="pairwise"),   # y wins
        ev_row(4, "e2", "p", 1, "A", "x", 1, left="x", right="z", kind="pairwise"),   # x beats z
        ev_row(5, "e3", "p", 0, "A", "x", 0, left="x", right="y", kind="pairwise"),   # x wins
    ]
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


def test_pairwise_choice_by_hand() -> None:
    res = pairwise_results(pair_rows(), PAIRS)
    w = res.win_rates.set_index(["pair", "source"])
    assert w.loc[("x vs y", "x"), "wins"] == 3 and w.loc[("x vs y", "x"), "n"] == 4
    assert w.loc[("x vs y", "y"), "wins"] == 1
    assert w.loc[("x vs y", "x"), "p_value"] == pytest.approx(sst.binomtest(3, 4).pvalue)
    assert w.loc[("x vs z", "x"), "rate"] == 1.0
    records = list(res.records.itertuples(index=False, name=None))
    assert sorted(records) == sorted([("x", "y", "a"), ("y", "x", "b"), ("x", "y", "b"), ("x", "z", "a"),
                                      ("x", "y", "a")])
    bt = res.bradley_terry.set_index("source")["log_strength"]
    assert bt.to_dict() == stats.bradley_terry(records)
    assert bt["z"] == -math.inf  # z never wins
    p = res.power.set_index("pair")
    assert p.loc["x vs y", "needed_total"] == stats.sample_size_one_proportion(0.75, 0.5)
    assert p.loc["x vs y", "further"] == p.loc["x vs y", "needed_total"] - 4
    assert res.slider.empty


def test_pairwise_slider_by_hand() -> None:
    def slider(i, s, idx, value, button, left, right):
        return ev_row(i, s, "p", idx, str(value), None, idx, left=left, right=right, kind="pairwise",
                      detail=json.dumps({"button": button, "outcome": "x"}))

    rows = pd.DataFrame([slider(1, "e1", 0, -40, "accept", "x", "y"),   # x (left) better by 40
                         slider(2, "e1", 1, 20, "reject", "x", "y"),    # y better by 20
                         slider(3, "e2", 0, 60, "accept", "y", "x"),    # x (right) better by 60
                         slider(4, "e2", 1, 0, "accept", "x", "y"),     # positive draw
                         slider(5, "e3", 0, 0, "reject", "y", "x")],    # negative draw
                        columns=EVALUATION_COLUMNS)
    res = pairwise_results(rows, {**PAIRS, "response": "slider"})
    s = res.slider.iloc[0]
    assert s["pair"] == "x vs y" and s["favoured"] == "x"
    oriented = [40, -20, 60, 0, 0]
    m = stats.mean_ci(oriented)
    assert (s["mean"], s["low"], s["high"], s["n"]) == pytest.approx((m.mean, m.low, m.high, 5))
    assert (s["positive_draws"], s["negative_draws"]) == (1, 1)
    w = res.win_rates.set_index("source")
    assert w.loc["x", "wins"] == 2 and w.loc["x", "ties"] == 2 and w.loc["x", "n"] == 3
    assert sorted(res.records.itertuples(index=False, name=None)) == sorted(
        [("x", "y", "a"), ("x", "y", "b"), ("y", "x", "b"), ("x", "y", "tie"), ("y", "x", "tie")])


def rating_frame() -> pd.DataFrame:
    rows, i = [], 0
    for session, index, item, fam, q in [("e1", 0, "i1", 5, 4), ("e1", 1, "i2", 1, 2), ("e2", 0, "i1", 3, 5),
                                         ("e3", 0, "i1", 2, 4), ("e3", 1, "i2", 4, 3)]:
        for metric, score in (("familiarity", fam), ("q", q)):
            i += 1
            rows.append({"id": i, "session_id": session, "task": "n", "question_index": index, "item_id": item,
                         "metric": metric, "score": score, "comment": "", "time_spent_ms": 9000,
                         "created_at": "2026"})
        rows.append({"id": i + 100, "session_id": session, "task": "n", "question_index": index, "item_id": item,
                     "metric": "comment", "score": None, "comment": "text", "time_spent_ms": 9000,
                     "created_at": "2026"})
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


def test_rating_results_by_hand() -> None:
    res = rating_results(rating_frame(), RATING)
    mos = res.mos.set_index("metric").loc["q"]
    m = stats.mean_ci([4, 2, 5, 4, 3])
    assert m.high > 5  # the plain t interval runs past the 1-5 scale; the analysis clips it
    assert (mos["mean"], mos["low"], mos["high"], mos["n"]) == pytest.approx((m.mean, m.low, 5.0, 5))
    assert bool(mos["clipped"]) and mos["scale"] == 5
    assert mos["label"] == "Quality"
    # familiarity-weighted: (5*4 + 1*2 + 3*5 + 2*4 + 4*3) / (5+1+3+2+4) = 57/15
    assert mos["weighted_mean"] == pytest.approx(57 / 15)
    dist = res.distribution.set_index("score")["count"].to_dict()
    assert dist == {1: 0, 2: 1, 3: 1, 4: 2, 5: 1}
    agree = res.agreement.iloc[0]
    # items with >= 2 raters: i1 (e1 4, e2 5, e3 4) and i2 (e1 2, e3 3)
    expected = stats.krippendorff_alpha([[4, 2], [5, None], [4, 3]], "ordinal")
    assert agree["alpha"] == pytest.approx(expected) and agree["items"] == 2 and agree["raters"] == 3
    assert res.n_item_ratings == 5 and res.n_items == 2  # 5 ratings of 2 items


def test_quality_signals_by_hand() -> None:
    ses = sessions_frame(("e1", "completed", True), ("e2", "active", False), ("e3", "excluded", True))
    rows = [ev_row(1, "e1", "t", 0, "A", "r", 0, ms=1000), ev_row(2, "e1", "t", 1, "A", "g", 1, ms=3000),
            ev_row(3, "e1", "t", 2, "A", "r", 2, ms=8000), ev_row(4, "e2", "t", 0, "B", "r", 0, ms=500),
            ev_row(5, "e2", "t", 1, "C", "r", 1, ms=9000), ev_row(6, "e3", "t", 0, "A", "h", 0, ms=4000),
            ev_row(7, "e3", "t", 1, "B", "r", 1, ms=4000)]
    ev = pd.DataFrame(rows, columns=EVALUATION_COLUMNS)
    q = quality_signals(ses, ev, pd.DataFrame(columns=RATING_COLUMNS), fast_ms=2000).set_index("session_id")
    assert q.loc["e1", "answers"] == 3 and q.loc["e1", "total_time_s"] == pytest.approx(12.0)
    assert q.loc["e1", "median_time_s"] == pytest.approx(3.0)
    assert q.loc["e1", "fast_answers"] == 1 and q.loc["e2", "fast_answers"] == 1
    assert q.loc["e1", "longest_same_run"] == 3 and q.loc["e2", "longest_same_run"] == 1
    assert bool(q.loc["e1", "completed"]) and not bool(q.loc["e2", "completed"])
    # slot 0: e1 r, e2 r, e3 h. e1's others: r, h -> tie: skipped; e2's others: r, h -> tie; e3's others: r, r -> r.
    # slot 1: e1 g, e2 r, e3 r. e1's others: r r -> r (miss); e2's others: g, r -> tie; e3's others: g, r -> tie.
    # slot 2: only e1 -> no others.
    assert q.loc["e1", "majority_agreement"] == 0.0
    assert math.isnan(q.loc["e2", "majority_agreement"])
    assert q.loc["e3", "majority_agreement"] == 0.0


def frames_for_report() -> Frames:
    ses = sessions_frame(("e1", "completed", True), ("e2", "active", False), ("e3", "completed", True),
                         ("ex", "excluded", True), ("tr", "trashed", True))
    ev = pd.concat([triplet_rows(), pair_rows().assign(id=lambda d: d["id"] + 100),
                    pd.DataFrame([ev_row(300, "ex", "t", 0, "A", "g", 0), ev_row(301, "tr", "t", 0, "A", "g", 0)],
                                 columns=EVALUATION_COLUMNS)], ignore_index=True)
    rt = rating_frame()
    studies = {"v": {"title": "Demo", "tasks": [TRIPLET, PAIRS, RATING]}}
    return Frames(sessions=ses, evaluations=ev, ratings=rt, studies=studies)


def test_analyse_counts_only_included_sessions() -> None:
    frames = frames_for_report()
    assert list(included_sessions(frames.sessions)["session_id"]) == ["e1", "e2", "e3"]
    assert list(included_sessions(frames.sessions, True)["session_id"]) == ["e1", "e3"]
    report = analyse(frames)
    assert report.n_sessions == 3 and report.n_completed == 2 and report.title == "Demo"
    t = report.triplets[0].selection.set_index("source")
    assert t.loc["g", "picked"] == 1  # the excluded and trashed sessions' picks of g do not count
    assert report.quality.shape[0] == 5  # the admin table lists everyone
    done = analyse(frames, Options(completed_only=True))
    assert done.triplets[0].selection["n"].iloc[0] == 4  # e1 and e3 only
    assert report.bradley_terry_all.set_index("source")["log_strength"].to_dict() == stats.bradley_terry(
        list(report.pairwise[0].records.itertuples(index=False, name=None)))


def test_exports_main_table_latex_and_markdown() -> None:
    frames = frames_for_report()
    report = analyse(frames)
    table = main_results(report)
    assert set(table["section"]) >= {"Spot it: picked as r (chance 33.3%)", "Natural: win rate (vs 50%)",
                                     "Bradley–Terry log-strength (all pairs)", "Rate: mean score (1–5)"}
    latex = latex_table(report)
    for needle in ("\\begin{table}", "\\toprule", "\\midrule", "\\bottomrule", "\\end{tabular}",
                   "66.7", "[30.0, 90.3]", "Bradley--Terry"):
        assert needle in latex, needle
    assert latex.count("\\begin{tabular}{llrrrl}") == 1
    assert "z &  &  & $-\\infty$ &" in latex  # z never wins: its strength is 0, log-strength -inf
    md = markdown_report(report)
    assert "| r | target | 4 | 6 | 66.7 | [30.0, 90.3] |" in md
    assert "Fleiss' kappa over question slots: -0.333" in md
    back = pd.read_csv(io.StringIO(results_csv(report)))
    row = back[(back["label"] == "r")].iloc[0]
    assert row["value"] == pytest.approx(4 / 6) and row["n"] == 6


def test_latex_escapes_special_characters() -> None:
    frames = frames_for_report()
    frames.studies["v"]["tasks"][0] = {**TRIPLET, "title": "A & B_1 50%"}
    latex = latex_table(analyse(frames))
    assert "A \\& B\\_1 50\\%" in latex


def test_fmt_p() -> None:
    assert fmt_p(0.0004) == "< .001" and fmt_p(0.0123) == ".012" and fmt_p(1.0) == "1.000"
    assert fmt_p(float("nan")) == "–"


def test_evaluations_and_ratings_csv_have_the_cera_columns() -> None:
    frames = frames_for_report()
    ev = pd.read_csv(io.StringIO(evaluations_csv(frames)))
    assert list(ev.columns[:11]) == ["evaluatorName", "sessionId", "task", "questionIndex", "response",
                                     "reviewSource", "domain", "timeSpentMs", "leftSource", "rightSource",
                                     "createdAt"]
    assert {"kind", "slot", "sources", "itemIds", "matched", "sessionStatus", "studyVersion"} <= set(ev.columns)
    assert len(ev) == len(frames.evaluations) and ev.loc[0, "evaluatorName"] == "E1"
    rt = pd.read_csv(io.StringIO(ratings_csv(frames)))
    assert {"evaluatorName", "sessionId", "itemId", "metric", "score", "itemComment", "metricComment"} <= set(
        rt.columns)
    assert len(rt) == (frames.ratings["metric"] != "comment").sum()


# ----------------------------------------------------------------------------- end to end


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


@pytest.fixture
def filled_db(tmp_path: Path) -> Path:
    import random

    from evalkit.config import open_study, study_summary
    from evalkit.sampling import plan
    from evalkit.store import open_store
    from evalkit.survey import finish_rating, record_choice, record_item_rating

    loaded = open_study(ROOT / "config.toml")
    path = tmp_path / "db.sqlite"
    store = open_store(path)
    store.register_study(loaded.version, study_summary(loaded.study))
    rng = random.Random(3)
    task = loaded.study.task("novelty")
    items = loaded.items["novelty"]
    for e in range(12):
        session = store.create_session(study_version=loaded.version, evaluator_name=f"e{e}")
        for q in plan(loaded.study, loaded.pools, session.seed):
            record_choice(store, session, q, rng.choice(q.labels), rng.randint(500, 9000))
        scores = {m.id: rng.randint(1, 5) for m in [task.familiarity, *task.metrics]}
        record_item_rating(store, session, task, 0, items[e % 3].id, scores, "", 5000, items)
        finish_rating(store, session, task)
        if e % 4:
            store.complete_session(session.session_id)
    store.close()
    return path


def test_report_cli_prints_the_same_numbers_as_analyse(filled_db: Path) -> None:
    from evalkit.store import open_store

    store = open_store(filled_db)
    report = analyse(load_frames(store))
    store.close()
    md = run_cli("report", "--db", str(filled_db))
    assert md.returncode == 0, md.stderr
    assert md.stdout == markdown_report(report) + ("" if markdown_report(report).endswith("\n") else "\n")
    latex = run_cli("report", "--db", str(filled_db), "--format", "latex")
    assert latex.stdout == latex_table(report)
    csv = run_cli("report", "--db", str(filled_db), "--format", "csv")
    assert csv.stdout == results_csv(report)
    done = run_cli("report", "--db", str(filled_db), "--completed-only")
    assert "9 evaluators included (9 completed)" in done.stdout
    exported = run_cli("export", "evaluations", "--db", str(filled_db))
    assert pd.read_csv(io.StringIO(exported.stdout)).shape[0] == 12 * 10
    missing = run_cli("report", "--db", str(filled_db.parent / "nope.sqlite"))
    assert missing.returncode == 1 and "database not found" in missing.stderr


# ----------------------------------------------------------------------------- columnar frames and scale


def flat_report(report) -> dict:
    """Every table and number of a report, by a dotted path (for comparing two reports)."""
    import dataclasses

    out = {}

    def walk(obj, path):
        if dataclasses.is_dataclass(obj):
            for f in dataclasses.fields(obj):
                walk(getattr(obj, f.name), f"{path}.{f.name}")
        elif isinstance(obj, list):
            for i, x in enumerate(obj):
                walk(x, f"{path}[{i}]")
        else:
            out[path] = obj

    walk(report, "")
    return out


def test_columnar_frames_give_the_same_report_as_plain_frames(filled_db: Path) -> None:
    """load_frames' categoricals (integer codes) and the plain string frames of load_frames(full=True)
    must give the same numbers: the analysis codes plain columns itself."""
    from evalkit.store import open_store

    store = open_store(filled_db)
    columnar, plain = load_frames(store), load_frames(store, full=True)
    store.close()
    assert isinstance(columnar.evaluations["review_source"].dtype, pd.CategoricalDtype)
    assert "detail" not in columnar.evaluations and "detail" in plain.evaluations
    for options in (Options(), Options(completed_only=True, familiarity_weighted=True, fast_ms=4000)):
        a, b = flat_report(analyse(columnar, options)), flat_report(analyse(plain, options))
        assert a.keys() == b.keys()
        for key in a:
            x, y = a[key], b[key]
            if isinstance(x, pd.DataFrame):
                pd.testing.assert_frame_equal(x.astype(object), y.astype(object), check_exact=False, rtol=1e-12,
                                              obj=key)
            elif isinstance(x, float):  # the same sums, possibly in another order
                assert (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12), key
            else:
                assert x == y, key


def test_majority_agreement_leaves_out_every_own_pick_on_the_slot() -> None:
    ses = sessions_frame(("e1", "active", False), ("e2", "active", False), ("e3", "active", False))
    rows = [ev_row(1, "e1", "t", 0, "A", "r", 0), ev_row(2, "e1", "t", 1, "A", "r", 0),
            ev_row(3, "e1", "t", 2, "A", "r", 0), ev_row(4, "e2", "t", 0, "A", "g", 0),
            ev_row(5, "e3", "t", 0, "A", "h", 0)]
    q = quality_signals(ses, pd.DataFrame(rows, columns=EVALUATION_COLUMNS), pd.DataFrame(columns=RATING_COLUMNS))
    q = q.set_index("session_id")["majority_agreement"]
    # e1's others: g, h -> a tie, skipped (leaving out only one own pick would let e1 agree with itself: r, r, g, h)
    assert math.isnan(q["e1"])
    assert q["e2"] == 0.0 and q["e3"] == 0.0  # their others: r r r (+ h or g): the majority is r


def test_pairwise_leaves_out_answers_that_compare_nothing() -> None:
    rows = pd.DataFrame([
        ev_row(1, "e1", "p", 0, "A", "x", 0, left="x", right="y", kind="pairwise"),
        ev_row(2, "e1", "p", 1, "A", "x", 1, left="x", right=None, kind="pairwise"),   # one source missing
        ev_row(3, "e2", "p", 0, "B", "x", 0, left="x", right="x", kind="pairwise"),    # the same source twice
        ev_row(4, "e2", "p", 1, "B", "y", 1, left="x", right="y", kind="pairwise"),
    ], columns=EVALUATION_COLUMNS)
    res = pairwise_results(rows, PAIRS)
    assert list(res.win_rates["pair"].unique()) == ["x vs y"] and (res.win_rates["n"] == 2).all()
    assert len(res.records) == 2 and res.n_answers == 4
    assert res.wins.loc["x", "y"] == 1 and res.wins.loc["y", "x"] == 1


def test_alpha_over_stacked_item_columns_equals_the_evaluator_by_item_table() -> None:
    """rating_results hands krippendorff each item's values stacked in a column, not evaluators x items:
    the same alpha as the full table (and the first score of a repeated item counts once)."""
    import numpy as np

    rng = np.random.default_rng(5)
    rows, i = [], 0
    for s in range(40):
        for q, item in enumerate(rng.choice(12, size=4, replace=False)):
            i += 1
            rows.append({"id": i, "session_id": f"s{s}", "task": "n", "question_index": q, "item_id": f"i{item}",
                         "metric": "q", "score": int(rng.integers(1, 6)), "comment": "", "time_spent_ms": 1,
                         "created_at": ""})
    rows.append({**rows[0], "id": 999, "question_index": 9, "score": 1})  # s0 rates its first item again
    frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
    table = frame.drop_duplicates(["session_id", "item_id"]).pivot(index="session_id", columns="item_id",
                                                                    values="score")
    expected = stats.krippendorff_alpha(table.to_numpy(dtype=float), "ordinal")
    agree = rating_results(frame, RATING).agreement.iloc[0]
    assert agree["alpha"] == pytest.approx(expected, rel=1e-12)
    assert agree["items"] == 12 and agree["raters"] == 40


def test_timeline_is_thinned_and_cumulative() -> None:
    from evalkit.analysis import answer_time_bins, timeline

    ses = sessions_frame(("e1", "completed", True), ("e2", "active", False), ("e3", "active", False))
    answers = pd.DataFrame({"created_at": [f"2026-01-01T00:{m // 60:02d}:{m % 60:02d}Z" for m in range(1000)],
                            "time_spent_ms": [500.0 * (k % 20) for k in range(999)] + [math.nan]})
    line = timeline(ses, answers, max_points=50)
    got = line[line["series"] == "answers"]
    assert len(got) <= 50 and got["count"].iloc[0] == 1 and got["count"].iloc[-1] == 1000
    assert got["count"].is_monotonic_increasing and got["time"].is_monotonic_increasing
    assert line[line["series"] == "evaluators started"]["count"].tolist() == [1, 2, 3]
    assert line[line["series"] == "evaluators completed"]["count"].tolist() == [1]
    bins = answer_time_bins(answers, fast_ms=2000)
    assert bins["count"].sum() == 999 and len(bins) == 40  # the NaN time is left out
    assert bins["start"].iloc[0] == 0 and bins["end"].iloc[-1] == pytest.approx(9.5)  # clipped at the 99th pct
    assert answer_time_bins(answers.iloc[:0], 2000).empty


def test_csv_export_needs_every_column(filled_db: Path) -> None:
    from evalkit.store import open_store

    store = open_store(filled_db)
    with pytest.raises(ValueError, match=r"full=True"):
        evaluations_csv(load_frames(store))
    assert evaluations_csv(load_frames(store, full=True)).startswith("evaluatorName,sessionId")
    store.close()


# ----------------------------------------------------------------------------- issue #10: results and exports


def test_rated_items_count_what_the_label_says() -> None:
    """Five ratings of two papers are "5 ratings of 2 items", not "5 rated items"."""
    report = analyse(frames_for_report())
    assert (report.n_ratings, report.n_rated_items) == (5, 2)
    assert (report.ratings[0].n_item_ratings, report.ratings[0].n_items) == (5, 2)
    md = markdown_report(report)
    assert "5 ratings of 2 items" in md and "rated items" not in md
    assert "(`n`, rating): 5 ratings of 2 items" in md


def test_krippendorff_alpha_says_why_it_is_undefined() -> None:
    frame = rating_frame()
    single = frame[frame["session_id"] == "e1"]  # every item rated by one evaluator only
    agree = rating_results(single, RATING).agreement.iloc[0]
    assert math.isnan(agree["alpha"]) and agree["note"] == "needs items rated by two or more evaluators"
    same = frame.assign(score=frame["score"].where(frame["metric"] != "q", 4))  # no variation at all
    assert "no variation" in rating_results(same, RATING).agreement.iloc[0]["note"]
    assert rating_results(frame.iloc[:0], RATING).agreement.iloc[0]["note"] == "no scores yet"
    assert rating_results(frame, RATING).agreement.iloc[0]["note"] == ""  # defined: no note
    frames = frames_for_report()
    frames.ratings = single
    md = markdown_report(analyse(frames))
    assert "| Quality | – (needs items rated by two or more evaluators) | 0 | 0 |" in md


def test_the_comment_row_is_never_a_metric() -> None:
    """The store keeps the general comment as a row with metric "comment"; even with a score (as an older
    writer or a hand edit could leave it) and with no metric list to go by, it is not a metric."""
    frame = rating_frame()
    frame.loc[frame["metric"] == "comment", "score"] = 1.0
    res = rating_results(frame, {"id": "n", "kind": "rating", "title": "Rate"})  # metrics only from the data
    assert list(res.mos["metric"]) == ["q"] and set(res.distribution["metric"]) == {"q"}
    assert res.mos.iloc[0]["n"] == 5 and res.n_item_ratings == 5


def test_fleiss_kappa_says_what_it_measures_under_per_evaluator_selection() -> None:
    per = triplet_results(triplet_rows(), TRIPLET)
    assert "different texts" in per.kappa_note and "shared" in per.kappa_note
    assert triplet_results(triplet_rows(), {**TRIPLET, "selection": "shared"}).kappa_note == ""
    md = markdown_report(analyse(frames_for_report()))
    assert per.kappa_note in md


def test_headings_do_not_double_punctuation() -> None:
    frames = frames_for_report()
    frames.studies["v"]["tasks"][1] = {**PAIRS, "title": "Which sounds more natural?"}
    frames.studies["v"]["tasks"][0] = {**TRIPLET, "title": "Spot it:"}
    report = analyse(frames)
    sections = set(main_results(report)["section"])
    assert "Which sounds more natural? Win rate (vs 50%)" in sections
    assert "Spot it: picked as r (chance 33.3%)" in sections
    for text in (results_csv(report), latex_table(report)):
        assert "?:" not in text and "::" not in text and "Which sounds more natural? Win rate" in text


def test_results_csv_writes_counts_as_integers() -> None:
    text = results_csv(analyse(frames_for_report()))
    back = pd.read_csv(io.StringIO(text))
    assert back["n"].dropna().map(float.is_integer).all()
    for line in text.splitlines()[1:]:
        row = next(__import__("csv").reader([line]))
        n = row[list(back.columns).index("n")]
        assert n == "" or n.isdigit(), line  # "6", never "6.0"
    assert back[back["section"].str.startswith("Bradley")]["n"].isna().all()


def test_ratings_csv_puts_comments_in_columns_and_scores_as_integers() -> None:
    frames = frames_for_report()
    frames.ratings.loc[frames.ratings["metric"] == "q", "comment"] = "on q"
    text = ratings_csv(frames)
    rt = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert "comment" not in set(rt["metric"]) and (rt["score"] != "").all()
    assert list(rt.columns) == ["evaluatorName", "sessionId", "task", "questionIndex", "itemId", "metric", "score",
                                "metricComment", "itemComment", "timeSpentMs", "createdAt", "externalId",
                                "sessionStatus"]
    assert (rt["itemComment"] == "text").all()  # every rated item of rating_frame has the general comment "text"
    assert set(rt.loc[rt["metric"] == "q", "metricComment"]) == {"on q"}
    assert rt["score"].dtype.kind == "i" and len(rt) == 10
    assert ",4.0," not in text and ",9000.0," not in text
    ev = evaluations_csv(frames)
    assert ",5000.0," not in ev and pd.read_csv(io.StringIO(ev))["timeSpentMs"].dtype.kind == "i"


def test_every_csv_neutralises_formulas_and_control_characters() -> None:
    frames = frames_for_report()
    evil_name, evil_id = '=HYPERLINK("http://x","click")', "@SUM(1+1)"
    frames.sessions.loc[frames.sessions["session_id"] == "e1", ["evaluator_name", "external_id"]] = [
        evil_name + "\x1b[2J\x00", evil_id]
    frames.ratings.loc[frames.ratings["metric"] == "comment", "comment"] = "+cmd|' /C calc'!A0\u202e"
    frames.studies["v"]["tasks"][2] = {**RATING, "metrics": [{"id": "q", "label": "-Quality", "scale": 5}]}
    frames.evaluations.loc[frames.evaluations["session_id"] == "e1", "response"] = "-40"  # a slider value
    ev = pd.read_csv(io.StringIO(evaluations_csv(frames)), keep_default_na=False)
    mine = ev[ev["sessionId"] == "e1"]
    assert set(mine["evaluatorName"]) == {"'" + evil_name + "[2J"}  # ESC and NUL removed, the formula defused
    assert set(mine["externalId"]) == {"'" + evil_id}
    assert set(mine["response"].astype(str)) == {"-40"}  # a plain number stays a number, unprefixed
    rt_text = ratings_csv(frames)
    rt = pd.read_csv(io.StringIO(rt_text), keep_default_na=False)
    assert set(rt["itemComment"]) == {"'+cmd|' /C calc'!A0"}
    res = results_csv(analyse(frames))
    assert "'-Quality" in res and ",-Quality" not in res
    for text in (evaluations_csv(frames), rt_text, res):
        assert not any(ch in text for ch in "\x1b\x00\u202e")
        for line in text.splitlines():
            for cell in next(__import__("csv").reader([line])):
                try:
                    float(cell)  # numbers (-40, -0.33, -inf) are left as they are
                except ValueError:
                    assert not cell.startswith(("=", "@", "+", "-", "\t")), cell


def test_bradley_terry_intervals_in_the_report_csv_latex_and_markdown() -> None:
    report = analyse(frames_for_report())
    bt = report.bradley_terry_all.set_index("source")
    assert {"low", "high"} <= set(bt.columns)
    for source, row in bt.iterrows():
        assert row["low"] <= row["log_strength"] <= row["high"], source
    assert bt.loc["z", "low"] == -math.inf  # z never wins: in every resample that compares it
    again = analyse(frames_for_report())  # seeded: the same data give the same intervals
    pd.testing.assert_frame_equal(again.bradley_terry_all, report.bradley_terry_all)
    table = main_results(report)
    rows = table[table["section"] == "Bradley–Terry log-strength (all pairs)"].set_index("label")
    assert rows.loc["x", "low"] == bt.loc["x", "low"] and rows.loc["x", "interval"].startswith("bootstrap")
    latex = latex_table(report)
    assert "bootstrap" in latex and "z &  &  & $-\\infty$ & [$-\\infty$, $-\\infty$] &" in latex
    assert "percentile bootstrap" in markdown_report(report)


def test_bradley_terry_over_all_pairs_with_one_evaluator_has_no_interval() -> None:
    """One evaluator: the bootstrap resamples evaluators, so there is no interval (not a zero-width one), and the
    note says why; with three there are intervals and no such note."""
    from evalkit.analysis import all_pairs

    one = all_pairs([pairwise_results(pair_rows().assign(session_id="e1"), PAIRS)], Options())
    assert one.n_evaluators == 1 and one.bradley_terry[["low", "high"]].isna().all().all()
    for block in one.blocks():
        assert "no interval until a second one" in block.note
        assert (block.table["95% CI"] == "–").all()
    rows = [r for r in one.main_rows() if r["label"] == "x"]
    assert math.isnan(rows[0]["low"]) and math.isnan(rows[0]["high"])
    three = all_pairs([pairwise_results(pair_rows(), PAIRS)], Options())
    assert three.n_evaluators == 3 and "no interval until" not in three.blocks()[0].note
    assert three.bradley_terry.set_index("source").loc["x", ["low", "high"]].notna().all()


def test_rating_intervals_are_clipped_to_the_scale_everywhere() -> None:
    report = analyse(frames_for_report())
    mos = report.ratings[0].mos.iloc[0]
    assert mos["high"] == 5 and bool(mos["clipped"])
    table = main_results(report)
    row = table[table["label"] == "Quality"].iloc[0]
    assert row["high"] == 5 and row["interval"] == "Student t, clipped to 1–5"
    assert "clipped to the rating scale" in latex_table(report) and "$^\\dagger$" in latex_table(report)
    md = markdown_report(report)
    assert "5.00] †" in md and "clipped to the rating scale (1–5)" in md
    slider = pairwise_results(pd.DataFrame([
        ev_row(i, f"e{i}", "p", 0, "95", None, 0, left="x", right="y", kind="pairwise",
               detail=json.dumps({"button": "accept", "outcome": "right"})) for i in range(1, 4)]
        + [ev_row(9, "e9", "p", 0, "100", None, 0, left="x", right="y", kind="pairwise",
                  detail=json.dumps({"button": "accept", "outcome": "right"}))], columns=EVALUATION_COLUMNS),
        {**PAIRS, "response": "slider"}).slider.iloc[0]
    assert slider["low"] >= -100 and slider["high"] <= 100 and bool(slider["clipped"])


def test_alpha_notes_name_the_metrics() -> None:
    from evalkit.export import alpha_notes

    agree = pd.DataFrame({"label": ["A", "B", "C"], "note": ["needs x", "needs x", ""]})
    assert alpha_notes(agree) == "Alpha is undefined for A and B: needs x."
    assert alpha_notes(agree.assign(note="needs x")) == "Alpha is undefined for every metric: needs x."
    assert alpha_notes(agree.assign(note="")) == ""
    three = pd.DataFrame({"label": ["A", "B", "C", "D"], "note": ["n", "n", "n", ""]})
    assert alpha_notes(three) == "Alpha is undefined for A, B and C: n."


def one_evaluator_pairs() -> Frames:
    """A pairwise-only study (no scores, no ratings) with one evaluator, who completed it."""
    return Frames(sessions=sessions_frame(("e1", "completed", True)),
                  evaluations=pair_rows().query("session_id == 'e1'").reset_index(drop=True),
                  ratings=rating_frame().iloc[:0], studies={"v": {"title": "Pairs", "tasks": [PAIRS]}})


def test_the_latex_caption_counts_in_the_right_number_and_names_only_the_intervals_in_the_table() -> None:
    """One evaluator is "1 evaluator"; a study without scores says nothing of Student-t intervals (nor of
    correlations or medians); each kind of interval is named when the table has rows of it."""
    latex = latex_table(analyse(one_evaluator_pairs()))
    assert "(1 evaluator, 1 completed)." in latex and "1 evaluators" not in latex
    assert "Rates in \\%, 95\\% Wilson intervals, exact binomial tests" in latex
    assert "Bradley--Terry log-strengths with percentile bootstrap intervals" in latex
    for absent in ("Student", "Fisher", "order-statistic", "normal-approximation"):
        assert absent not in latex, absent
    full = latex_table(analyse(frames_for_report()))  # rates, clipped rating means, Bradley–Terry
    assert "(3 evaluators, 2 completed)." in full
    assert ("Rates in \\%, 95\\% Wilson intervals, exact binomial tests;\n  scores with Student-$t$ intervals, "
            "clipped to the rating scale (marked $^\\dagger$);\n  Bradley--Terry log-strengths") in full
    frames = one_evaluator_pairs()
    empty = latex_table(analyse(Frames(frames.sessions.iloc[:0], frames.evaluations.iloc[:0],
                                       frames.ratings, {"v": {"title": "Nothing", "tasks": []}})))
    assert "\\caption{Human evaluation results (0 evaluators, 0 completed).}" in empty  # no rows: no intervals


def test_the_markdown_report_counts_in_the_right_number_and_leaves_out_ratings_it_has_none_of() -> None:
    md = markdown_report(analyse(one_evaluator_pairs()))
    assert "1 evaluator included (1 completed), 2 answers. Options:" in md
    assert "ratings of" not in md.split("##")[0]  # a study without a rating task: no "0 ratings of 0 items"
    assert "3 evaluators included (2 completed), 11 answers, 5 ratings of 2 items." in markdown_report(
        analyse(frames_for_report()))
