"""Analysis of ``pairwise`` tasks (:mod:`evalkit.tasks.pairwise`): which of two texts from two sources is better,
by a forced choice or the HELP slider.

Win rates per pair of sources with Wilson intervals and exact tests against 50 % (ties left out of n), slider
summaries, the judgments still needed for significance, and the task's own Bradley–Terry strengths. The
Bradley–Terry over *all* pairwise tasks, with its bootstrap intervals, is a study-level statistic across
tasks: :func:`evalkit.analysis.analyse` computes it from these results (:class:`evalkit.analysis.AllPairsResult`).
Imported only when a report is made (through :func:`evalkit.tasks.results`); compare tasks
(:mod:`evalkit.tasks.compare_analysis`) count their answers with :func:`pairwise_results` too.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..resultkit import (
    Block,
    ResultDefaults,
    TaskContext,
    bt_frame,
    bt_table,
    code_of,
    column_codes,
    float_column,
    fmt_ci,
    fmt_num,
    fmt_pct,
    interval_row,
    rate_table,
    recode_column,
    slider_buttons,
)
from ..text import join_title
from .items_analysis import count_text

__all__ = ["PairwiseResult", "pairwise_results", "results", "win_rate_chart", "win_rate_rows"]

LEFT, RIGHT, TIE = 0, 1, 2


@dataclass
class PairwiseResult(ResultDefaults):
    """Everything about one pairwise task."""

    task: str
    title: str
    response: str
    win_rates: pd.DataFrame  # pair, source, wins, ties, n, rate, low, high, p_value
    slider: pd.DataFrame  # pair, favoured (positive = this source better), mean, low, high, sd, n, draws
    power: pd.DataFrame  # pair, source, rate, n, needed_total, further
    bradley_terry: pd.DataFrame  # source, log_strength
    records: pd.DataFrame  # a, b, outcome ("a" / "b" / "tie"): the comparisons Bradley–Terry is fitted on
    wins: pd.DataFrame  # the win matrix of those comparisons (ties as half a win each), sources x sources
    evaluator_wins: pd.DataFrame  # session_id, winner, loser, wins: the same per evaluator (for the bootstrap)
    n_answers: int
    kind: str = "pairwise"

    def describe(self) -> str:
        return f"pairwise, {self.response}"

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's)."""
        return f"{self.title} · pairwise ({self.response})", f"{self.title} (`{self.task}`, pairwise, {self.response})"

    def blocks(self) -> list[Block]:
        out = [Block("Win rates (ties excluded from n)",
                     rate_table(self.win_rates, ["pair", "source", "wins", "ties", "n"]),
                     chart=f"wins:{self.task}" if not self.win_rates.empty else "", page_heading="")]
        if not self.slider.empty:
            s = self.slider
            mean = s["mean"].map(lambda v: fmt_num(v, 1))
            columns = ["pair", "favoured", "mean", "95% CI", "n", "positive_draws", "negative_draws"]
            out += [Block("", s.assign(mean=mean, **{"95% CI": [
                fmt_ci(a, b, pct=False) + (" †" if cut else "")
                for a, b, cut in zip(s["low"], s["high"], s["clipped"], strict=True)]})[columns],
                "† t interval clipped to the slider's range, -100..100." if s["clipped"].any() else "",
                page_heading="**Slider** (positive = the favoured source better)", shown="page"),
                Block("Slider (positive = the favoured source better, -100..100)", s.assign(mean=mean, **{
                    "95% CI": [fmt_ci(a, b, pct=False) for a, b in zip(s["low"], s["high"], strict=True)]})[columns],
                    shown="report")]
        pw = self.power
        out += [
            Block("", pw.assign(rate=pw["rate"].map(fmt_pct), needed_total=pw["needed_total"].map(count_text),
                                further=pw["further"].map(count_text)),
                  page_heading="**Power**: judgments needed per comparison (alpha .05, power .8) at the current effect",
                  shown="page"),
            Block("Power (judgments per comparison for alpha .05, power .8 at the current effect)",
                  pw.assign(rate=pw["rate"].map(fmt_pct)), shown="report"),
            Block("Bradley–Terry log-strengths of this task (intervals: see the table over all pairwise tasks)",
                  bt_table(self.bradley_terry[["source", "log_strength"]], 2), shown="report")]
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        return win_rate_rows(self.title, self.win_rates)

    def charts(self) -> dict[str, Any]:
        return {f"wins:{self.task}": win_rate_chart(self)} if not self.win_rates.empty else {}


