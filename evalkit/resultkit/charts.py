"""The Altair charts every kind's analysis draws: rates with their intervals against chance (:func:`rate_chart`)
and Bradley–Terry log-strengths with their bootstrap intervals (:func:`bt_chart`); the palette.

May import Altair (inside the functions: a report that draws no chart never loads it) and pandas; nothing from
evalkit. (No Streamlit: the page renders the charts.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    import altair as alt

__all__ = ["BLUE", "GREY", "RED", "bt_chart", "rate_chart"]

BLUE, GREY, RED = "#2457a6", "#6b7280", "#c2410c"


def rate_chart(frame: pd.DataFrame, y: str, chance: float, title: str, x_title: str) -> alt.Chart:
    """Rates (``rate``, ``low``, ``high``, ``n``, ``p_value`` columns) as bars with their intervals, one bar per
    value of ``y``, and a dashed line at ``chance``: the chart of every rate table."""
    import altair as alt  # (Altair is imported when a chart is drawn: a report without charts never loads it)

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
    import altair as alt

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
