"""Analysis of ``spans`` tasks (error span annotation: ESA, MQM and ESA-AI): the evaluators' error spans on
systems' outputs and the scores they gave after marking them.

What it reads: the task's answers (``evaluations`` rows of the task: ``sources`` = the systems shown in display
order, ``item_ids``, and the ``detail`` JSON, from the ``score_detail`` column when the analysis read it, else
``detail``: ``{"scores": {scale: [value per output]}, "actions": [...]}``), and the ``spans`` rows of the included
sessions (:attr:`evalkit.resultkit.TaskContext.spans`: ``session_id, task, question_index, item_id, segment,
system, n, start_char, end_char, severity, category, text, origin, created_at``). A span row belongs to the answer
with its (session, question index) and to the output of its system in that answer; span rows of answers that are
not in the evaluations given (check questions left out, excluded sessions) are ignored, and an output with no span
row was annotated as having no error. A suggestion deleted (``origin = "suggested-deleted"``) is not an error: it
counts only in the ESA-AI shares and the time per span.

What it gives, per system: the scores with their intervals, per-evaluator z-scores, paired Wilcoxon tests and the
score's Krippendorff alpha (:func:`evalkit.tasks.score_analysis.results` on the same answers); error counts per
severity and per category; the MQM score per output and per 100 words with bootstrap intervals over items; the
systems ranked by each measure with Holm-corrected paired tests; the evaluators' agreement on the spans
(character-level F1 and Cohen's kappa); for ESA-AI what became of the suggested spans; the time per span and per
segment from the answers' action logs.

The task description (``task``, what the kind's ``describe`` returns plus ``id``, ``kind``, ``title``): read are
``systems``, ``protocol`` ("esa" | "mqm"), ``severities``, ``categories`` (None, "free" or ``{top: [subs]}``),
``scales`` (as the score kind's), ``missing_token``, ``prefill``, ``outputs_per_question`` and ``mqm_weights``.
``mqm_weights`` is a flat mapping of weights that override :data:`DEFAULT_MQM_WEIGHTS` key by key: a key
``"severity"`` weighs every span of that severity; a key ``"severity:Top/Sub"`` (a full category as spans store
it) or ``"severity:Top"`` (every subcategory of a top-level category) weighs the spans of that severity and
category instead, the most specific key winning: ``{"minor": 1, "major": 5, "critical": 25, "neutral": 0,
"minor:Fluency/Punctuation": 0.1}`` (Freitag et al. 2021). A severity with no weight counts 0 and is named in the
note.

Words (the MQM score per 100 words): the whitespace-separated tokens (``str.split()``) of the system's output in
the task's items file (:attr:`TaskContext.items`; a document's output is its segments joined); without the items
file there is no per-100-words score, and no character-level kappa (it needs the outputs' lengths), and a document's
segments are those its spans name. The spans' own ``text`` holds only the marked characters, so it cannot stand in.

Floor: task kinds, an analysis over :mod:`evalkit.tasks.score_analysis` (``.importlinter``). May import
:mod:`evalkit.tasks.score_analysis`, :mod:`evalkit.tasks.items_analysis` and :mod:`evalkit.tasks.spans` (public
names), :mod:`evalkit.resultkit`, :mod:`evalkit.stats`, :mod:`evalkit.spans` and :mod:`evalkit.text`; nothing above
the task kinds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..resultkit import (
    Block,
    ResultDefaults,
    TaskContext,
    column_codes,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    item_codes,
    json_values,
    ndjson_buffer,
)
from ..spans import Span, char_f1
from ..text import join_title
from . import score_analysis
from .items_analysis import rows_of, system_order
from .spans import DEFAULT_WEIGHTS

__all__ = ["ACTION_GAP_CAP_MS", "DEFAULT_MQM_WEIGHTS", "SpansResult", "mqm_weights", "results", "span_weight"]

#: MQM weights of Freitag et al. (2021), the kind's defaults: minor 1, major 5, critical 25, a minor punctuation
#: error 0.1, a neutral span 0. Keys as :func:`span_weight` reads them.
DEFAULT_MQM_WEIGHTS: Mapping[str, float] = DEFAULT_WEIGHTS
#: The longest gap between two logged actions counted as time on the task (ms): a longer one (the evaluator away
#: from the page) counts this much.
ACTION_GAP_CAP_MS = 120_000
#: The actions of a widget's log that act on a span (``score`` is the other).
SPAN_ACTIONS = ("create", "change", "delete", "keep")
DELETED = "suggested-deleted"
SUGGESTED = ("suggested-kept", "suggested-changed", DELETED, "suggested-unreviewed")

ERRORS_NOTE = (
    "The spans the evaluators ended with, per severity (a suggested span they deleted is not an error); per output "
    "= over the outputs annotated, an output with no span counting 0. Error span annotation: Kocmi et al. (2024), "
    "'Error Span Annotation: A Balanced Approach for Human Evaluation of Machine Translation'; MQM: Freitag et al. "
    "(2021), 'Experts, Errors, and Context: A Large-Scale Study of Human Evaluation for Machine Translation'.")
CATEGORY_NOTE = "Spans per category (\"Top/Sub\" as marked; none: a span without a category), per system."
MQM_NOTE = (
    "MQM score (Freitag et al. 2021, 'Experts, Errors, and Context'): the sum of the weights of an output's spans; "
    "lower is better. Weights: {weights}; a weight 'severity:Category' applies to the spans of that severity and "
    "category instead of the severity's. Per output: the total over the outputs annotated; per 100 words: 100 x "
    "the total over the words of the outputs annotated (whitespace-separated tokens of the output in the items "
    "file). Intervals: {confidence:.0%} percentile bootstrap over items (Efron & Tibshirani 1993; "
    "scipy.stats.bootstrap, {resamples:,} resamples, seed {seed}), an item's annotations resampled together.")
RANK_NOTE = (
    "Rank = 1 + the number of systems significantly better (p < {alpha:g} after Holm's 1979 correction over the "
    "pairs of systems of that measure): systems of one rank are not told apart (the WMT clusters). Score scales: "
    "the Wilcoxon tests of the scores above; MQM: Wilcoxon (1945) signed-rank tests on the items both systems were "
    "annotated on (an item's mean penalty per system), below. Which of two systems is better: the sign of the "
    "Hodges–Lehmann estimate (of the mean difference when it is 0).")
PAIRS_NOTE = (
    "Wilcoxon (1945) signed-rank test of two systems' MQM penalties on the items both were annotated on (each "
    "item's mean penalty per system), two-sided, zero differences dropped; difference = first − second (negative: "
    "the first has fewer errors); Hodges–Lehmann (1963) estimate; p (Holm): adjusted over the pairs (Holm 1979).")
AGREEMENT_NOTE = (
    "Between every two evaluators on the outputs both annotated (each segment of a document apart; an evaluator's "
    "first annotation of an output; a deleted suggestion not counting): character-level F1 = 2|A∩B| / (|A| + |B|) "
    "of the characters each marked (severities ignored; 1 when neither marked any), averaged over the pair's "
    "outputs; Cohen's (1960) kappa of the characters marked or not, from the pair's 2x2 table over all the "
    "characters of their outputs (and the [missing] token when the task has one). Each averaged over the pairs; "
    "{confidence:.0%} percentile bootstrap over the outputs (Efron & Tibshirani 1993), {resamples:,} resamples, "
    "seed {seed}. The scores' agreement is Krippendorff's alpha above (Krippendorff 2011).")
ESA_AI_NOTE = (
    "ESA-AI (Zouhar et al. 2025, 'AI-Assisted Human Evaluation of Machine Translation'): what the evaluators did "
    "with the suggested spans shown: kept (confirmed unchanged), changed (severity, category or extent), deleted, "
    "or not reviewed (left as suggested at submission: they count as errors, as kept ones do), as shares of the "
    "suggestions; added: spans they marked themselves (per "
    "output: over the outputs annotated). Shares without intervals: the suggestions of one output are not "
    "independent.")
TIME_NOTE = (
    "From each answer's action log: an action's time is the gap since the action before it (for the first, since "
    "the question was shown), capped at {cap:g} s (a longer gap: the evaluator away). Per span: the time of the "
    "span actions (create, change, delete, keep) on a system's outputs over their spans (those ended with and the "
    "suggestions deleted); per segment: the time of every action on the outputs over their segments. Answers "
    "without a log are left out.")

MQM_COLUMNS = ["system", "outputs", "items", "penalty", "low", "high", "word_items", "per_100_words", "low_100",
               "high_100"]
RANK_COLUMNS = ["measure", "system", "value", "rank", "better_than"]
PAIR_COLUMNS = ["pair", "first", "second", "n", "mean_diff", "hodges_lehmann", "w_plus", "p_value", "p_holm"]
AGREEMENT_COLUMNS = ["measure", "value", "low", "high", "pairs", "units", "evaluators", "note"]
ESA_AI_COLUMNS = ["system", "outputs", "suggestions", "kept", "changed", "deleted", "unreviewed", "kept_share",
                  "changed_share", "deleted_share", "unreviewed_share", "added", "added_per_output"]
TIME_COLUMNS = ["system", "outputs", "span_seconds", "spans", "seconds_per_span", "segment_seconds", "segments",
                "seconds_per_segment"]


def mqm_weights(task: Mapping[str, Any]) -> dict[str, float]:
    """The task's MQM weights: :data:`DEFAULT_MQM_WEIGHTS` with the task's ``mqm_weights`` over them, key by key."""
    return {**DEFAULT_MQM_WEIGHTS, **{str(k): float(v) for k, v in (task.get("mqm_weights") or {}).items()}}


def span_weight(severity: str, category: str | None, weights: Mapping[str, float]) -> float:
    """The MQM weight of a span: ``weights["severity:Top/Sub"]``, else ``weights["severity:Top"]``, else
    ``weights["severity"]``, else 0."""
    if category:
        for key in (f"{severity}:{category}", f"{severity}:{category.partition('/')[0]}"):
            if key in weights:
                return float(weights[key])
    return float(weights.get(severity, 0.0))


@dataclass
class SpansResult(ResultDefaults):
    """Everything about one spans task."""

    task: str
    title: str
    protocol: str
    #: the scales' analysis, as the score kind's (None: the task has no scale)
    score: score_analysis.ScoreResult | None
    severities: list[str]
    errors: pd.DataFrame  # system, severity, count, outputs, per_output
    categories: pd.DataFrame  # system, category, count, outputs, per_output
    mqm: pd.DataFrame  # MQM_COLUMNS
    ranking: pd.DataFrame  # RANK_COLUMNS
    pairs: pd.DataFrame  # PAIR_COLUMNS (MQM)
    agreement: pd.DataFrame  # AGREEMENT_COLUMNS
    esa_ai: pd.DataFrame  # ESA_AI_COLUMNS
    timing: pd.DataFrame  # TIME_COLUMNS
    weights: dict[str, float]
    options: Any
    n_answers: int
    outputs_per_question: int = 1
    prefill: bool = False
    #: why there are no span tables (the spans were not given), or ""
    spans_note: str = ""
    #: severities seen with no MQM weight (they count 0)
    unweighted: list[str] = field(default_factory=list)
    kind: str = "spans"
    systems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        n = self.outputs_per_question
        return (f"spans, {self.protocol.upper()}{' with suggestions' if self.prefill else ''}, "
                f"{'one output' if n == 1 else f'{n} outputs' if n else 'every output of its item'} per question")

    def blocks(self) -> list[Block]:
        out = list(self.score.blocks()) if self.score is not None else []
        if self.spans_note:
            return [*out, Block("Error spans", None, self.spans_note)]
        out.append(Block("Errors per system by severity", self._errors_table(), ERRORS_NOTE))
        if len(self.categories):
            wide = self.categories.pivot_table(index="category", columns="system", values="count", aggfunc="sum",
                                               sort=False, fill_value=0)
            wide = wide[[s for s in self.systems if s in wide.columns]].reset_index()
            wide.columns = [str(c) for c in wide.columns]
            out.append(Block("Errors per category", wide, CATEGORY_NOTE))
        out.append(Block("MQM score per system", self._mqm_table(), self._mqm_note(), f"spans_mqm:{self.task}"))
        if len(self.ranking):
            r = self.ranking
            out.append(Block("Systems ranked", r.assign(value=r["value"].map(fmt_num),
                                                        better_than=r["better_than"].map(lambda v: v or "–"))[
                ["measure", "rank", "system", "value", "better_than"]].rename(columns={"better_than": "better than"}),
                RANK_NOTE.format(alpha=round(1 - self.options.confidence, 6))))
        if len(self.pairs):
            p = self.pairs
            out.append(Block("MQM: paired comparisons on the same items (Wilcoxon signed-rank)", p.assign(
                mean_diff=p["mean_diff"].map(fmt_num), hodges_lehmann=p["hodges_lehmann"].map(fmt_num),
                w_plus=p["w_plus"].map(lambda v: fmt_num(v, 1)), p=p["p_value"].map(fmt_p),
                holm=p["p_holm"].map(fmt_p))[["pair", "n", "mean_diff", "hodges_lehmann", "w_plus", "p", "holm"]]
                .rename(columns={"n": "items", "mean_diff": "mean difference", "hodges_lehmann": "Hodges–Lehmann",
                                 "w_plus": "W+", "holm": "p (Holm)"}), PAIRS_NOTE))
        a = self.agreement
        notes = " ".join(f"{m}: {n}." for m, n in zip(a["measure"], a["note"], strict=True) if n)
        out.append(Block("Agreement on the spans", a.assign(
            value=a["value"].map(lambda v: fmt_num(v, 3)),
            **{"95% CI": [fmt_ci(lo, hi, pct=False, digits=3) for lo, hi in zip(a["low"], a["high"], strict=True)]})[
            ["measure", "value", "95% CI", "pairs", "units", "evaluators"]].rename(columns={"units": "outputs"}),
            self._fmt(AGREEMENT_NOTE) + (" " + notes if notes else "")))
        if len(self.esa_ai):
            e = self.esa_ai
            out.append(Block("ESA-AI: suggested spans kept, changed and deleted", e.assign(**{
                "kept %": e["kept_share"].map(fmt_pct), "changed %": e["changed_share"].map(fmt_pct),
                "deleted %": e["deleted_share"].map(fmt_pct), "not reviewed %": e["unreviewed_share"].map(fmt_pct),
                "added per output": e["added_per_output"].map(fmt_num)})[
                ["system", "outputs", "suggestions", "kept %", "changed %", "deleted %", "not reviewed %", "added",
                 "added per output"]], ESA_AI_NOTE))
        elif self.prefill:
            out.append(Block("ESA-AI: suggested spans kept, changed and deleted", None,
                             "No suggested span was shown in the answers analysed."))
        t = self.timing
        out.append(Block("Time per span and per segment", t.assign(
            seconds_per_span=t["seconds_per_span"].map(lambda v: fmt_num(v, 1)),
            seconds_per_segment=t["seconds_per_segment"].map(lambda v: fmt_num(v, 1)))[
            ["system", "outputs", "seconds_per_span", "spans", "seconds_per_segment", "segments"]].rename(
            columns={"outputs": "outputs logged", "seconds_per_span": "s per span",
                     "seconds_per_segment": "s per segment"}) if len(t) else None,
            TIME_NOTE.format(cap=ACTION_GAP_CAP_MS / 1000) + ("" if len(t) else " No answer has an action log yet.")))
        return out

    def _fmt(self, note: str) -> str:
        o = self.options
        return note.format(confidence=o.confidence, resamples=o.bootstrap_resamples, seed=o.bootstrap_seed)

    def _errors_table(self) -> pd.DataFrame | None:
        e = self.errors
        if not len(e):
            return None
        wide = e.pivot_table(index="system", columns="severity", values="count", aggfunc="sum", sort=False,
                             fill_value=0)
        wide = wide.reindex(index=[s for s in self.systems if s in wide.index],
                            columns=[s for s in self.severities if s in wide.columns])
        outputs = e.groupby("system", sort=False)["outputs"].first()
        table = wide.reset_index()
        table.insert(1, "outputs", table["system"].map(outputs).astype(int))
        total = wide.sum(axis=1).to_numpy()
        table["spans per output"] = [fmt_num(t / n) if n else "–" for t, n in zip(total, table["outputs"],
                                                                                 strict=True)]
        table.columns = [str(c) for c in table.columns]
        return table

    def _mqm_table(self) -> pd.DataFrame:
        m = self.mqm
        return pd.DataFrame({
            "system": m["system"], "outputs": m["outputs"], "items": m["items"],
            "penalty per output": m["penalty"].map(fmt_num),
            "95% CI": [fmt_ci(lo, hi, pct=False, digits=2) for lo, hi in zip(m["low"], m["high"], strict=True)],
            "per 100 words": m["per_100_words"].map(fmt_num),
            "95% CI (per 100 words)": [fmt_ci(lo, hi, pct=False, digits=2)
                                       for lo, hi in zip(m["low_100"], m["high_100"], strict=True)]})

    def _mqm_note(self) -> str:
        weights = ", ".join(f"{k} {v:g}" for k, v in self.weights.items())
        note = self._fmt(MQM_NOTE.replace("{weights}", weights))
        if self.unweighted:
            note += f" Severities without a weight (counted 0): {', '.join(self.unweighted)}."
        if len(self.mqm) and self.mqm["per_100_words"].isna().all():
            note += " No score per 100 words: the outputs' words need the task's items file."
        return note

    def main_rows(self) -> list[dict[str, Any]]:
        rows = self.score.main_rows() if self.score is not None else []
        for r in self.mqm.itertuples():
            for what, value, low, high, n in (("per output", r.penalty, r.low, r.high, r.outputs),
                                              ("per 100 words", r.per_100_words, r.low_100, r.high_100, r.outputs)):
                if isinstance(value, float) and math.isnan(value):
                    continue
                rows.append({"section": join_title(self.title, f"MQM penalty {what} (lower is better)"),
                             "label": r.system, "detail": "", "value": value, "low": low, "high": high,
                             "p_value": math.nan, "n": n, "interval": "percentile bootstrap over items",
                             "kind": "num"})
        return rows

    def charts(self) -> dict[str, Any]:
        """The score's charts, and the MQM penalty per output per system with its interval (lower is better)."""
        import altair as alt

        from ..resultkit import BLUE

        out = self.score.charts() if self.score is not None else {}
        m = self.mqm[["system", "penalty", "low", "high", "outputs"]].copy()
        if not len(m):
            return out
        m["low"], m["high"] = m["low"].fillna(m["penalty"]), m["high"].fillna(m["penalty"])
        base = alt.Chart(m).encode(y=alt.Y("system:N", sort=self.systems, title=None))
        x = alt.X("penalty:Q", title="MQM penalty per output (lower is better)", scale=alt.Scale(zero=True))
        points = base.mark_point(filled=True, size=80, color=BLUE).encode(
            x=x, tooltip=["system:N", alt.Tooltip("penalty:Q", format=".2f"), alt.Tooltip("low:Q", format=".2f"),
                          alt.Tooltip("high:Q", format=".2f"), "outputs:Q"])
        bars = base.mark_rule(color="#111827", strokeWidth=2).encode(x="low:Q", x2="high:Q")
        out[f"spans_mqm:{self.task}"] = alt.layer(bars, points).properties(
            title=join_title(self.title, "MQM penalty"), height=alt.Step(28))
        return out


