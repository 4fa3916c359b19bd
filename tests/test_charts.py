"""evalkit.charts: every chart of a report as a Vega-Lite dict, built once, with small data."""

from __future__ import annotations

import altair as alt
import pandas as pd

from evalkit.analysis import EVALUATION_COLUMNS, Frames, analyse, timeline
from evalkit.charts import bt_chart, report_specs, time_histogram, timeline_chart, to_spec
from evalkit.display import resolve_zone
from evalkit.tasks.rating_analysis import RatingResult, rating_chart
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
    assert set(specs) == {"selection:t", "rating:n", "timeline", "timeline_evaluators", "answer_times"}  # no BT
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


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_time_histogram_draws_bars_from_zero() -> None:
    bins = pd.DataFrame({"start": [0.0, 1.0, 2.0], "end": [1.0, 2.0, 3.0], "count": [4, 0, 7]})
    spec = to_spec(time_histogram(bins, 1500))
    [bars] = [layer for layer in _layers(spec) if layer["mark"]["type"] == "bar"]
    enc = bars["encoding"]
    # x and x2 give each bin its width; without y2 Vega-Lite draws a ranged bar as a dash at its count
    assert enc["x"]["field"] == "start" and enc["x2"]["field"] == "end"
    assert enc["y"]["field"] == "count" and enc["y2"] == {"datum": 0}


def _rating_result() -> RatingResult:
    """A rubric whose order (Zeta, then Alpha) is not alphabetical."""
    dist = pd.DataFrame([{"metric": m, "label": lab, "score": v, "count": v % 3} for m, lab in
                         (("z", "Zeta"), ("a", "Alpha")) for v in range(1, 6)])
    empty = pd.DataFrame()
    return RatingResult(task="n", title="Rate", mos=empty, distribution=dist, agreement=empty, n_item_ratings=3,
                        n_items=3)


def test_rating_distributions_follow_the_rubric_with_horizontal_labels() -> None:
    spec = to_spec(rating_chart(_rating_result()))
    assert spec["encoding"]["facet"]["sort"] == ["Zeta", "Alpha"]  # rubric order, not alphabetical
    assert spec["encoding"]["facet"]["columns"] == 2  # two panels a row: four metrics fit a phone's screen
    assert spec["encoding"]["x"]["axis"]["labelAngle"] == 0


def test_timeline_puts_evaluators_and_answers_on_separate_axes() -> None:
    frames = big_frames(50)
    tl = timeline(frames.sessions, frames.evaluations)
    answers = to_spec(timeline_chart(tl, part="answers"))
    people = to_spec(timeline_chart(tl, part="evaluators"))
    series = {name: {row["series"] for values in s["datasets"].values() for row in values}
              for name, s in (("answers", answers), ("people", people))}
    assert series == {"answers": {"answers"}, "people": {"evaluators started", "evaluators completed"}}
    ys = {name: max(row["count"] for values in s["datasets"].values() for row in values)
          for name, s in (("answers", answers), ("people", people))}
    assert ys == {"answers": 50, "people": 3}  # so 3 evaluators no longer sit at the foot of a 50-answer axis


def test_timeline_shows_readable_local_time() -> None:
    tl = pd.DataFrame({"time": pd.to_datetime(["2026-01-01T10:00:00.123Z", "2026-01-01T12:30:00Z"], utc=True,
                                                format="ISO8601"),
                       "count": [1, 2], "series": "answers"})
    spec = to_spec(timeline_chart(tl, resolve_zone("Europe/Berlin"), "answers"))
    [values] = spec["datasets"].values()
    assert [v["time"] for v in values] == ["2026-01-01T11:00:00.123000+00:00", "2026-01-01T13:30:00+00:00"]  # UTC+1
    x = spec["encoding"]["x"]
    assert spec["title"]["subtitle"] == "time zone: Europe/Berlin" and x["scale"]["type"] == "utc"  # any browser
    assert "%H:%M" in x["axis"]["labelExpr"] and "%L" not in x["axis"]["labelExpr"]  # no milliseconds
    utc = to_spec(timeline_chart(tl, None, "answers"))
    assert utc["title"]["subtitle"] == "time zone: UTC"
    assert next(iter(utc["datasets"].values()))[0]["time"].startswith("2026-01-01T10:00:00")


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_chart_titles_do_not_double_punctuation() -> None:
    result = RatingResult(task="n", title="Is it novel?", mos=pd.DataFrame(), agreement=pd.DataFrame(),
                          distribution=pd.DataFrame([{"metric": "a", "label": "A", "score": 1, "count": 2}]),
                          n_item_ratings=1, n_items=1)
    title = to_spec(rating_chart(result))["title"]
    assert title == "Is it novel? Score distributions" and "?:" not in title


def test_bradley_terry_chart_draws_the_bootstrap_intervals() -> None:
    frame = pd.DataFrame({"source": ["a", "b", "c"], "log_strength": [0.5, -0.2, -0.3],
                          "low": [0.1, -0.9, float("-inf")], "high": [1.2, 0.3, 0.4]})
    spec = to_spec(bt_chart(frame))
    rules = [layer for layer in _layers(spec) if layer["mark"]["type"] == "rule"]
    assert len(rules) == 1 and rules[0]["encoding"]["x2"]["field"] == "high_drawn"
    [values] = spec["datasets"].values()
    drawn = {row["source"]: (row["low_drawn"], row["high_drawn"]) for row in values}
    assert drawn["a"] == (0.1, 1.2) and drawn["c"][0] == -0.9  # -inf drawn to the edge of the finite values
    plain = to_spec(bt_chart(frame[["source", "log_strength"]]))  # no intervals: bars only
    assert all(layer["mark"]["type"] == "bar" for layer in _layers(plain))


def test_a_single_point_of_the_timeline_is_drawn() -> None:
    """One answer, one evaluator started (and completed): a step line through one point draws nothing, so each
    point of a short series is drawn as a dot too; a long series is a line alone."""
    one = pd.DataFrame({"time": pd.to_datetime(["2026-01-01T10:00:00Z", "2026-01-01T10:00:05Z",
                                                "2026-01-01T10:20:00Z"], utc=True),
                        "count": [1, 1, 1], "series": ["evaluators started", "answers", "evaluators completed"]})
    for part, series in (("answers", {"answers"}), ("evaluators", {"evaluators started", "evaluators completed"})):
        spec = to_spec(timeline_chart(one, part=part))
        marks = {layer["mark"]["type"]: layer for layer in _layers(spec)}
        assert set(marks) == {"line", "point"}, part
        assert marks["point"]["mark"]["filled"] and marks["point"]["transform"] == [{"filter": "datum.dot"}]
        [values] = spec["datasets"].values()
        assert {v["series"] for v in values if v["dot"]} == series, part  # every single point has its dot
        assert spec["encoding"]["color"]["field"] == "series"  # the dots take their line's colour
    frames = big_frames(500)
    long = to_spec(timeline_chart(timeline(frames.sessions, frames.evaluations), part="answers"))
    [values] = long["datasets"].values()
    assert len(values) > 40 and not any(v["dot"] for v in values)
