"""evalkit.charts: every chart of a report as a Vega-Lite dict, built once, with small data."""

from __future__ import annotations

import altair as alt
import pandas as pd

from evalkit.analysis import EVALUATION_COLUMNS, Frames, analyse
from evalkit.charts import report_specs
from tests.test_analysis import PAIRS, RATING, TRIPLET, ev_row, rating_frame, sessions_frame


def big_frames(n_answers: int) -> Frames:
    """One evaluator's n_answers triplet answers (enough to need thinning) plus the hand-made ratings."""
    rows = [ev_row(i, "e1", "t", i, "A", "rgh"[i % 3], slot=i, ms=500 + 37 * (i % 300)) for i in range(n_answers)]
    ev = pd.DataFrame(rows, columns=EVALUATION_COLUMNS)
    ev["created_at"] = pd.date_range("2026-01-01", periods=n_answers, freq="s").strftime("%Y-%m-%dT%H:%M:%SZ")
    ses = sessions_frame(("e1", "completed", True), ("e2", "active", False), ("e3", "active", False))
    return Frames(sessions=ses, evaluations=ev, ratings=rating_frame(),
                  studies={"v": {"title": "T", "tasks": [TRIPLET, PAIRS, RATING]}})


def test_report_specs_cover_every_chart_with_small_data() -> None:
    report = analyse(big_frames(5000))
    specs = report_specs(report)
    assert set(specs) == {"selection:t", "rating:n", "timeline", "answer_times"}  # no pairwise answer: no BT chart
    for key, spec in specs.items():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), key
        assert "config" not in spec, key  # Altair's default theme left out, as st.altair_chart does
        rows = sum(len(values) for values in spec.get("datasets", {}).values())
        assert 0 < rows <= 3 * 400 + 2, (key, rows)  # 5,000 answers, yet a few hundred points at most
    assert alt.theme.active == "default"  # the theme was switched off only while building


def test_report_specs_of_an_empty_study() -> None:
    frames = big_frames(0)
    specs = report_specs(analyse(Frames(frames.sessions.iloc[:0], frames.evaluations, frames.ratings.iloc[:0],
                                        frames.studies)))
    assert "timeline" not in specs and "answer_times" not in specs and "bradley_terry" not in specs