# ----------------------------------------------------------------------------- the answers' outputs


def _detail_column(rows: pd.DataFrame) -> pd.Series | None:
    """The answers' detail JSON: ``score_detail`` when the analysis read it, else ``detail``."""
    for name in ("score_detail", "detail"):
        if name in rows.columns and rows[name].notna().any():
            return rows[name]
    return None


def _outputs(rows: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> tuple[pd.DataFrame, list[str]]:
    """One row per output shown (answer, position): ``answer`` (row number), ``session_id``, ``question_index``,
    ``item``, ``system``, ``sys`` (code in the systems), ``evaluator`` (code), ``position``; and the systems in
    the task's order (:func:`system_order`). Outputs of a system outside the order are left out."""
    if not len(rows) or "sources" not in rows.columns:
        whole, text = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
        return pd.DataFrame({"answer": whole, "session_id": text, "question_index": whole, "item": text,
                             "system": text, "sys": whole, "evaluator": whole, "position": whole}), []
    source_code, shown = json_values(rows["sources"])
    lists = [[str(s) for s in lst] if isinstance(lst, list) else [] for lst in shown] + [[]]
    seen = {s for lst in lists for s in lst}
    systems = system_order(task, context, seen)
    lengths = np.array([len(lst) for lst in lists], dtype=np.int64)
    code = np.where(source_code >= 0, source_code, len(shown))
    n_out = lengths[code]
    answer = np.repeat(np.arange(len(rows)), n_out)
    position = np.arange(len(answer)) - np.repeat(np.cumsum(n_out) - n_out, n_out)
    width = max(int(lengths.max()), 1)
    table = np.full((len(lists), width), None, dtype=object)  # (sources value, position) -> system
    for c, lst in enumerate(lists):
        table[c, : len(lst)] = lst
    names = table[code[answer], position]
    if "item_ids" in rows.columns:
        item, item_names = item_codes(rows)
        item_label = np.append(np.asarray(item_names, dtype=object), None)[item]
    else:
        item_label = np.full(len(rows), None, dtype=object)
    none = np.flatnonzero(pd.isna(item_label))  # an answer without an item id: its own unit, never paired
    item_label[none] = [f"\x00answer {k}" for k in none]
    evaluator, _ = column_codes(rows["session_id"])
    out = pd.DataFrame({
        "answer": answer, "session_id": rows["session_id"].astype(str).to_numpy(dtype=object)[answer],
        "question_index": rows["question_index"].to_numpy().astype(np.int64)[answer],
        "item": item_label[answer], "system": names,
        "sys": pd.Index(systems, dtype=object).get_indexer(names) if len(names) else np.zeros(0, dtype=np.int64),
        "evaluator": evaluator[answer], "position": position})
    return out[out["sys"] >= 0].reset_index(drop=True), systems


def _spans(context: TaskContext, task_id: str, outputs: pd.DataFrame) -> pd.DataFrame:
    """The task's span rows matched to their output (``out``: row of ``outputs``), with ``segment``, ``start``,
    ``end``, ``severity``, ``category`` (None when none) and ``origin``; rows of no output given are dropped."""
    columns = ["out", "segment", "start", "end", "severity", "category", "origin"]
    frame = context.spans
    if frame is None or not len(frame) or not len(outputs):
        return pd.DataFrame(columns=columns)
    frame = frame.loc[(frame["task"].astype(str) == task_id).to_numpy()]
    keys = pd.DataFrame({"session_id": frame["session_id"].astype(str).to_numpy(dtype=object),
                         "question_index": pd.to_numeric(frame["question_index"]).to_numpy().astype(np.int64),
                         "system": frame["system"].astype(str).to_numpy(dtype=object),
                         "segment": pd.to_numeric(frame["segment"]).fillna(0).to_numpy().astype(np.int64),
                         "start": pd.to_numeric(frame["start_char"]).to_numpy().astype(np.int64),
                         "end": pd.to_numeric(frame["end_char"]).to_numpy().astype(np.int64),
                         "severity": frame["severity"].astype(str).to_numpy(dtype=object),
                         "category": frame["category"].astype(object).where(frame["category"].notna(), None)
                         .to_numpy(dtype=object),
                         "origin": frame["origin"].astype(str).to_numpy(dtype=object)})
    index = outputs[["session_id", "question_index", "system"]].assign(out=np.arange(len(outputs)))
    joined = keys.merge(index, on=["session_id", "question_index", "system"], how="inner", sort=False)
    joined["category"] = joined["category"].astype(object).where(joined["category"].notna(), None)
    return joined[columns].reset_index(drop=True)


def _item_of(context: TaskContext, item_id: str) -> Any:
    """The item of the task's items file with this id; None without the file or the item."""
    if context.items is None:
        return None
    try:
        return context.items.by_id(item_id)
    except KeyError:
        return None


def _segment_texts(context: TaskContext, item_id: str, system: str) -> list[str] | None:
    """The output of ``system`` on the item, one text per segment (one for a single segment); None when unknown."""
    item = _item_of(context, item_id)
    if item is None:
        return None
    if item.segments:
        texts = [seg.outputs.get(system) for seg in item.segments]
        return None if any(t is None for t in texts) else texts
    text = item.outputs.get(system)
    return None if text is None else [text]


# ----------------------------------------------------------------------------- the analysis


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> SpansResult:
    """Per system: the scores (as the score kind), error counts per severity and category, the MQM score with
    bootstrap intervals, ranks from Holm-corrected paired tests; the evaluators' agreement on the spans; ESA-AI's
    suggestions kept, changed and deleted; time per span and per segment."""
    options = context.options
    task_id = str(task["id"])
    rows = rows_of(ev, task_id, ["session_id", "question_index", "sources", "item_ids", "score_detail", "detail"])
    rows = rows.reset_index(drop=True)
    detail = _detail_column(rows)
    score = score_analysis.results(ev, task, context) if {"score_detail", "detail"} & set(ev.columns) else None
    if score is not None and not score.scales:
        score = None  # a task without scales (an MQM study may ask for none)
    outputs, systems = _outputs(rows, task, context)
    spans = _spans(context, task_id, outputs)
    kept = spans[spans["origin"] != DELETED]
    weights = mqm_weights(task)
    severities = list(dict.fromkeys([*(str(s) for s in task.get("severities") or []),
                                     *sorted(set(kept["severity"]))]))
    segments = _segments(outputs, spans, context)
    # the weights the note lists: those this task can use (its severities; a category weight only with categories,
    # of a category of its taxonomy): an ESA study's note does not list MQM's punctuation weight
    taxonomy = task.get("categories")
    usable = {key: w for key, w in weights.items() if key.partition(":")[0] in severities and (
        ":" not in key or taxonomy == "free" or (isinstance(taxonomy, Mapping)
                                                  and key.partition(":")[2].partition("/")[0] in taxonomy))}
    common = {"task": task_id, "title": task.get("title", task_id), "protocol": str(task.get("protocol", "esa")),
              "score": score, "severities": severities, "weights": usable, "options": options,
              "n_answers": len(rows), "outputs_per_question": int(task.get("outputs_per_question", 1)),
              "prefill": bool(task.get("prefill")), "systems": systems}
    if context.spans is None:
        empty = {name: pd.DataFrame(columns=cols) for name, cols in (
            ("errors", ["system", "severity", "count", "outputs", "per_output"]),
            ("categories", ["system", "category", "count", "outputs", "per_output"]), ("mqm", MQM_COLUMNS),
            ("ranking", RANK_COLUMNS), ("pairs", PAIR_COLUMNS), ("agreement", AGREEMENT_COLUMNS),
            ("esa_ai", ESA_AI_COLUMNS), ("timing", TIME_COLUMNS))}
        ranking = _score_ranking(score, options.confidence) if score is not None else empty["ranking"]
        return SpansResult(**common, **{**empty, "ranking": ranking},
                           spans_note="No span tables: the spans were not given to the analysis.")
    weight = _weights_of(kept, weights)
    unweighted = sorted({s for s in kept["severity"] if s not in weights})
    mqm, pairs = _mqm(outputs, kept, weight, systems, context, options)
    ranking = pd.concat([_score_ranking(score, options.confidence) if score is not None else None,
                         _ranks("MQM penalty per output", dict(zip(mqm["system"], mqm["penalty"], strict=True)),
                                pairs, higher_better=False, alpha=1 - options.confidence)], ignore_index=True)
    return SpansResult(
        **common, errors=_errors(outputs, kept, systems, severities),
        categories=_categories(outputs, kept, systems, task), mqm=mqm, ranking=ranking[RANK_COLUMNS], pairs=pairs,
        agreement=_agreement(outputs, kept, segments, task, context),
        esa_ai=_esa_ai(outputs, spans, systems, bool(task.get("prefill"))),
        timing=_timing(rows, detail, outputs, spans, segments, systems), unweighted=unweighted)


def _weights_of(spans: pd.DataFrame, weights: Mapping[str, float]) -> np.ndarray:
    """The MQM weight of every span (:func:`span_weight`, once per distinct severity and category)."""
    if not len(spans):
        return np.zeros(0)
    key = spans["severity"].astype(str) + "\x00" + spans["category"].fillna("").astype(str)
    code, distinct = pd.factorize(key)
    values = np.array([span_weight(k.split("\x00")[0], k.split("\x00", 1)[1] or None, weights) for k in distinct])
    return values[code]


def _segments(outputs: pd.DataFrame, spans: pd.DataFrame, context: TaskContext) -> np.ndarray:
    """Per output, its number of segments: the item's in the items file, else 1 + the highest segment its item's
    spans name (in any answer), else 1."""
    if not len(outputs):
        return np.zeros(0, dtype=np.int64)
    seen = pd.Series(spans["segment"].to_numpy(dtype=np.int64), index=outputs["item"].to_numpy()[
        spans["out"].to_numpy(dtype=np.int64)]).groupby(level=0).max() if len(spans) else pd.Series(dtype=np.int64)
    per_item: dict[str, int] = {}
    for item_id in pd.unique(outputs["item"]):
        item = _item_of(context, item_id)
        per_item[item_id] = (len(item.segments) or 1) if item is not None else int(seen.get(item_id, 0)) + 1
    return outputs["item"].map(per_item).to_numpy(dtype=np.int64)


def _errors(outputs: pd.DataFrame, kept: pd.DataFrame, systems: list[str], severities: list[str]) -> pd.DataFrame:
    """Spans per system and severity, every severity listed for every system with an output."""
    n_out = np.bincount(outputs["sys"], minlength=len(systems)) if len(outputs) else np.zeros(len(systems), int)
    sev_index = pd.Index(severities, dtype=object)
    k = len(severities)
    sys = outputs["sys"].to_numpy()[kept["out"].to_numpy(dtype=np.int64)] if len(kept) else np.zeros(0, int)
    counts = np.bincount(sys * k + sev_index.get_indexer(kept["severity"]), minlength=len(systems) * k).reshape(
        len(systems), k) if k else np.zeros((len(systems), 0), int)
    return pd.DataFrame([{"system": systems[s], "severity": severities[v], "count": int(counts[s, v]),
                          "outputs": int(n_out[s]), "per_output": counts[s, v] / n_out[s]}
                         for s in range(len(systems)) if n_out[s] for v in range(k)],
                        columns=["system", "severity", "count", "outputs", "per_output"])


def _categories(outputs: pd.DataFrame, kept: pd.DataFrame, systems: list[str],
                task: Mapping[str, Any]) -> pd.DataFrame:
    """Spans per system and category (the taxonomy's order, then the others seen, sorted); empty for a task
    without categories whose spans have none."""
    columns = ["system", "category", "count", "outputs", "per_output"]
    given = task.get("categories")
    found = kept["category"].dropna().astype(str)
    if not len(outputs) or (not given and not len(found)):
        return pd.DataFrame(columns=columns)
    order: list[str] = []
    if isinstance(given, Mapping):
        for top, subs in given.items():
            order += [f"{top}/{sub}" for sub in subs] if subs else [str(top)]
    order = list(dict.fromkeys([*order, *sorted(set(found))]))
    labels = kept["category"].astype(object).where(kept["category"].notna(), "none").astype(str)
    if (labels == "none").any() and "none" not in order:
        order.append("none")
    n_out = np.bincount(outputs["sys"], minlength=len(systems))
    sys = outputs["sys"].to_numpy()[kept["out"].to_numpy(dtype=np.int64)]
    counts = pd.crosstab(pd.Categorical(np.asarray(systems, dtype=object)[sys], categories=systems),
                         pd.Categorical(labels, categories=order), dropna=False)
    return pd.DataFrame([{"system": s, "category": c, "count": int(counts.loc[s, c]),
                          "outputs": int(n_out[k]), "per_output": counts.loc[s, c] / n_out[k]}
                         for k, s in enumerate(systems) if n_out[k] for c in order], columns=columns)


def _mqm(outputs: pd.DataFrame, kept: pd.DataFrame, weight: np.ndarray, systems: list[str], context: TaskContext,
         options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The MQM score per system (per output and per 100 words, bootstrap over items) and the paired Wilcoxon tests
    of the items' mean penalties per system (Holm-adjusted)."""
    penalty = np.bincount(kept["out"].to_numpy(dtype=np.int64), weights=weight, minlength=len(outputs)) \
        if len(outputs) else np.zeros(0)
    item_code, item_names = pd.factorize(outputs["item"]) if len(outputs) else (np.zeros(0, int), [])
    k, n_items = len(systems), len(item_names)
    cell = item_code * max(k, 1) + outputs["sys"].to_numpy(dtype=np.int64)
    total = np.bincount(cell, weights=penalty, minlength=n_items * k).reshape(n_items, k)
    count = np.bincount(cell, minlength=n_items * k).reshape(n_items, k)
    words = np.full((n_items, k), np.nan)
    for i, item_id in enumerate(item_names):
        item = _item_of(context, item_id)
        for s, system in enumerate(systems):
            text = None if item is None else item.outputs.get(system)
            if text is not None and count[i, s]:
                words[i, s] = len(text.split())
    rows = []
    conf, b, seed = options.confidence, options.bootstrap_resamples, options.bootstrap_seed
    for s, system in enumerate(systems):
        judged = count[:, s] > 0
        if not judged.any():
            continue
        per_output = stats.ratio_ci(total[judged, s], count[judged, s], conf, b, seed)
        known = judged & ~np.isnan(words[:, s])
        per_100 = stats.ratio_ci(100 * total[known, s], count[known, s] * words[known, s], conf, b, seed) \
            if known.any() else stats.RatioCI(math.nan, math.nan, math.nan, 0)
        rows.append({"system": system, "outputs": int(count[:, s].sum()), "items": int(judged.sum()),
                     "penalty": per_output.value, "low": per_output.low, "high": per_output.high,
                     "word_items": int(known.sum()), "per_100_words": per_100.value, "low_100": per_100.low,
                     "high_100": per_100.high})
    means = np.divide(total, count, out=np.full((n_items, k), np.nan), where=count > 0)
    pairs = []
    for a, c in itertools.combinations(range(k), 2):
        both = ~(np.isnan(means[:, a]) | np.isnan(means[:, c]))
        if not both.any():
            continue
        test = stats.paired_wilcoxon(means[both, a], means[both, c])
        pairs.append({"pair": f"{systems[a]} vs {systems[c]}", "first": systems[a], "second": systems[c],
                      "n": test.n, "mean_diff": float((means[both, a] - means[both, c]).mean()),
                      "hodges_lehmann": test.hodges_lehmann, "w_plus": test.statistic, "p_value": test.p_value})
    pair_frame = pd.DataFrame(pairs, columns=PAIR_COLUMNS[:-1])
    pair_frame["p_holm"] = stats.holm(pair_frame["p_value"].to_numpy(dtype=float))
    return pd.DataFrame(rows, columns=MQM_COLUMNS), pair_frame


def _ranks(measure: str, values: Mapping[str, float], pairs: pd.DataFrame, higher_better: bool,
           alpha: float) -> pd.DataFrame:
    """Rank = 1 + the systems significantly better (``pairs``' ``p_holm`` < ``alpha``, the direction by the sign of
    the Hodges–Lehmann estimate, else of the mean difference), best value first within a rank."""
    better: dict[str, list[str]] = {s: [] for s in values}
    for r in pairs.itertuples():
        if not (r.p_holm < alpha) or r.first not in values or r.second not in values:
            continue
        shift = r.hodges_lehmann if r.hodges_lehmann and not math.isnan(r.hodges_lehmann) else r.mean_diff
        if not shift:
            continue
        winner, loser = (r.first, r.second) if (shift > 0) == higher_better else (r.second, r.first)
        better[loser].append(winner)
    order = list(values)
    frame = pd.DataFrame({"measure": measure, "system": order, "value": [values[s] for s in order],
                          "rank": [1 + len(better[s]) for s in order],
                          "better_than": [", ".join(w for w in order if s in better[w]) for s in order]},
                         columns=RANK_COLUMNS)
    key = frame["value"].to_numpy(dtype=float) * (-1 if higher_better else 1)
    return frame.iloc[np.lexsort((key, frame["rank"].to_numpy()))].reset_index(drop=True)


def _score_ranking(score: score_analysis.ScoreResult, confidence: float) -> pd.DataFrame:
    """The systems ranked by each scale's mean, from the score's Wilcoxon tests, Holm-adjusted per scale."""
    parts = []
    for scale, means in score.means.groupby("scale", sort=False):
        w = score.wilcoxon[score.wilcoxon["scale"] == scale]
        w = w.assign(p_holm=stats.holm(w["p_value"].to_numpy(dtype=float)))
        parts.append(_ranks(f"{means['label'].iloc[0]} (mean)", dict(zip(means["system"], means["mean"],
                                                                         strict=True)), w, True, 1 - confidence))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=RANK_COLUMNS)


def _agreement(outputs: pd.DataFrame, kept: pd.DataFrame, segments: np.ndarray, task: Mapping[str, Any],
               context: TaskContext) -> pd.DataFrame:
    """Character-level F1 and Cohen's kappa between evaluators on the output segments two or more annotated."""
    options = context.options
    missing = 1 if task.get("missing_token") else 0
    first: dict[tuple[str, int, str], dict[int, int]] = {}  # (item, segment, system) -> evaluator -> output
    for out, (item, system, who, n_seg) in enumerate(zip(outputs["item"], outputs["system"], outputs["evaluator"],
                                                         segments, strict=True)):
        for seg in range(int(n_seg)):
            first.setdefault((item, seg, system), {}).setdefault(int(who), out)
    marked: dict[tuple[int, int], list[Span]] = {}
    for out, seg, start, end, sev, cat in zip(kept["out"], kept["segment"], kept["start"], kept["end"],
                                              kept["severity"], kept["category"], strict=True):
        marked.setdefault((int(out), int(seg)), []).append(Span(int(start), int(end), str(sev), cat))
    pair_codes: dict[tuple[int, int], int] = {}
    rows: list[tuple[int, int, float, float, float, float, float]] = []
    evaluators: set[int] = set()
    no_length = False
    for u, ((item, seg, system), by) in enumerate(first.items()):
        if len(by) < 2:
            continue
        texts = _segment_texts(context, item, system)
        length = len(texts[seg]) + missing if texts is not None and seg < len(texts) else None
        evaluators.update(by)
        for e1, e2 in itertools.combinations(sorted(by), 2):
            a, b = marked.get((by[e1], seg), []), marked.get((by[e2], seg), [])
            ca = {c for span in a for c in range(span.start, span.end)}
            cb = {c for span in b for c in range(span.start, span.end)}
            both = len(ca & cb)
            if length is None:
                no_length = True
                neither = math.nan
            else:
                neither = max(length, max(ca | cb, default=-1) + 1) - len(ca | cb)
            rows.append((pair_codes.setdefault((e1, e2), len(pair_codes)), u, char_f1(a, b), both,
                         len(ca) - both, len(cb) - both, neither))
    n_eval = int(outputs["evaluator"].nunique()) if len(outputs) else 0
    if not rows:
        why = ("no answers yet" if not len(outputs) else "only one evaluator has annotated" if n_eval < 2 else
               "no output was annotated by two or more evaluators")
        return pd.DataFrame([{"measure": m, "value": math.nan, "low": math.nan, "high": math.nan, "pairs": 0,
                              "units": 0, "evaluators": 0, "note": f"needs outputs annotated by two or more "
                              f"evaluators ({why})"} for m in ("character F1", "Cohen's kappa (characters)")],
                            columns=AGREEMENT_COLUMNS)
    table = np.array(rows, dtype=float)
    counts = table[:, 3:7]
    if no_length:
        counts = np.full_like(counts, np.nan)  # kappa needs every output's length
    res = stats.pair_agreement(table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2], counts,
                               options.confidence, options.bootstrap_resamples, options.bootstrap_seed)
    kappa_note = ""
    if no_length:
        kappa_note = ("needs the outputs' lengths from the task's items file: "
                      f"{context.items_note or 'some outputs are not in it'}")
    elif math.isnan(res.kappa):
        kappa_note = "undefined: within every pair, the characters were all in one class (none or all marked)"
    common = {"pairs": res.pairs, "units": res.units, "evaluators": len(evaluators)}
    return pd.DataFrame([
        {"measure": "character F1", "value": res.f1, "low": res.f1_low, "high": res.f1_high, **common, "note": ""},
        {"measure": "Cohen's kappa (characters)", "value": res.kappa, "low": res.kappa_low, "high": res.kappa_high,
         **common, "note": kappa_note}], columns=AGREEMENT_COLUMNS)


