"""Analysis of ``rank`` tasks (:mod:`evalkit.tasks.rank`): the best of n outputs of one item, or all of them
in order.

An answer stores the systems in display order (``sources``) and the labels chosen (``response``: ``"B"``, or
``"B>A>C"`` best first). Answers are grouped by their (sources, response) pattern, of which there are few
(at most the orderings of the systems shown, times the answers to them): each pattern is decoded once and
weighted by how often it was given, so the statistics cost the same for a thousand or a million answers.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..resultkit import (
    BT_ONE_EVALUATOR,
    Block,
    ResultDefaults,
    TaskContext,
    bt_table,
    column_codes,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    item_codes,
    json_values,
)
from ..text import join_title
from .items_analysis import (
    BT_NOTE,
    CORRELATION_NOTE,
    bt_with_intervals,
    correlate,
    correlation_display,
    correlation_rows,
    count_text,
    in_order,
    judged_pairs,
    rows_of,
    system_order,
)

__all__ = ["RankResult", "results"]

SHARE_NOTE = (
    "Share of the questions showing the system in which it was chosen as the best (the first of a full "
    "ranking), with the Wilson (1927) interval; p: exact two-sided test of its wins against choosing at random "
    "(1/n of the questions of n outputs; a sum of binomials when n varies).")
MEAN_RANK_NOTE = ("Mean position in the full rankings (1 = best), with a Student (1908) t interval clipped to 1..n († "
                  "where it was cut).")
PL_NOTE = (
    "Plackett–Luce log-strengths (Luce 1959; Plackett 1975) of the full rankings, maximum likelihood by "
    "minorise–maximise (Hunter 2004), centred; a system never ranked above another gets -inf, one never ranked "
    "below another inf. 95% percentile bootstrap intervals resampling evaluators (all of an evaluator's rankings "
    "together; Efron & Tibshirani 1993), {resamples:,} resamples, seed {seed}; an end at -inf / inf: the system "
    "was never ranked above / below another in enough resamples.")
PL_ONE_EVALUATOR = (" Only one evaluator has ranked: the bootstrap resamples evaluators, so there is no interval "
                    "until a second one has.")
PL_NO_FIT = (
    "No finite Plackett–Luce fit: every pair of systems was ranked in the same order in all {n:,} rankings "
    "({order}), so the maximum-likelihood strengths are infinite (the likelihood grows without bound as they "
    "spread apart) and there is nothing to estimate or bootstrap. The mean ranks above give the order.")
IMPLIED_NOTE = (
    "From the pairs each answer implies: the best beats every other output shown (best-of-n), each output "
    "beats every one ranked below it (rankings). ")
POWER_NOTE = (
    "Times shown a two-sided test at alpha .05 needs for power .8 if the current share is the true one, against "
    "the chance share (Cohen's h, Cohen 1988); '–' at chance or with nothing yet.")


@dataclass
class RankResult(ResultDefaults):
    """Everything about one rank task."""

    task: str
    title: str
    response: str
    shares: pd.DataFrame  # system, wins, shown, share, low, high, chance, p_value
    mean_rank: pd.DataFrame  # system, mean, low, high, sd, n, clipped (full rankings)
    plackett_luce: pd.DataFrame  # system, log_strength, low, high (full rankings; bootstrap over evaluators)
    bradley_terry: pd.DataFrame  # system, log_strength, low, high (implied pairs)
    power: pd.DataFrame  # system, share, chance, n, needed_total, further
    correlations: pd.DataFrame
    correlation_note: str
    options: Any
    n_answers: int
    n_rankings: int
    n_ranking_evaluators: int = 0  # evaluators who gave a full ranking (the bootstrap's units)
    n_pair_evaluators: int = 0  # evaluators with an implied pair (the Bradley–Terry bootstrap's units)
    kind: str = "rank"

    def describe(self) -> str:
        return f"rank, {'best of n' if self.response == 'best' else 'full ranking'}"

    def blocks(self) -> list[Block]:
        s = self.shares
        out = [Block("Chosen as the best", s.assign(
            share=s["share"].map(fmt_pct), chance=s["chance"].map(fmt_pct), p=s["p_value"].map(fmt_p),
            **{"95% CI": [fmt_ci(a, b) for a, b in zip(s["low"], s["high"], strict=True)]})[
            ["system", "wins", "shown", "share", "95% CI", "chance", "p"]].rename(
            columns={"share": "share %", "chance": "chance %"}), SHARE_NOTE, f"rank_shares:{self.task}"
            if s["shown"].sum() else "")]
        if len(self.mean_rank):
            m = self.mean_rank
            out.append(Block("Mean rank", m.assign(mean=m["mean"].map(fmt_num), sd=m["sd"].map(fmt_num), **{
                "95% CI": [fmt_ci(a, b, pct=False) + (" †" if cut else "")
                           for a, b, cut in zip(m["low"], m["high"], m["clipped"], strict=True)]})[
                ["system", "mean", "95% CI", "sd", "n"]].rename(columns={"mean": "mean rank"}), MEAN_RANK_NOTE))
            out.append(self._plackett_luce_block())
        bt = self.bradley_terry
        out.append(Block("Bradley–Terry strengths from implied pairs", bt_table(bt.rename(
            columns={"system": "source"})).rename(columns={"source": "system"}) if len(bt) else None,
            IMPLIED_NOTE + BT_NOTE.format(resamples=self.options.bootstrap_resamples,
                                          seed=self.options.bootstrap_seed)
            + (BT_ONE_EVALUATOR if self.n_pair_evaluators < 2 else "") if len(bt) else "No answer yet.",
            f"rank_bt:{self.task}" if len(bt) else ""))
        pw = self.power
        out.append(Block("Sample size: times shown needed per system", pw.assign(
            share=pw["share"].map(fmt_pct), chance=pw["chance"].map(fmt_pct),
            needed_total=pw["needed_total"].map(count_text), further=pw["further"].map(count_text)).rename(
            columns={"share": "share %", "chance": "chance %"}), POWER_NOTE))
        out.append(Block("Correlation with automatic metrics",
                         correlation_display(self.correlations) if len(self.correlations) else None,
                         CORRELATION_NOTE if len(self.correlations) else self.correlation_note))
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        rows = []
        for r in self.shares.itertuples():
            rows.append({"section": join_title(self.title, "chosen as the best (vs chance)"), "label": r.system,
                         "detail": f"chance {fmt_pct(r.chance)}%", "value": r.share, "low": r.low, "high": r.high,
                         "p_value": r.p_value, "n": r.shown, "interval": "Wilson", "kind": "pct"})
        for r in self.plackett_luce.itertuples() if self._pl_fitted() else ():
            rows.append({"section": join_title(self.title, "Plackett–Luce log-strength"), "label": r.system,
                         "detail": "", "value": r.log_strength, "low": r.low, "high": r.high,
                         "p_value": math.nan, "n": None,
                         "interval": f"bootstrap percentile, evaluators resampled "
                                     f"{self.options.bootstrap_resamples:,} times", "kind": "num"})
        for r in self.bradley_terry.itertuples():
            rows.append({"section": join_title(self.title, "Bradley–Terry log-strength (implied pairs)"),
                         "label": r.system, "detail": "", "value": r.log_strength, "low": r.low, "high": r.high,
                         "p_value": math.nan, "n": None,
                         "interval": f"bootstrap percentile, evaluators resampled "
                                     f"{self.options.bootstrap_resamples:,} times", "kind": "num"})
        return rows + correlation_rows(self.correlations, self.title)

    def _pl_fitted(self) -> bool:
        """Whether some system has a finite Plackett–Luce estimate (none has when every pair of systems was
        always ranked in the same order)."""
        return bool(np.isfinite(self.plackett_luce["log_strength"].to_numpy(dtype=float)).any())

    def _plackett_luce_block(self) -> Block:
        pl = self.plackett_luce
        if not self._pl_fitted():
            order = " > ".join(self.mean_rank.sort_values("mean", kind="stable")["system"])
            return Block("Plackett–Luce strengths", None, PL_NO_FIT.format(n=self.n_rankings, order=order))
        note = PL_NOTE.format(resamples=self.options.bootstrap_resamples, seed=self.options.bootstrap_seed)
        if self.n_ranking_evaluators < 2:
            note += PL_ONE_EVALUATOR
        return Block("Plackett–Luce strengths", bt_table(pl.rename(columns={"system": "source"})).rename(
            columns={"source": "system"}), note)

    def charts(self) -> dict[str, Any]:
        from ..resultkit import bt_chart, rate_chart

        out: dict[str, Any] = {}
        shown = self.shares[self.shares["shown"] > 0]
        if len(shown):
            chance = float(np.average(shown["chance"], weights=shown["shown"]))
            out[f"rank_shares:{self.task}"] = rate_chart(shown.rename(columns={"share": "rate"}), "system", chance,
                                                         join_title(self.title, "chosen as the best"),
                                                         "share of the questions showing it")
        if len(self.bradley_terry):
            out[f"rank_bt:{self.task}"] = bt_chart(self.bradley_terry.rename(columns={"system": "source"}),
                                                   join_title(self.title, "Bradley–Terry log-strengths"),
                                                   order=list(self.shares["system"]))
        return out


def _patterns(rows: pd.DataFrame, systems: list[str]) -> tuple[np.ndarray, list[list[int]], list[list[int]]]:
    """Per answer its pattern code (-1: unreadable), and per pattern the systems shown and the order given
    (system codes; the order is [best] for best-of-n, best first for a ranking)."""
    source, shown = json_values(rows["sources"])
    response, labels = column_codes(rows["response"])
    index = {s: k for k, s in enumerate(systems)}
    width = len(labels) + 1
    combined = np.where((source >= 0) & (response >= 0), source * width + response, -1)
    distinct, pattern = np.unique(combined, return_inverse=True)
    shows, orders = [], []
    for key in distinct:
        lst = shown[key // width] if key >= 0 else None
        given = str(labels[key % width]).split(">") if key >= 0 else []
        codes = [index.get(str(s), -1) for s in lst] if isinstance(lst, list) else []
        at = [ord(g) - ord("A") for g in given if len(g) == 1 and "A" <= g <= "Z"]
        ok = codes and -1 not in codes and len(at) == len(given) and all(a < len(codes) for a in at) \
            and len(set(at)) == len(at) and at
        shows.append(codes if ok else [])
        orders.append([codes[a] for a in at] if ok else [])
    valid = np.asarray([bool(o) for o in orders], dtype=bool)
    pattern = np.where(combined >= 0, pattern, -1)
    pattern = np.where((pattern >= 0) & valid[np.maximum(pattern, 0)], pattern, -1) if len(valid) else pattern
    return pattern, shows, orders


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> RankResult:
    """Best-of-n shares against chance; for full rankings the mean ranks and the Plackett–Luce strengths;
    Bradley–Terry from the implied pairs; both fits with bootstrap intervals over evaluators; sample sizes and
    the correlation of the shares with the items' metrics."""
    options = context.options
    confidence = options.confidence
    rows = rows_of(ev, task["id"], ["session_id", "sources", "response", "item_ids"])
    _, shown_lists = json_values(rows["sources"])
    seen = {str(s) for lst in shown_lists if isinstance(lst, list) for s in lst}
    systems = system_order(task, context, seen)  # one order in every table and chart: the config's
    pattern, shows, orders = _patterns(rows, systems)
    counts = np.bincount(pattern[pattern >= 0], minlength=len(shows))
    used = [p for p in range(len(shows)) if counts[p] and orders[p]]
    if used:
        shares = stats.best_of_n_shares([systems[orders[p][0]] for p in used],
                                        [[systems[c] for c in shows[p]] for p in used], items=systems,
                                        confidence=confidence, weights=[int(counts[p]) for p in used])
    else:
        shares = pd.DataFrame({"item": systems, "wins": 0, "shown": 0, "share": math.nan, "low": math.nan,
                               "high": math.nan, "chance": math.nan, "p_value": 1.0})
    shares = shares.rename(columns={"item": "system"})
    full = [p for p in used if len(orders[p]) == len(shows[p]) and len(shows[p]) >= 2 and len(orders[p]) > 1]
    mean_rank = pd.DataFrame(columns=["system", "mean", "low", "high", "sd", "n", "clipped"])
    pl = pd.DataFrame(columns=["system", "log_strength", "low", "high"])
    session, _ = column_codes(rows["session_id"])
    ok = (pattern >= 0) & (session >= 0)
    n_pat = max(len(shows), 1)
    cell, per_cell = np.unique(session[ok] * n_pat + pattern[ok], return_counts=True)
    n_ranking_evaluators = 0
    if full:
        ranks = []
        for s in range(len(systems)):
            pos = [(orders[p].index(s) + 1, counts[p]) for p in full if s in orders[p]]
            if pos:
                places = np.repeat([q for q, _ in pos], [c for _, c in pos]).astype(float)
                longest = float(max(len(orders[p]) for p in full))
                m = stats.mean_ci(places, confidence, bounds=(1.0, longest) if longest > 1 else None)
                ranks.append({"system": systems[s], "mean": m.mean, "low": m.low, "high": m.high, "sd": m.sd,
                              "n": m.n, "clipped": m.clipped})
        mean_rank = pd.DataFrame(ranks, columns=mean_rank.columns)
        rankings = [[systems[c] for c in orders[p]] for p in full]
        strengths = stats.plackett_luce(rankings, items=systems, weights=[int(counts[p]) for p in full])
        # the bootstrap's rows: (evaluator, full ranking given, how often)
        position = np.full(n_pat, -1)
        position[full] = np.arange(len(full))
        ranked = position[cell % n_pat] >= 0
        n_ranking_evaluators = len(np.unique(cell[ranked] // n_pat))
        intervals = stats.plackett_luce_bootstrap(
            rankings, cell[ranked] // n_pat, position[cell[ranked] % n_pat], per_cell[ranked], items=systems,
            resamples=options.bootstrap_resamples, confidence=confidence, seed=options.bootstrap_seed)
        pl = pd.DataFrame({"system": list(strengths), "log_strength": list(strengths.values()),
                           "low": intervals["low"].to_numpy(), "high": intervals["high"].to_numpy()})
        pl = in_order(pl, systems)
    # implied pairs, per (evaluator, pattern): the best over every other shown, or each over those below it
    pair_w: list[list[int]] = []
    pair_l: list[list[int]] = []
    for p in range(len(shows)):
        order = orders[p]
        if len(order) == 1:  # best of n
            pair_w.append([order[0]] * (len(shows[p]) - 1))
            pair_l.append([c for c in shows[p] if c != order[0]])
        else:
            pair_w.append([order[i] for i in range(len(order)) for _ in range(len(order) - i - 1)])
            pair_l.append([order[j] for i in range(len(order)) for j in range(i + 1, len(order))])
    lengths = np.asarray([len(x) for x in pair_w] or [0], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    flat_w = np.asarray([c for x in pair_w for c in x], dtype=np.int64)
    flat_l = np.asarray([c for x in pair_l for c in x], dtype=np.int64)
    cell_pattern = cell % n_pat
    repeat = lengths[cell_pattern] if len(cell) else np.zeros(0, dtype=np.int64)
    at = np.repeat(starts[cell_pattern], repeat) + (np.arange(repeat.sum()) - np.repeat(np.cumsum(repeat) - repeat,
                                                                                      repeat))
    evaluator = np.repeat(cell // n_pat, repeat)
    weight = np.repeat(per_cell, repeat).astype(float)
    bt = in_order(bt_with_intervals(systems, evaluator, flat_w[at], flat_l[at], weight, options), systems)
    power = []
    for r in shares.itertuples():
        needed: int | None = None
        if r.shown and not math.isnan(r.share) and abs(r.share - r.chance) > 1e-12:
            needed = stats.sample_size_one_proportion(r.share, r.chance)
        power.append({"system": r.system, "share": r.share, "chance": r.chance, "n": r.shown,
                      "needed_total": needed, "further": None if needed is None else max(0, needed - r.shown)})
    judged = pd.DataFrame(columns=["item_id", "system"])
    if "item_ids" in rows.columns and len(rows):
        item, item_names = item_codes(rows)
        lists = [np.asarray(shows[p] if p >= 0 else [], dtype=np.int64) for p in range(len(shows))]
        width = max([len(x) for x in lists] + [1])
        table = np.full((len(shows) + 1, width), -1, dtype=np.int64)
        for p, x in enumerate(lists):
            table[p, : len(x)] = x
        per_answer = table[np.where(pattern >= 0, pattern, len(shows))]  # answers x width
        judged = judged_pairs(np.repeat(item, width), item_names, per_answer.ravel(), systems)
    system_level = shares[["system"]].assign(measure="best-of-n share", human=shares["share"]).dropna(
        subset=["human"])
    corr, note = correlate(context, judged, system_level)
    return RankResult(
        task=task["id"], title=task.get("title", task["id"]), response=task.get("response", "best"),
        shares=shares, mean_rank=mean_rank.reset_index(drop=True), plackett_luce=pl, bradley_terry=bt,
        power=pd.DataFrame(power, columns=["system", "share", "chance", "n", "needed_total", "further"]),
        correlations=corr, correlation_note=note, options=options, n_answers=len(rows),
        n_rankings=int(sum(counts[p] for p in full)), n_ranking_evaluators=n_ranking_evaluators,
        n_pair_evaluators=len(np.unique(evaluator)))
