"""Altair charts of a :class:`evalkit.analysis.Report` (no Streamlit here; the page renders them).

Floor: app services (``.importlinter``). May import the analysis and the planner, the study's config and checks, the
task kinds and the core; never the queue or the command line.
"""

from __future__ import annotations

import contextlib
from datetime import UTC
from typing import Any

import altair as alt
import pandas as pd

from .analysis import Report
from .display import Zone
from .resultkit import BLUE, GREY, RED, bt_chart, rate_chart

__all__ = ["TIMELINE_DOTS_UP_TO", "TIMELINE_PARTS", "bt_chart", "local_wall_clock", "rate_chart", "report_specs",
           "time_histogram", "timeline_chart", "to_spec"]



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


#: A series of at most this many points gets a dot on each (a single answer, the first evaluators: a step line
#: through one point draws nothing); a longer one is a line alone, its dots would blur into it.
TIMELINE_DOTS_UP_TO = 40


def timeline_chart(timeline: pd.DataFrame, zone: Zone | None = None, part: str = "answers") -> alt.LayerChart:
    """Cumulative answers (``part="answers"``) or evaluators started and completed (``part="evaluators"``)
    over time (``Report.timeline``), in the researcher's time zone (UTC when not given). Both parts share
    the time axis, so drawn one above the other they line up. A step line, with a dot on each point of a series of
    at most :data:`TIMELINE_DOTS_UP_TO` points, so that a single point is seen."""
    zone = zone or Zone(UTC, "UTC")
    series, colours, y_title = TIMELINE_PARTS[part]
    frame = timeline.assign(time=local_wall_clock(timeline["time"], zone))
    x = _time_axis(frame["time"], zone)
    tip = alt.Tooltip("time:T", title=f"time ({zone.label})", format="%d %b %Y %H:%M:%S", formatType="utc")
    rows = frame[frame["series"].isin(series)]
    rows = rows.assign(dot=rows.groupby("series")["series"].transform("size") <= TIMELINE_DOTS_UP_TO)
    line = alt.Chart().mark_line(interpolate="step-after")
    dots = alt.Chart().mark_point(filled=True, size=36, opacity=1).transform_filter("datum.dot")
    return alt.layer(line, dots, data=rows).encode(
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