def _esa_ai(outputs: pd.DataFrame, spans: pd.DataFrame, systems: list[str], prefill: bool) -> pd.DataFrame:
    """Per system: the suggestions kept, changed and deleted (counts and shares) and the spans added; empty when
    no suggestion was shown and the task has no ``prefill``."""
    origin = spans["origin"].to_numpy(dtype=object)
    if not prefill and not np.isin(origin, SUGGESTED).any():
        return pd.DataFrame(columns=ESA_AI_COLUMNS)
    n_out = np.bincount(outputs["sys"], minlength=len(systems)) if len(outputs) else np.zeros(len(systems), int)
    sys = outputs["sys"].to_numpy()[spans["out"].to_numpy(dtype=np.int64)] if len(spans) else np.zeros(0, int)
    rows = []
    for s, system in enumerate(systems):
        if not n_out[s]:
            continue
        mine = origin[sys == s]
        kept, changed, deleted, unreviewed = (int((mine == o).sum()) for o in SUGGESTED)
        added, shown = int((mine == "added").sum()), kept + changed + deleted + unreviewed
        shares = [x / shown if shown else math.nan for x in (kept, changed, deleted, unreviewed)]
        rows.append({"system": system, "outputs": int(n_out[s]), "suggestions": shown, "kept": kept,
                     "changed": changed, "deleted": deleted, "unreviewed": unreviewed, "kept_share": shares[0],
                     "changed_share": shares[1], "deleted_share": shares[2], "unreviewed_share": shares[3],
                     "added": added, "added_per_output": added / n_out[s]})
    frame = pd.DataFrame(rows, columns=ESA_AI_COLUMNS)
    return frame if frame["suggestions"].sum() or prefill else frame.iloc[0:0]


