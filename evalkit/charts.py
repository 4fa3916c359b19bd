"""Altair charts of a :class:`evalkit.analysis.Report` (no Streamlit here; the page renders them)."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import altair as alt
import pandas as pd

from .analysis import PairwiseResult, RatingResult, Report, TripletResult

__all__ = ["bt_chart", "rating_chart", "report_specs", "selection_chart", "time_histogram", "timeline_chart",
           "to_spec", "win_rate_chart"]

BLUE, GREY, RED = "#2457a6", "#6b7280", "#c2410c"


def _interval_bars(frame: pd.DataFrame, y: str, chance: float, title: str, x_title: str) -> alt.Chart:
    base = alt.Chart(frame).encode(y=alt.Y(f"{y}:N", sort=None, title=None))
    bars = base.mark_bar(color=BLUE, opacity=0.8).encode(
        x=alt.X("rate:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"), title=x_title),
        tooltip=[alt.Tooltip(f"{y}:N"), alt.Tooltip("rate:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%"),
                 alt.Tooltip("high:Q", format=".1%"), alt.Tooltip("n:Q"), alt.Tooltip("p_value:Q", format=".3g")])
    errors = base.mark_rule(color="#111827", strokeWidth=2).encode(x="low:Q", x2="high:Q")
    rule = alt.Chart(pd.DataFrame({"chance": [chance]})).mark_rule(color=RED, strokeDash=[5, 4]).encode(
        x="chance:Q", tooltip=[alt.Tooltip("chance:Q", format=".1%", title="chance")])
    return (bars + errors + rule).properties(title=title, height=alt.Step(34))


def selection_chart(result: TripletResult) -> alt.Chart:
    """Selection rate per source with Wilson intervals and the chance line (1/k)."""
    k = max(len(result.sources), 2)
    frame = result.selection.dropna(subset=["rate"])
    return _interval_bars(frame, "source", 1 / k, f"{result.title}: picked as {result.target}",
                          "share of questions")


def win_rate_chart(result: PairwiseResult) -> alt.Chart:
    """Win rate of the first source of each pair with Wilson intervals and the 50 % line."""
    frame = result.win_rates.dropna(subset=["rate"]).drop_duplicates("pair").copy()
    other = [b if s == a else a for s, a, b in zip(frame["source"], frame["pair"].str.split(" vs ").str[0],
                                                  frame["pair"].str.split(" vs ").str[1], strict=True)]
    frame["comparison"] = frame["source"] + " over " + pd.Series(other, index=frame.index)
    return _interval_bars(frame, "comparison", 0.5, f"{result.title}: win rates", "win rate (ties excluded)")


def bt_chart(frame: pd.DataFrame, title: str = "Bradley–Terry log-strengths") -> alt.Chart:
    """Finite Bradley–Terry log-strengths as bars (±inf are listed in the table, not drawn)."""
    finite = frame[frame["log_strength"].map(lambda v: math.isfinite(v))]
    return alt.Chart(finite).mark_bar(color=BLUE).encode(
        y=alt.Y("source:N", sort="-x", title=None),
        x=alt.X("log_strength:Q", title="log-strength (centred)"),
        tooltip=[alt.Tooltip("source:N"), alt.Tooltip("log_strength:Q", format=".3f")],
    ).properties(title=title, height=alt.Step(30))


def rating_chart(result: RatingResult) -> alt.Chart:
    """Score distribution per metric (counts of 1..5)."""
    return alt.Chart(result.distribution).mark_bar(color=BLUE).encode(
        x=alt.X("score:O", title="score"),
        y=alt.Y("count:Q", title="ratings"),
        column=alt.Column("label:N", title=None, sort=None),
        tooltip=["label:N", "score:O", "count:Q"],
    ).properties(width=110, height=150, title=f"{result.title}: score distributions")


def timeline_chart(timeline: pd.DataFrame) -> alt.Chart:
    """Cumulative evaluators started, evaluators completed and answers over time (``Report.timeline``)."""
    return alt.Chart(timeline).mark_line(interpolate="step-after", point=False).encode(
        x=alt.X("time:T", title=None), y=alt.Y("count:Q", title="cumulative count"),
        color=alt.Color("series:N", title=None, scale=alt.Scale(range=[BLUE, "#2f7d3b", GREY])),
        tooltip=["series:N", alt.Tooltip("time:T", format="%Y-%m-%d %H:%M:%S"), "count:Q"],
    ).properties(title="Timeline", height=220)


def time_histogram(bins: pd.DataFrame, fast_ms: int) -> alt.Chart:
    """Histogram of seconds per answer (``Report.answer_times``, binned already), fast threshold marked."""
    bars = alt.Chart(bins).mark_bar(color=BLUE).encode(
        x=alt.X("start:Q", title="seconds per question"), x2="end:Q",
        y=alt.Y("count:Q", title="answers"),
        tooltip=[alt.Tooltip("start:Q", format=".1f", title="from (s)"), alt.Tooltip("end:Q", format=".1f",
                                                                                      title="to (s)"), "count:Q"])
    rule = alt.Chart(pd.DataFrame({"fast": [fast_ms / 1000]})).mark_rule(color=RED, strokeDash=[5, 4]).encode(
        x="fast:Q", tooltip=[alt.Tooltip("fast:Q", title="fast threshold (s)")])
    return (bars + rule).properties(title="Time per question", height=200)


def to_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart as a Vega-Lite dict, validated, without Altair's default theme (as ``st.altair_chart`` does)."""
    theme = alt.theme.enable("none") if alt.theme.active == "default" else contextlib.nullcontext()
    with theme:
        return chart.to_dict()


def report_specs(report: Report) -> dict[str, dict[str, Any]]:
    """Every chart of the results page as a Vega-Lite dict, by key (``selection:<task>``, ``wins:<task>``,
    ``bradley_terry``, ``rating:<task>``, ``timeline``, ``answer_times``).

    Building and validating the Altair charts is most of a results-page rerun, so the page builds them
    once per report (cached with it) and renders the dicts; the charts' data are small (pre-aggregated).
    """
    specs = {f"selection:{t.task}": to_spec(selection_chart(t)) for t in report.triplets}
    specs |= {f"wins:{p.task}": to_spec(win_rate_chart(p)) for p in report.pairwise if not p.win_rates.empty}
    if not report.bradley_terry_all.empty:
        specs["bradley_terry"] = to_spec(bt_chart(report.bradley_terry_all))
    specs |= {f"rating:{r.task}": to_spec(rating_chart(r)) for r in report.ratings if not r.distribution.empty}
    if report.n_answers:
        specs["timeline"] = to_spec(timeline_chart(report.timeline))
        specs["answer_times"] = to_spec(time_histogram(report.answer_times, report.options.fast_ms))
    return specs
