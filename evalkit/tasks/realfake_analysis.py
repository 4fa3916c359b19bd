"""Analysis of ``realfake`` tasks (:mod:`evalkit.tasks.realfake`): one text at a time, written by a person or
generated, and how sure.

An answer stores ``response`` = ``real`` / ``generated``, the shown text's system in ``review_source`` and the
confidence level (1..k) in ``detail``; the task's ``target`` (the real texts) comes from its description.
Signal detection takes the real texts as the signal: a hit is "real" said of a real text, a false alarm
"real" said of a generated one.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _st

from .. import stats
from ..resultkit import (
    Block,
    ResultDefaults,
    TaskContext,
    code_of,
    column_codes,
    fmt_ci,
    fmt_num,
    fmt_pct,
    interval_row,
    json_int,
)
from ..text import join_title
from .items_analysis import count_text, rate_columns, rows_of, system_order

__all__ = ["RealFakeResult", "d_prime_interval", "results"]

ACCURACY_NOTE = (
    "Correct: 'real' said of a text of the target, 'generated' of any other. Wilson (1927) interval and exact "
    "two-sided binomial test against 50% (guessing; each evaluator's questions are half real, half generated).")
SYSTEM_NOTE = (
    "Judged real: the share of the system's texts called real, with the Wilson interval and an exact test "
    "against 50%. For a generated system it is the fooling rate (its texts passed as real) and detection = 1 − "
    "fooling; for the target, the share recognised as real.")
DPRIME_NOTE = (
    "d' = z(H) − z(F) and criterion c = −(z(H) + z(F)) / 2 (Macmillan & Creelman 2005), H = 'real' said of the "
    "target's texts, F = 'real' said of the generated texts (all, or one system's), with the log-linear "
    "correction (Hautus 1995: +0.5 to each count, +1 to each total). d' = 0: the generated texts cannot be told "
    "apart; c > 0: a leaning towards 'generated'. {ci} interval: d' ± z · SE, SE² = H(1 − H) / (n_H φ(z_H)²) + "
    "F(1 − F) / (n_F φ(z_F)²) (Gourevitch & Galanter 1967).")
CALIBRATION_NOTE = (
    "Reliability of the stated confidence: level l of k stands for a probability of being right of 0.5 + 0.5 "
    "(l − 1) / (k − 1) (guessing .. certain); accuracy per level with the Wilson interval. Expected calibration "
    "error (Naeini et al. 2015; Guo et al. 2017) = Σ n_l / N · |accuracy_l − stated_l| = {ece}; mean stated "
    "{stated} vs accuracy {accuracy} ({verdict}).")
POWER_NOTE = (
    "Judgments a two-sided test against 50% at alpha .05 needs for power .8 if the current rate is the true one "
    "(Cohen's h, Cohen 1988); '–' at 50% or with nothing yet.")


def d_prime_interval(hits: int, n_signal: int, false_alarms: int, n_noise: int,
                     confidence: float = 0.95) -> tuple[stats.DPrime, float, float]:
    """d' (log-linear correction) with its normal-approximation interval (Gourevitch & Galanter 1967):
    ``(d', low, high)``; NaN bounds when d' is undefined."""
    d = stats.d_prime(hits, n_signal, false_alarms, n_noise)
    if math.isnan(d.d_prime):
        return d, math.nan, math.nan
    h, f = d.hit_rate, d.false_alarm_rate
    # the corrected rates over the corrected totals (n + 1), as d_prime uses them
    var = (h * (1 - h) / ((n_signal + 1) * _st.norm.pdf(_st.norm.ppf(h)) ** 2)
           + f * (1 - f) / ((n_noise + 1) * _st.norm.pdf(_st.norm.ppf(f)) ** 2))
    half = float(_st.norm.ppf((1 + confidence) / 2)) * math.sqrt(var)
    return d, d.d_prime - half, d.d_prime + half


@dataclass
class RealFakeResult(ResultDefaults):
    """Everything about one real-or-generated task."""

    task: str
    title: str
    target: str
    accuracy: pd.DataFrame  # correct, n, rate, low, high, p_value (one row)
    systems: pd.DataFrame  # system, role, n, judged_real, rate, low, high, p_value, detection, detection_low,
    #                        detection_high
    signal: pd.DataFrame  # versus, d_prime, low, high, criterion, hit_rate, false_alarm_rate, n_real, n_generated
    calibration: pd.DataFrame  # level, label, stated, accuracy, n, low, high (empty without confidence)
    ece: float
    mean_stated: float
    power: pd.DataFrame  # what, rate, n, needed_total, further
    options: Any
    n_answers: int
    kind: str = "realfake"

    def describe(self) -> str:
        return f"real or generated, real = {self.target}"

    def blocks(self) -> list[Block]:
        ci = f"{round(100 * self.options.confidence)}%"
        a = self.accuracy
        out = [Block("Accuracy", a.assign(**rate_columns(a)).rename(columns={"rate %": "accuracy %"})[
            ["correct", "n", "accuracy %", "95% CI", "p"]], ACCURACY_NOTE)]
        s = self.systems
        shown = s.assign(**rate_columns(s), **rate_columns(s.rename(columns={
            "detection": "detection rate", "detection_low": "detection low", "detection_high": "detection high"}),
            prefix="detection ", p=False))
        out.append(Block("Judged real, per system (fooling rate of the generated systems)", shown[
            ["system", "role", "n", "judged_real", "rate %", "95% CI", "p", "detection rate %",
             "detection 95% CI"]].rename(columns={"rate %": "judged real %", "judged_real": "judged real"}),
            SYSTEM_NOTE, f"realfake_systems:{self.task}" if s["n"].sum() else ""))
        d = self.signal
        out.append(Block("Sensitivity (d') and bias", d.assign(
            d_prime=d["d_prime"].map(lambda v: fmt_num(v, 3)), criterion=d["criterion"].map(lambda v: fmt_num(v, 3)),
            hit_rate=d["hit_rate"].map(fmt_pct), false_alarm_rate=d["false_alarm_rate"].map(fmt_pct),
            **{"95% CI": [fmt_ci(lo, hi, pct=False, digits=3) for lo, hi in zip(d["low"], d["high"], strict=True)]})[
            ["versus", "d_prime", "95% CI", "criterion", "hit_rate", "false_alarm_rate", "n_real", "n_generated"]
        ].rename(columns={"d_prime": "d'", "criterion": "c", "hit_rate": "H %", "false_alarm_rate": "F %",
                          "n_real": "real texts", "n_generated": "generated texts"}), DPRIME_NOTE.format(ci=ci)))
        c = self.calibration
        if len(c):
            over = self.accuracy["rate"].iloc[0] - self.mean_stated
            verdict = ("over-confident" if over < 0 else "under-confident" if over > 0 else "calibrated on average")
            out.append(Block("Calibration of the confidence", c.assign(
                stated=c["stated"].map(fmt_pct), accuracy=c["accuracy"].map(fmt_pct),
                **{"95% CI": [fmt_ci(lo, hi) for lo, hi in zip(c["low"], c["high"], strict=True)]})[
                ["level", "label", "stated", "accuracy", "95% CI", "n"]].rename(
                columns={"label": "confidence", "stated": "stated %", "accuracy": "accuracy %"}),
                CALIBRATION_NOTE.format(ece=fmt_num(self.ece, 3), stated=fmt_pct(self.mean_stated) + "%",
                                        accuracy=fmt_pct(self.accuracy["rate"].iloc[0]) + "%", verdict=verdict),
                f"realfake_calibration:{self.task}" if c["n"].sum() else ""))
        pw = self.power
        out.append(Block("Sample size: judgments needed", pw.assign(
            rate=pw["rate"].map(fmt_pct), needed_total=pw["needed_total"].map(count_text),
            further=pw["further"].map(count_text)).rename(columns={"rate": "rate %"}), POWER_NOTE))
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        a = self.accuracy.iloc[0]
        rows = [{"section": join_title(self.title, "accuracy (vs 50%)"), "label": "all answers", "detail": "",
                 "value": a["rate"], "low": a["low"], "high": a["high"], "p_value": a["p_value"], "n": a["n"],
                 "interval": "Wilson", "kind": "pct"}]
        for r in self.systems.itertuples():
            rows.append({"section": join_title(self.title, "judged real (vs 50%)"), "label": r.system,
                         "detail": "fooling rate" if r.role == "generated" else "recognised as real",
                         "value": r.rate, "low": r.low, "high": r.high, "p_value": r.p_value, "n": r.n,
                         "interval": "Wilson", "kind": "pct"})
        for r in self.signal.itertuples():
            bias = f"c = {r.criterion:.3f}" if not math.isnan(r.criterion) else ""
            rows.append({"section": join_title(self.title, "sensitivity d'"), "label": r.versus, "detail": bias,
                         "value": r.d_prime, "low": r.low, "high": r.high,
                         "p_value": math.nan, "n": r.n_real + r.n_generated,
                         "interval": "normal approximation (Gourevitch & Galanter)", "kind": "num"})
        if len(self.calibration):
            rows.append({"section": join_title(self.title, "expected calibration error"), "label": "all answers",
                         "detail": "", "value": self.ece, "low": math.nan, "high": math.nan, "p_value": math.nan,
                         "n": int(self.calibration["n"].sum()), "interval": "none (point estimate)", "kind": "num"})
        return rows

    def charts(self) -> dict[str, Any]:
        import altair as alt

        from ..resultkit import BLUE, RED, rate_chart

        out: dict[str, Any] = {}
        s = self.systems[self.systems["n"] > 0]
        if len(s):
            out[f"realfake_systems:{self.task}"] = rate_chart(
                s.assign(label=s["system"] + " (" + s["role"] + ")"), "label", 0.5,
                join_title(self.title, "judged real"), "share of its texts judged real")
        c = self.calibration[self.calibration["n"] > 0]
        if len(c):
            diagonal = alt.Chart(pd.DataFrame({"x": [0.5, 1.0], "y": [0.5, 1.0]})).mark_line(
                color=RED, strokeDash=[5, 4]).encode(x="x:Q", y="y:Q")
            base = alt.Chart(c)
            points = base.mark_point(filled=True, color=BLUE).encode(
                x=alt.X("stated:Q", title="stated confidence", scale=alt.Scale(domain=[0.4, 1.0]),
                        axis=alt.Axis(format="%")),
                y=alt.Y("accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
                size=alt.Size("n:Q", title="answers"),
                tooltip=["level:O", "label:N", alt.Tooltip("stated:Q", format=".0%"),
                         alt.Tooltip("accuracy:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%"),
                         alt.Tooltip("high:Q", format=".1%"), "n:Q"])
            bars = base.mark_rule(color="#111827", strokeWidth=2).encode(x="stated:Q", y="low:Q", y2="high:Q")
            out[f"realfake_calibration:{self.task}"] = alt.layer(diagonal, bars, points).properties(
                title=join_title(self.title, "reliability (confidence vs accuracy)"), height=260, width=320)
        return out


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> RealFakeResult:
    """Accuracy, the share judged real per system (fooling and detection rates), d' and criterion, calibration
    of the confidence (reliability table and expected calibration error) and sample sizes."""
    confidence = context.options.confidence
    target = str(task.get("target", ""))
    rows = rows_of(ev, task["id"], ["response", "review_source", "confidence", "detail"])
    response, response_names = column_codes(rows["response"])
    source, source_names = column_codes(rows["review_source"])
    said_real = response == code_of(response_names, "real")
    answered = said_real | (response == code_of(response_names, "generated"))
    keep = answered & (source >= 0)
    said_real, source = said_real[keep], source[keep]
    is_real = source == code_of(source_names, target)
    correct = said_real == is_real
    n = len(correct)
    accuracy = pd.DataFrame([{"correct": int(correct.sum()), **interval_row(int(correct.sum()), n, 0.5, confidence)}],
                            columns=["correct", "n", "rate", "low", "high", "p_value"])
    seen = {str(x) for x in source_names[np.unique(source)]} if n else set()
    systems = system_order(task, context, seen) or [target]  # the config's order, the target in its place
    index = pd.Index(systems, dtype=object)
    code = index.get_indexer(source_names.astype(object)) if len(source_names) else np.zeros(0, dtype=np.int64)
    sys_code = code[source] if n else np.zeros(0, dtype=np.int64)
    shown = np.bincount(sys_code[sys_code >= 0], minlength=len(systems))
    real_said = np.bincount(sys_code[(sys_code >= 0) & said_real], minlength=len(systems))
    system_rows = []
    for k, name in enumerate(systems):
        r = interval_row(int(real_said[k]), int(shown[k]), 0.5, confidence)
        system_rows.append({"system": name, "role": "target" if name == target else "generated",
                            "judged_real": int(real_said[k]), **r, "detection": 1 - r["rate"],
                            "detection_low": 1 - r["high"], "detection_high": 1 - r["low"]})
    system_table = pd.DataFrame(system_rows, columns=["system", "role", "n", "judged_real", "rate", "low", "high",
                                                      "p_value", "detection", "detection_low", "detection_high"])
    at = systems.index(target) if target in systems else -1
    hits, n_real = (int(real_said[at]), int(shown[at])) if at >= 0 else (0, 0)
    signal_rows = []
    versus = [("all generated", [k for k, s in enumerate(systems) if s != target])]
    versus += [(s, [k]) for k, s in enumerate(systems) if s != target]
    for label, which in versus:
        fa, n_fake = int(real_said[which].sum()), int(shown[which].sum())
        d, low, high = d_prime_interval(hits, n_real, fa, n_fake, confidence)
        signal_rows.append({"versus": label, "d_prime": d.d_prime, "low": low, "high": high,
                            "criterion": d.criterion, "hit_rate": hits / n_real if n_real else math.nan,
                            "false_alarm_rate": fa / n_fake if n_fake else math.nan, "n_real": n_real,
                            "n_generated": n_fake})
    labels = list(task.get("confidence") or [])
    calibration = pd.DataFrame(columns=["level", "label", "stated", "accuracy", "n", "low", "high"])
    ece = mean_stated = math.nan
    if len(labels) >= 2:
        level = json_int(rows, "confidence")[keep]
        level = np.where((level >= 1) & (level <= len(labels)), level, np.nan)
        cal = stats.expected_calibration_error(level, correct.astype(float), len(labels), confidence=confidence)
        calibration = cal.table.assign(label=labels)[["level", "label", "stated", "accuracy", "n", "low", "high"]]
        ece, mean_stated = cal.ece, cal.mean_stated
    power = []
    for what, rate, count in [("accuracy", accuracy["rate"].iloc[0], n)] + [
            (f"judged real: {r['system']}", r["rate"], r["n"]) for r in system_rows]:
        needed: int | None = None
        if count and not math.isnan(rate) and rate != 0.5:
            needed = stats.sample_size_one_proportion(rate, 0.5)
        power.append({"what": what, "rate": rate, "n": count, "needed_total": needed,
                      "further": None if needed is None else max(0, needed - count)})
    return RealFakeResult(
        task=task["id"], title=task.get("title", task["id"]), target=target, accuracy=accuracy,
        systems=system_table, signal=pd.DataFrame(signal_rows, columns=[
            "versus", "d_prime", "low", "high", "criterion", "hit_rate", "false_alarm_rate", "n_real",
            "n_generated"]), calibration=calibration, ece=ece, mean_stated=mean_stated,
        power=pd.DataFrame(power, columns=["what", "rate", "n", "needed_total", "further"]),
        options=context.options, n_answers=len(rows))
