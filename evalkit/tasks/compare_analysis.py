"""Analysis of ``compare`` tasks (:mod:`evalkit.tasks.compare`): two systems' outputs of one item, a choice,
a choice with "no preference" or the HELP slider.

A compare answer is stored like a pairwise one (``left_source`` / ``right_source``, response ``A`` / ``B`` /
``tie`` or the slider's signed value with its button in ``detail``), so the counting is
:func:`evalkit.tasks.pairwise_analysis.pairwise_results`; this module adds ties counted as half, Bradley–Terry over the
task's systems with bootstrap intervals, and the correlation of the systems' win shares with the items'
automatic metrics.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..resultkit import (
    BT_ONE_EVALUATOR,
    Block,
    ResultDefaults,
    TaskContext,
    bradley_terry_intervals,
    bt_evaluators,
    bt_frame,
    bt_table,
    fmt_ci,
    fmt_num,
    fmt_pct,
    item_codes,
    recode_column,
)
from ..stats import bradley_terry_matrix
from ..text import join_title
from .items_analysis import (
    BT_NOTE,
    CORRELATION_NOTE,
    correlate,
    correlation_display,
    correlation_rows,
    count_text,
    in_order,
    judged_pairs,
    rate_columns,
    rows_of,
    system_order,
    wilson_fractional,
)
from .pairwise_analysis import pairwise_results, win_rate_rows

__all__ = ["CompareResult", "results"]

WIN_NOTE = (
    "Win rate: wins / (wins + losses), ties left out; exact two-sided sign test against 50% (a binomial test "
    "of the decided judgments; Dixon & Mood 1946) and {ci} Wilson (1927) interval. Ties as half: (wins + ties / 2) "
    "/ all judgments, with the Wilson score interval of that proportion (conservative when there are ties: a "
    "tie always scores ½, so the judgments vary less than the binomial variance assumes).")
SLIDER_NOTE = (
    "HELP slider (-100..100): the mean signed preference, positive = the favoured system better, with a Student "
    "(1908) t interval clipped to -100..100 († where it was cut). Draws: the slider left at 0 with Accept "
    "(positive: both suitable) or Reject (negative: both unsuitable).")
POWER_NOTE = (
    "Judgments (ties left out) a two-sided test at alpha .05 needs for power .8 if the current win rate is the "
    "true one (Cohen's h, Cohen 1988); '–' where the rate is 50% or there is nothing yet.")
SHARE_NOTE = "Win share: (wins + ties / 2) / comparisons of the system over all its pairs; Wilson interval as above."


@dataclass
class CompareResult(ResultDefaults):
    """Everything about one compare task."""

    task: str
    title: str
    response: str
    win_rates: pd.DataFrame  # pair, system, wins, ties, losses, n, rate, low, high, p_value, n_all, half_rate,
    #                          half_low, half_high (ties as half)
    slider: pd.DataFrame  # pair, favoured, mean, low, high, sd, n, clipped, positive_draws, negative_draws
    power: pd.DataFrame  # pair, system, rate, n, needed_total, further
    bradley_terry: pd.DataFrame  # system, log_strength, low, high
    shares: pd.DataFrame  # system, wins (ties as half), comparisons, share, low, high
    correlations: pd.DataFrame  # level, measure, metric, method, r, low, high, p_value, p_method, n
    correlation_note: str
    options: Any
    n_answers: int
    n_bt_evaluators: int = 0  # evaluators with a judgment: the bootstrap's units (no interval below 2)
    kind: str = "compare"

    def describe(self) -> str:
        return f"compare, {self.response}"

    def blocks(self) -> list[Block]:
        ci = f"{round(100 * self.options.confidence)}%"
        w = self.win_rates
        wins = w.assign(**rate_columns(w), **rate_columns(w.rename(columns={
            "half_rate": "ties as half rate", "half_low": "ties as half low", "half_high": "ties as half high"}),
            prefix="ties as half ", p=False))
        out = [Block("Win rates (sign test, ties left out; and ties as half)",
                     wins[["pair", "system", "wins", "ties", "losses", "n", "rate %", "95% CI", "p", "n_all",
                           "ties as half rate %", "ties as half 95% CI"]].rename(columns={"n_all": "n (all)"}),
                     WIN_NOTE.format(ci=ci), f"compare_wins:{self.task}" if len(w) else "")]
        if not self.slider.empty:
            s = self.slider
            shown = s.assign(mean=s["mean"].map(lambda v: fmt_num(v, 1)), **{"95% CI": [
                fmt_ci(a, b, pct=False) + (" †" if cut else "")
                for a, b, cut in zip(s["low"], s["high"], s["clipped"], strict=True)]})
            out.append(Block("Slider: mean preference", shown[["pair", "favoured", "mean", "95% CI", "n",
                                                               "positive_draws", "negative_draws"]], SLIDER_NOTE))
        sh = self.shares
        out.append(Block("Win share per system (ties as half)", sh.assign(
            wins=sh["wins"].map(lambda v: fmt_num(v, 1)), share=sh["share"].map(fmt_pct),
            **{"95% CI": [fmt_ci(a, b) for a, b in zip(sh["low"], sh["high"], strict=True)]})[
            ["system", "wins", "comparisons", "share", "95% CI"]].rename(columns={"share": "share %"}), SHARE_NOTE))
        bt = self.bradley_terry
        out.append(Block("Bradley–Terry strengths", bt_table(bt.rename(columns={"system": "source"})).rename(
            columns={"source": "system"}) if len(bt) else None,
            BT_NOTE.format(resamples=self.options.bootstrap_resamples, seed=self.options.bootstrap_seed)
            + (BT_ONE_EVALUATOR if self.n_bt_evaluators < 2 else "")
            if len(bt) else "No comparison yet.", f"compare_bt:{self.task}" if len(bt) else ""))
        pw = self.power
        out.append(Block("Sample size: judgments needed per pair", pw.assign(
            rate=pw["rate"].map(fmt_pct), needed_total=pw["needed_total"].map(count_text),
            further=pw["further"].map(count_text)), POWER_NOTE))
        out.append(_correlation_block(self.correlations, self.correlation_note))
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        rows = win_rate_rows(self.title, self.win_rates, "system")
        for r in self.bradley_terry.itertuples():
            rows.append({"section": join_title(self.title, "Bradley–Terry log-strength"), "label": r.system,
                         "detail": "", "value": r.log_strength, "low": r.low, "high": r.high,
                         "p_value": float("nan"), "n": None,
                         "interval": f"bootstrap percentile, evaluators resampled "
                                     f"{self.options.bootstrap_resamples:,} times", "kind": "num"})
        return rows + correlation_rows(self.correlations, self.title)

    def charts(self) -> dict[str, Any]:
        from ..resultkit import bt_chart, rate_chart

        out: dict[str, Any] = {}
        if len(self.win_rates):
            frame = self.win_rates.drop_duplicates("pair").copy()
            frame["comparison"] = [f"{s} over {p.split(' vs ')[1] if p.startswith(s + ' vs ') else p.split(' vs ')[0]}"
                                   for s, p in zip(frame["system"], frame["pair"], strict=True)]
            out[f"compare_wins:{self.task}"] = rate_chart(frame.dropna(subset=["rate"]), "comparison", 0.5,
                                                          join_title(self.title, "win rates"),
                                                          "win rate (ties left out)")
        if len(self.bradley_terry):
            out[f"compare_bt:{self.task}"] = bt_chart(self.bradley_terry.rename(columns={"system": "source"}),
                                                      join_title(self.title, "Bradley–Terry log-strengths"),
                                                      order=list(self.shares["system"]))
        return out


def _correlation_block(table: pd.DataFrame, note: str) -> Block:
    if table.empty:
        return Block("Correlation with automatic metrics", None, note)
    return Block("Correlation with automatic metrics", correlation_display(table), CORRELATION_NOTE)


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> CompareResult:
    """Win rates (ties left out, and as half), slider summaries, sample sizes, Bradley–Terry with bootstrap
    intervals over evaluators, win shares per system and their correlation with the items' metrics."""
    options = context.options
    confidence = options.confidence
    # the systems in the config's order in every table and chart (pairs named first system first)
    pair = pairwise_results(ev, task, confidence, order=lambda found: system_order(task, context, found))
    w = pair.win_rates.rename(columns={"source": "system"})
    # losses and ties as half: per pair, the other system's wins are this one's losses
    decided = w["n"].to_numpy()
    w["losses"] = decided - w["wins"].to_numpy()
    w["n_all"] = decided + w["ties"].to_numpy()
    half = w["wins"].to_numpy() + w["ties"].to_numpy() / 2
    w["half_rate"] = np.divide(half, w["n_all"], out=np.full(len(w), np.nan), where=w["n_all"].to_numpy() > 0)
    bounds = [wilson_fractional(h, int(n), confidence) for h, n in zip(half, w["n_all"], strict=True)]
    w["half_low"] = [b[0] for b in bounds]
    w["half_high"] = [b[1] for b in bounds]
    w = w[["pair", "system", "wins", "ties", "losses", "n", "rate", "low", "high", "p_value", "n_all", "half_rate",
           "half_low", "half_high"]]
    systems = list(pair.wins.index)
    bt = pd.DataFrame(columns=["system", "log_strength", "low", "high"])
    if len(pair.records):
        intervals = bradley_terry_intervals([pair], systems, options.bootstrap_resamples, options.bootstrap_seed,
                                            confidence)
        bt = in_order(bt_frame(bradley_terry_matrix(systems, pair.wins.to_numpy()), intervals).rename(
            columns={"source": "system"}), systems)
    # win share per system over all its comparisons, ties as half (the win matrix counts them so)
    wm = pair.wins.to_numpy()
    won, played = wm.sum(axis=1), wm.sum(axis=1) + wm.sum(axis=0)
    share_bounds = [wilson_fractional(float(a), round(float(b)), confidence) for a, b in zip(won, played, strict=True)]
    shares = pd.DataFrame({"system": systems, "wins": won, "comparisons": played.round().astype(int),
                           "share": np.divide(won, played, out=np.full(len(won), np.nan), where=played > 0),
                           "low": [b[0] for b in share_bounds], "high": [b[1] for b in share_bounds]})
    # the (item, system) pairs judged: each answer shows its item with its left and its right system
    rows = rows_of(ev, task["id"], ["item_ids", "left_source", "right_source"])
    judged = pd.DataFrame(columns=["item_id", "system"])
    if "item_ids" in rows.columns:
        item, item_names = item_codes(rows)
        index = pd.Index(systems, dtype=object)
        judged = judged_pairs(np.concatenate([item, item]), item_names,
                              np.concatenate([recode_column(rows["left_source"], index),
                                              recode_column(rows["right_source"], index)]), systems)
    system_level = shares[["system"]].assign(measure="win share (ties as half)", human=shares["share"])
    table, note = correlate(context, judged, system_level.dropna(subset=["human"]))
    return CompareResult(
        task=task["id"], title=task.get("title", task["id"]), response=task.get("response", "choice"),
        win_rates=w.reset_index(drop=True), slider=pair.slider, power=pair.power.rename(columns={"source": "system"}),
        bradley_terry=bt, shares=shares, correlations=table, correlation_note=note, options=options,
        n_answers=pair.n_answers, n_bt_evaluators=bt_evaluators([pair]))
