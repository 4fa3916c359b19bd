"""Altair charts of a :class:`evalkit.analysis.Report` (no Streamlit here; the page renders them)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from datetime import UTC
from typing import Any

import altair as alt
import pandas as pd

from .analysis import Report
from .display import Zone

__all__ = ["TIMELINE_PARTS", "bt_chart", "local_wall_clock", "rate_chart", "report_specs", "time_histogram",
           "timeline_chart", "to_spec"]

BLUE, GREY, RED = "#2457a6", "#6b7280", "#c2410c"


def rate_chart(frame: pd.DataFrame, y: str, chance: float, title: str, x_title: str) -> alt.Chart:
    """Rates (``rate``, ``low``, ``high``, ``n``, ``p_value`` columns) as bars with their intervals, one bar per
    value of ``y``, and a dashed line at ``chance``: the chart of every rate table."""
    base = alt.Chart(frame).encode(y=alt.Y(f"{y}:N", sort=None, title=None, axis=alt.Axis(labelLimit=200)))
    bars = base.mark_bar(color=BLUE, opacity=0.8).encode(
        x=alt.X("rate:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"), title=x_title),
        tooltip=[alt.Tooltip(f"{y}:N"), alt.Tooltip("rate:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%"),
                 alt.Tooltip("high:Q", format=".1%"), alt.Tooltip("n:Q"), alt.Tooltip("p_value:Q", format=".3g")])
    errors = base.mark_rule(color="#111827", strokeWidth=2).encode(x="low:Q", x2="high:Q")
    rule = alt.Chart(pd.DataFrame({"chance": [chance]})).mark_rule(color=RED, strokeDash=[5, 4]).encode(
        x="chance:Q", tooltip=[alt.Tooltip("chance:Q", format=".1%", title="chance")])
    return (bars + errors + rule).properties(title=title, height=alt.Step(34))


def bt_chart(frame: pd.DataFrame, title: str = "Bradley–Terry log-strengths",
             order: Sequence[str] | None = None) -> alt.Chart:
    """Finite Bradley–Terry log-strengths as bars with their bootstrap intervals where the frame has them
    (``low`` / ``high``; an infinite end is drawn to the edge of the finite values). ±inf strengths are
    listed in the table, not drawn. ``order``: the sources top to bottom (a task's systems in the config's
    order, as in its tables); without it, strongest first."""
    finite = frame[frame["log_strength"].map(lambda v: math.isfinite(v))].copy()
    sort: Any = list(order) if order is not None else "-x"
    base = alt.Chart(finite).encode(y=alt.Y("source:N", sort=sort, title=None))
    tooltip = [alt.Tooltip("source:N"), alt.Tooltip("log_strength:Q", format=".3f")]
    layers = []
    if {"low", "high"} <= set(finite.columns) and not finite.empty:
        ends = pd.concat([finite["log_strength"], finite["low"], finite["high"]])
        ends = ends[ends.map(math.isfinite)]
        lo, hi = float(ends.min()), float(ends.max())
        finite["low_drawn"] = finite["low"].clip(lower=lo).fillna(finite["log_strength"])
        finite["high_drawn"] = finite["high"].clip(upper=hi).fillna(finite["log_strength"])
        base = alt.Chart(finite).encode(y=alt.Y("source:N", sort=sort, title=None))
        tooltip += [alt.Tooltip("low:Q", format=".3f", title="95% low"),
                    alt.Tooltip("high:Q", format=".3f", title="95% high")]
        layers.append(base.mark_rule(color="#111827", strokeWidth=2).encode(x="low_drawn:Q", x2="high_drawn:Q"))
    bars = base.mark_bar(color=BLUE, opacity=0.8).encode(x=alt.X("log_strength:Q", title="log-strength (centred)"),
                                                         tooltip=tooltip)
    return alt.layer(bars, *layers).properties(title=title, height=alt.Step(30))


def local_wall_clock(times: pd.Series, zone: Zone) -> pd.Series:
    """UTC instants as the wall-clock time of ``zone``, marked UTC: drawn on a UTC scale, the chart shows the
    researcher's local time whatever the time zone of the browser that renders it."""
    aware = pd.to_datetime(times, utc=True)
    return aware.dt.tz_convert(zone.tz).dt.tz_localize(None).dt.tz_localize("UTC")