def win_rate_rows(title: str, win_rates: pd.DataFrame, who: str = "source") -> list[dict[str, Any]]:
    """Headline rows of a win-rate table (:func:`evalkit.export.main_results`): per pair, the win rate of its
    first ``who`` (source or system) against 50 %, with its Wilson interval."""
    rows = []
    for pair, group in win_rates.groupby("pair", sort=False):
        first = group.iloc[0]
        rows.append({"section": join_title(title, "win rate (vs 50%)"), "label": pair, "detail": first[who],
                     "value": first["rate"], "low": first["low"], "high": first["high"], "p_value": first["p_value"],
                     "n": first["n"], "interval": "Wilson", "kind": "pct"})
    return rows


def win_rate_chart(result: PairwiseResult) -> Any:
    """Win rate of the first source of each pair with Wilson intervals and the 50 % line."""
    from ..resultkit import rate_chart

    frame = result.win_rates.dropna(subset=["rate"]).drop_duplicates("pair").copy()
    other = [b if s == a else a for s, a, b in zip(frame["source"], frame["pair"].str.split(" vs ").str[0],
                                                  frame["pair"].str.split(" vs ").str[1], strict=True)]
    frame["comparison"] = frame["source"] + " over " + pd.Series(other, index=frame.index)
    return rate_chart(frame, "comparison", 0.5, join_title(result.title, "win rates"), "win rate (ties excluded)")


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> PairwiseResult:
    """The task's results (:func:`pairwise_results` at the context's confidence)."""
    return pairwise_results(ev, task, context.options.confidence)