def _actions(detail: pd.Series | None) -> pd.DataFrame:
    """Every logged action of the answers: ``row`` (answer), ``t`` (ms), ``action``, ``output`` and ``segment``
    (NaN when not given), parsed in bulk by pyarrow's JSON reader (other keys ignored)."""
    columns = ["row", "t", "action", "output", "segment"]
    if detail is None or not len(detail):
        return pd.DataFrame(columns=columns)
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    action = pa.struct([("t", pa.float64()), ("action", pa.string()), ("output", pa.float64()),
                        ("segment", pa.float64())])
    schema = pa.schema([("actions", pa.list_(action))])
    table = pj.read_json(pa.BufferReader(ndjson_buffer(detail)),
                         parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    lists = table.column("actions").combine_chunks()
    if not len(lists) or lists.null_count == len(lists):
        return pd.DataFrame(columns=columns)
    flat = pc.list_flatten(lists)
    return pd.DataFrame({"row": pc.list_parent_indices(lists).to_numpy().astype(np.int64),
                         **{name: flat.field(name).to_numpy(zero_copy_only=False) for name in columns[1:]}})


def _timing(rows: pd.DataFrame, detail: pd.Series | None, outputs: pd.DataFrame, spans: pd.DataFrame,
            segments: np.ndarray, systems: list[str]) -> pd.DataFrame:
    """Per system: the seconds of span actions per span and of all actions per segment, over the outputs of the
    answers with an action log (gaps between actions capped at :data:`ACTION_GAP_CAP_MS`)."""
    acts = _actions(detail)
    acts = acts[acts["t"].notna()]
    if not len(acts) or not len(outputs):
        return pd.DataFrame(columns=TIME_COLUMNS)
    acts = acts.iloc[np.lexsort((acts["t"].to_numpy(), acts["row"].to_numpy()))]
    row, t = acts["row"].to_numpy(), acts["t"].to_numpy(dtype=float)
    previous = np.r_[0.0, t[:-1]]
    previous[np.r_[True, row[1:] != row[:-1]]] = 0.0  # the first action of an answer: since the question was shown
    gap = np.clip(t - previous, 0, ACTION_GAP_CAP_MS)
    # the output each action names (an answer of one output: that one when it names none)
    shown = np.bincount(outputs["answer"], minlength=len(rows))  # (an answer's outputs of the task's systems)
    position = acts["output"].to_numpy(dtype=float)
    position = np.where(np.isnan(position) & (shown[row] == 1), 0, position)
    ok = ~np.isnan(position) & (position >= 0)
    # the output at (answer, position): an output of a system outside the task's was dropped, so look it up
    where = pd.Series(np.arange(len(outputs)), index=pd.MultiIndex.from_arrays([outputs["answer"],
                                                                                 outputs["position"]]))
    keys = pd.MultiIndex.from_arrays([row[ok], position[ok].astype(np.int64)])
    out = where.reindex(keys).to_numpy()
    found = ~np.isnan(out)
    out = out[found].astype(np.int64)
    gap_ok = gap[ok][found]
    is_span = np.isin(acts["action"].to_numpy(dtype=object)[ok][found], SPAN_ACTIONS)
    span_time = np.bincount(out, weights=gap_ok * is_span, minlength=len(outputs))
    all_time = np.bincount(out, weights=gap_ok, minlength=len(outputs))
    logged = np.zeros(len(rows), dtype=bool)
    logged[np.unique(row)] = True
    logged_out = logged[outputs["answer"].to_numpy()]
    n_spans = np.bincount(spans["out"].to_numpy(dtype=np.int64), minlength=len(outputs)) if len(spans) else \
        np.zeros(len(outputs), dtype=np.int64)
    sys = outputs["sys"].to_numpy()
    frame = []
    for s, system in enumerate(systems):
        mine = logged_out & (sys == s)
        if not mine.any():
            continue
        sp, seg = int(n_spans[mine].sum()), int(segments[mine].sum())
        span_s, seg_s = float(span_time[mine].sum()) / 1000, float(all_time[mine].sum()) / 1000
        frame.append({"system": system, "outputs": int(mine.sum()), "span_seconds": span_s, "spans": sp,
                      "seconds_per_span": span_s / sp if sp else math.nan, "segment_seconds": seg_s,
                      "segments": seg, "seconds_per_segment": seg_s / seg if seg else math.nan})
    return pd.DataFrame(frame, columns=TIME_COLUMNS)