def _time_axis(times: pd.Series, zone: Zone) -> alt.X:
    """A readable time axis (day, month, hours and minutes; no milliseconds), at least ten minutes wide."""
    start, end = times.min(), times.max()
    if pd.isna(start):
        start = end = pd.Timestamp.now(tz="UTC")
    if end - start < pd.Timedelta(minutes=10):
        middle = start + (end - start) / 2
        start, end = middle - pd.Timedelta(minutes=5), middle + pd.Timedelta(minutes=5)
    domain = [alt.DateTime(year=t.year, month=t.month, date=t.day, hours=t.hour, minutes=t.minute,
                           seconds=t.second, utc=True) for t in (start, end)]
    return alt.X("time:T", title=None, scale=alt.Scale(type="utc", domain=domain),
                 axis=alt.Axis(labelExpr="utcFormat(datum.value, '%d %b %H:%M')", labelOverlap=True,
                               labelAngle=0))


#: The timeline's two charts: answers on one, evaluators (far fewer) on another, each with its own y axis.
TIMELINE_PARTS = {"answers": (["answers"], [BLUE], "answers"),
                  "evaluators": (["evaluators started", "evaluators completed"], [GREY, "#2f7d3b"], "evaluators")}


def timeline_chart(timeline: pd.DataFrame, zone: Zone | None = None, part: str = "answers") -> alt.Chart:
    """Cumulative answers (``part="answers"``) or evaluators started and completed (``part="evaluators"``)
    over time (``Report.timeline``), in the researcher's time zone (UTC when not given). Both parts share
    the time axis, so drawn one above the other they line up."""
    zone = zone or Zone(UTC, "UTC")
    series, colours, y_title = TIMELINE_PARTS[part]
    frame = timeline.assign(time=local_wall_clock(timeline["time"], zone))
    x = _time_axis(frame["time"], zone)
    tip = alt.Tooltip("time:T", title=f"time ({zone.label})", format="%d %b %Y %H:%M:%S", formatType="utc")
    rows = frame[frame["series"].isin(series)]
    return alt.Chart(rows).mark_line(interpolate="step-after", point=False).encode(
        x=x, y=alt.Y("count:Q", title=y_title, axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=series, range=colours),
                        legend=None if len(series) == 1 else alt.Legend(orient="top")),
        tooltip=["series:N", tip, "count:Q"],
    ).properties(title=alt.TitleParams(f"{part.capitalize()} over time (cumulative)",
                                       subtitle=f"time zone: {zone.label}", anchor="start"), height=220)


def time_histogram(bins: pd.DataFrame, fast_ms: int) -> alt.Chart:
    """Histogram of seconds per answer (``Report.answer_times``, binned already), fast threshold marked."""
    bars = alt.Chart(bins).mark_bar(color=BLUE, binSpacing=1).encode(
        x=alt.X("start:Q", title="seconds per question"), x2="end:Q",
        y=alt.Y("count:Q", title="answers", axis=alt.Axis(tickMinStep=1)), y2=alt.datum(0),  # bars from zero
        tooltip=[alt.Tooltip("start:Q", format=".1f", title="from (s)"), alt.Tooltip("end:Q", format=".1f",
                                                                                      title="to (s)"), "count:Q"])
    rule = alt.Chart(pd.DataFrame({"fast": [fast_ms / 1000]})).mark_rule(color=RED, strokeDash=[5, 4]).encode(
        x="fast:Q", tooltip=[alt.Tooltip("fast:Q", title="fast threshold (s)")])
    return (bars + rule).properties(title="Time per question", height=220)


def to_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart as a Vega-Lite dict, validated, without Altair's default theme (as ``st.altair_chart`` does)."""
    theme = alt.theme.enable("none") if alt.theme.active == "default" else contextlib.nullcontext()
    with theme:
        return chart.to_dict()


def report_specs(report: Report, zone: Zone | None = None) -> dict[str, dict[str, Any]]:
    """Every chart of the results page as a Vega-Lite dict, by key: each task's charts, from its result's
    ``charts()`` (``<name>:<task>``: ``selection:<task>``, ``wins:<task>``, ``rating:<task>``,
    ``compare_wins:<task>``, ...), the Bradley–Terry over all pairwise tasks (``bradley_terry``), and
    ``timeline``, ``timeline_evaluators``, ``answer_times``; times in ``zone`` (default UTC).

    Building and validating the Altair charts is most of a results-page rerun, so the page builds them
    once per report (cached with it) and renders the dicts; the charts' data are small (pre-aggregated).
    """
    specs = {key: to_spec(chart) for r in report.sections() for key, chart in r.charts().items()}
    if report.n_answers:
        specs["timeline"] = to_spec(timeline_chart(report.timeline, zone, "answers"))
        specs["timeline_evaluators"] = to_spec(timeline_chart(report.timeline, zone, "evaluators"))
        specs["answer_times"] = to_spec(time_histogram(report.answer_times, report.options.fast_ms))
    return specs
