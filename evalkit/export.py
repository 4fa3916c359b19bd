"""Reports of an :class:`evalkit.analysis.Report`: Markdown, a booktabs LaTeX table, CSV.

The results page and ``python -m evalkit report`` both call these, so the
numbers are the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from .analysis import Report

__all__ = ["fmt_ci", "fmt_p", "fmt_pct", "latex_table", "main_results", "markdown_report", "results_csv"]


def fmt_p(p: float | None) -> str:
    """APA-style p-value: ``< .001``, else three decimals without the leading zero."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    if p < 0.001:
        return "< .001"
    return f"{p:.3f}".replace("0.", ".", 1) if p < 1 else "1.000"


def _p_clause(p: float | None) -> str:
    text = fmt_p(p)
    return text if text.startswith("<") else f"= {text}"


def fmt_pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage; an en dash when undefined."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.{digits}f}"


def fmt_num(x: float | None, digits: int = 2) -> str:
    """A number with fixed decimals; an en dash when undefined; ±inf spelled out."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def fmt_ci(low: float, high: float, pct: bool = True, digits: int = 1) -> str:
    """``[low, high]`` as percentages (or plain numbers)."""
    f = fmt_pct if pct else fmt_num
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
        return "–"
    return f"[{f(low, digits)}, {f(high, digits)}]"


def main_results(report: Report) -> pd.DataFrame:
    """The headline table: one row per (section, label, detail) with rate or mean, interval and p-value.

    Sections: triplet selection rates (vs chance 1/k), pairwise win rates (vs
    .5, first source of each pair), Bradley–Terry log-strengths, rating MOS.
    """
    rows: list[dict] = []
    ci = report.options.confidence
    for t in report.triplets:
        k = max(len(t.sources), 2)
        for r in t.selection.itertuples():
            rows.append({"section": f"{t.title}: picked as {t.target or 'target'} (chance {100 / k:.1f}%)",
                         "label": r.source, "detail": r.role, "value": r.rate, "low": r.low, "high": r.high,
                         "p_value": r.p_value, "n": r.n, "kind": "pct"})
    for p in report.pairwise:
        for pair, group in p.win_rates.groupby("pair", sort=False):
            first = group.iloc[0]
            rows.append({"section": f"{p.title}: win rate (vs 50%)", "label": pair, "detail": first["source"],
                         "value": first["rate"], "low": first["low"], "high": first["high"],
                         "p_value": first["p_value"], "n": first["n"], "kind": "pct"})
    for r in report.bradley_terry_all.itertuples():
        rows.append({"section": "Bradley–Terry log-strength (all pairs)", "label": r.source, "detail": "",
                     "value": r.log_strength, "low": math.nan, "high": math.nan, "p_value": math.nan, "n": math.nan,
                     "kind": "num"})
    for rt in report.ratings:
        for r in rt.mos.itertuples():
            value = r.weighted_mean if report.options.familiarity_weighted else r.mean
            rows.append({"section": f"{rt.title}: mean score (1–5)"
                         + (", familiarity-weighted" if report.options.familiarity_weighted else ""),
                         "label": r.label, "detail": "", "value": value, "low": r.low, "high": r.high,
                         "p_value": math.nan, "n": r.n, "kind": "num"})
    frame = pd.DataFrame(rows, columns=["section", "label", "detail", "value", "low", "high", "p_value", "n",
                                        "kind"])
    frame.attrs["confidence"] = ci
    return frame


def _tex(text: object) -> str:
    """Escape LaTeX special characters in a cell."""
    specials = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--"}
    return "".join(specials.get(ch, ch) for ch in str(text))


def latex_table(report: Report, *, label: str = "tab:human-eval") -> str:
    """A publication-ready booktabs table of the main results (needs ``\\usepackage{booktabs}``)."""
    table = main_results(report)
    pct_conf = f"{round(100 * report.options.confidence)}\\%"
    lines = [
        "% Requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\caption{{Human evaluation results ({report.n_sessions} evaluators, {report.n_completed} completed). "
        f"Rates in \\%, {pct_conf} Wilson intervals, exact binomial tests; scores with Student-$t$ "
        "intervals.}",
        f"\\label{{{label}}}",
        "\\begin{tabular}{llrrrl}",
        "\\toprule",
        f"Item & Detail & $n$ & Value & {pct_conf} CI & $p$ \\\\",
    ]
    for section, group in table.groupby("section", sort=False):
        lines.append("\\midrule")
        lines.append(f"\\multicolumn{{6}}{{l}}{{\\textit{{{_tex(section)}}}}} \\\\")
        for r in group.itertuples():
            if r.kind == "pct":
                value, ci = fmt_pct(r.value), fmt_ci(r.low, r.high)
            else:
                value, ci = fmt_num(r.value), fmt_ci(r.low, r.high, pct=False, digits=2)
            value = {"inf": "$\\infty$", "-inf": "$-\\infty$"}.get(value) or _tex(value)
            n = "" if isinstance(r.n, float) and math.isnan(r.n) else str(int(r.n))
            p = "" if isinstance(r.p_value, float) and math.isnan(r.p_value) else f"${_tex(fmt_p(r.p_value))}$"
            lines.append(f"{_tex(r.label)} & {_tex(r.detail)} & {n} & {value} & {_tex(ci)} & {p} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _md(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_No data yet._"
    cols = [str(c) for c in frame.columns]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        out.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(out)


def _rate_table(frame: pd.DataFrame, first: Iterable[str]) -> pd.DataFrame:
    out = frame[list(first)].copy()
    out["rate %"] = frame["rate"].map(fmt_pct)
    out["95% CI"] = [fmt_ci(lo, hi) for lo, hi in zip(frame["low"], frame["high"], strict=True)]
    out["p"] = frame["p_value"].map(fmt_p)
    return out


def markdown_report(report: Report) -> str:
    """Every result table as Markdown."""
    o = report.options
    parts = [f"# Results{': ' + report.title if report.title else ''}", "",
             f"{report.n_sessions} evaluators included ({report.n_completed} completed), {report.n_answers} "
             f"answers, {report.n_ratings} rated items. Options: completed only = {o.completed_only}, "
             f"familiarity-weighted = {o.familiarity_weighted}, fast threshold = {o.fast_ms} ms.", ""]
    for t in report.triplets:
        k = max(len(t.sources), 2)
        parts += [f"## {t.title} (`{t.task}`, triplet): which one is {t.target}?", "",
                  f"Selection rate per source (chance {100 / k:.1f}%, exact binomial test against 1/{k}):", "",
                  _md(_rate_table(t.selection, ["source", "role", "picked", "n"])), ""]
        if t.accuracy:
            a = t.accuracy
            parts += [f"Accuracy (found the {t.target} text): {a['picked']}/{a['n']} = {fmt_pct(a['rate'])}% "
                      f"{fmt_ci(a['low'], a['high'])}, p {_p_clause(a['p_value'])}.", ""]
        parts += ["Turing view (fooling rate = generated text picked as the target):", "",
                  _md(_rate_table(t.turing, ["source", "fooled", "n"])), "",
                  f"Fleiss' kappa over {t.kappa_basis}: {fmt_num(t.kappa, 3)} ({t.kappa_subjects} subjects, "
                  f"{t.kappa_raters} raters). Unmatched (length) questions answered: {t.unmatched}.", "",
                  "Per domain:", "", _md(_rate_table(t.per_domain, ["domain", "source", "picked", "n"])), ""]
    for p in report.pairwise:
        parts += [f"## {p.title} (`{p.task}`, pairwise, {p.response})", "", "Win rates (ties excluded from n):", "",
                  _md(_rate_table(p.win_rates, ["pair", "source", "wins", "ties", "n"])), ""]
        if not p.slider.empty:
            s = p.slider.copy()
            s["mean"] = s["mean"].map(lambda v: fmt_num(v, 1))
            s["95% CI"] = [fmt_ci(lo, hi, pct=False) for lo, hi in zip(p.slider["low"], p.slider["high"],
                                                                         strict=True)]
            parts += ["Slider (positive = the favoured source better, -100..100):", "",
                      _md(s[["pair", "favoured", "mean", "95% CI", "n", "positive_draws", "negative_draws"]]), ""]
        pw = p.power.copy()
        pw["rate"] = pw["rate"].map(fmt_pct)
        parts += ["Power (judgments per comparison for alpha .05, power .8 at the current effect):", "",
                  _md(pw), "", "Bradley–Terry log-strengths:", "",
                  _md(p.bradley_terry.assign(log_strength=p.bradley_terry["log_strength"].map(fmt_num))), ""]
    if report.pairwise:
        bt = report.bradley_terry_all
        parts += ["## Bradley–Terry over all pairwise tasks", "",
                  _md(bt.assign(log_strength=bt["log_strength"].map(fmt_num))), ""]
    for rt in report.ratings:
        mos = rt.mos.copy()
        for col in ("mean", "sd", "weighted_mean"):
            mos[col] = mos[col].map(fmt_num)
        mos["95% CI"] = [fmt_ci(lo, hi, pct=False, digits=2) for lo, hi in zip(rt.mos["low"], rt.mos["high"],
                                                                                strict=True)]
        dist = rt.distribution.pivot_table(index="label", columns="score", values="count", aggfunc="sum",
                                           sort=False).reset_index() if not rt.distribution.empty else rt.distribution
        agree = rt.agreement.assign(alpha=rt.agreement["alpha"].map(lambda v: fmt_num(v, 3)))
        parts += [f"## {rt.title} (`{rt.task}`, rating): {rt.n_items_rated} rated items", "", "Mean scores (MOS):",
                  "",
                  _md(mos[["label", "mean", "95% CI", "sd", "n", "weighted_mean"]]), "", "Score distribution:", "",
                  _md(dist), "", "Krippendorff's alpha (ordinal), items with two or more raters:", "",
                  _md(agree[["label", "alpha", "items", "raters"]]), ""]
    q = report.quality.copy()
    if not q.empty:
        q["session"] = q["session_id"].str[:8]
        q["total_time_s"] = q["total_time_s"].map(lambda v: fmt_num(v, 0))
        q["median_time_s"] = q["median_time_s"].map(lambda v: fmt_num(v, 1))
        q["majority_agreement"] = q["majority_agreement"].map(fmt_pct)
        q = q[["session", "evaluator_name", "external_id", "status", "completed", "answers", "total_time_s",
               "median_time_s", "fast_answers", "longest_same_run", "majority_agreement"]]
    parts += ["## Evaluators", "", _md(q), ""]
    return "\n".join(parts)


def results_csv(report: Report) -> str:
    """The main results as one CSV (same numbers as the page and the LaTeX table)."""
    return main_results(report).drop(columns="kind").to_csv(index=False)