def pairwise_results(ev: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95,
                     alpha: float = 0.05, power: float = 0.8,
                     order: Callable[[Collection[str]], list[str]] | None = None) -> PairwiseResult:
    """Win rates per pair type (from the stored left/right sources), slider summaries, power and BT.

    The winner of a forced choice is the side picked (``A`` = left, ``B`` =
    right, anything else a tie); of a slider answer the sign of its value
    (negative = left better, 0 = a draw). Answers without both sources, or with
    the same source on both sides, compare nothing and are left out.
    ``order`` puts the sources found in the order of every table (each pair named
    first source first); without it they are sorted.
    """
    used_columns = [c for c in ("session_id", "response", "left_source", "right_source", "button", "detail")
                    if c in ev.columns]
    rows = ev.loc[(ev["task"] == task["id"]).to_numpy(), used_columns]  # copy only what is used
    button, button_names = column_codes(slider_buttons(rows))
    slider = button >= 0
    value = np.where(slider, float_column(rows["response"]), np.nan)
    response, response_names = column_codes(rows["response"])
    side = np.where(slider, np.where(value < 0, LEFT, np.where(value > 0, RIGHT, TIE)),
                    np.where(response == code_of(response_names, "A"), LEFT,
                             np.where(response == code_of(response_names, "B"), RIGHT, TIE)))
    left, left_names = column_codes(rows["left_source"])
    right, right_names = column_codes(rows["right_source"])
    used = (left >= 0) & (right >= 0)
    found = ({str(x) for x in left_names[np.unique(left[used])]}
             | {str(x) for x in right_names[np.unique(right[used])]})
    names = order(found) if order is not None else sorted(found)
    index = pd.Index(names, dtype=object)
    lc, rc = recode_column(rows["left_source"], index), recode_column(rows["right_source"], index)
    keep = used & (lc != rc)
    lc, rc, side, slider, value, button = lc[keep], rc[keep], side[keep], slider[keep], value[keep], button[keep]
    k = len(names)
    a, b = np.minimum(lc, rc), np.maximum(lc, rc)  # the pair's sources in the order of ``names``
    pair = a * k + b
    winner = np.where(side == LEFT, lc, np.where(side == RIGHT, rc, -1))
    cells = k * k
    n_pair = np.bincount(pair, minlength=cells)
    ties = np.bincount(pair[side == TIE], minlength=cells)
    wins_a = np.bincount(pair[winner == a], minlength=cells)
    wins_b = np.bincount(pair[winner == b], minlength=cells)
    accept, reject = code_of(button_names, "accept"), code_of(button_names, "reject")
    win_rows, slider_rows, power_rows = [], [], []
    for p in np.flatnonzero(n_pair):
        first, second = names[p // k], names[p % k]
        label = f"{first} vs {second}"
        decided = int(n_pair[p] - ties[p])
        for source, wins in ((first, wins_a[p]), (second, wins_b[p])):
            win_rows.append({"pair": label, "source": source, "wins": int(wins), "ties": int(ties[p]),
                             **interval_row(int(wins), decided, 0.5, confidence)})
        rate = wins_a[p] / decided if decided else math.nan
        needed: float | None = None
        if decided and rate != 0.5:
            needed = stats.sample_size_one_proportion(rate, 0.5, alpha=alpha, power=power)
        power_rows.append({"pair": label, "source": first, "rate": rate, "n": decided, "needed_total": needed,
                           "further": None if needed is None else max(0, needed - decided)})
        here = slider & (pair == p)
        if here.any():
            # orient: positive = the pair's first source better
            oriented = np.where(lc[here] == p // k, -value[here], value[here])
            m = stats.mean_ci(oriented, confidence, bounds=(min(-100.0, float(oriented.min())),
                                                            max(100.0, float(oriented.max()))))
            zero = value[here] == 0
            slider_rows.append({"pair": label, "favoured": first, "mean": m.mean, "low": m.low, "high": m.high,
                                "sd": m.sd, "n": m.n, "clipped": m.clipped,
                                "positive_draws": int((zero & (button[here] == accept)).sum()),
                                "negative_draws": int((zero & (button[here] == reject)).sum())})
    outcome = np.select([side == LEFT, side == RIGHT], [0, 1], 2)
    records = pd.DataFrame({"a": pd.Categorical.from_codes(lc, categories=index),
                            "b": pd.Categorical.from_codes(rc, categories=index),
                            "outcome": pd.Categorical.from_codes(outcome, categories=["a", "b", "tie"])})
    # W[i, j] = wins of i over j, a tie half a win each: what stats.win_matrix builds from the records
    w = np.zeros(cells)
    w += np.bincount(lc[side == LEFT] * k + rc[side == LEFT], minlength=cells)
    w += np.bincount(rc[side == RIGHT] * k + lc[side == RIGHT], minlength=cells)
    tie = side == TIE
    w += 0.5 * np.bincount(lc[tie] * k + rc[tie], minlength=cells)
    w += 0.5 * np.bincount(rc[tie] * k + lc[tie], minlength=cells)
    wins = pd.DataFrame(w.reshape(k, k), index=index, columns=index)
    session, session_names = column_codes(rows["session_id"])
    session = session[keep]
    decided, drawn = (side != TIE) & (session >= 0), tie & (session >= 0)
    win_side, lose_side = np.where(side == RIGHT, rc, lc), np.where(side == RIGHT, lc, rc)
    key = np.concatenate([(session[decided] * k + win_side[decided]) * k + lose_side[decided],
                          (session[drawn] * k + lc[drawn]) * k + rc[drawn],
                          (session[drawn] * k + rc[drawn]) * k + lc[drawn]])
    weight = np.concatenate([np.ones(int(decided.sum())), np.full(2 * int(drawn.sum()), 0.5)])
    cells, inverse = np.unique(key, return_inverse=True)
    evaluator_wins = pd.DataFrame({  # categoricals: the bootstrap recodes them without comparing strings
        "session_id": pd.Categorical.from_codes(cells // (k * k), categories=pd.Index(session_names, dtype=object)),
        "winner": pd.Categorical.from_codes((cells // k) % k, categories=index),
        "loser": pd.Categorical.from_codes(cells % k, categories=index),
        "wins": np.bincount(inverse, weights=weight, minlength=len(cells))})
    bt = stats.bradley_terry_matrix(names, wins.to_numpy()) if len(records) else {}
    return PairwiseResult(
        task=task["id"], title=task.get("title", task["id"]), response=task.get("response", "choice"),
        win_rates=pd.DataFrame(win_rows, columns=["pair", "source", "wins", "ties", "n", "rate", "low", "high",
                                                  "p_value"]),
        slider=pd.DataFrame(slider_rows, columns=["pair", "favoured", "mean", "low", "high", "sd", "n", "clipped",
                                                  "positive_draws", "negative_draws"]),
        power=pd.DataFrame(power_rows, columns=["pair", "source", "rate", "n", "needed_total", "further"]),
        bradley_terry=bt_frame(bt), records=records, wins=wins, evaluator_wins=evaluator_wins,
        n_answers=len(rows),
    )
