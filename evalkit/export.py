"""Reports of an :class:`evalkit.analysis.Report`: Markdown, a booktabs LaTeX table, CSV; and the scores CSV
(every score of every kind that scores, one row each, from the stored rows).

The results page and ``python -m evalkit report`` / ``export`` both call these, so the
numbers are the same everywhere.

Floor: app services (``.importlinter``). May import the analysis and the planner, the study's config and checks, the
task kinds and the core; never the queue or the command line.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from .analysis import Frames, Report, TaskResult
from .resultkit import (
    SCORE_ROW_COLUMNS,
    alpha_notes,
    alpha_text,
    bt_note,
    bt_table,
    count_text,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    mos_note,
    mos_table,
    ratings_text,
)
from .tasks import KINDS, analysis_module
from .text import csv_safe, strip_controls

__all__ = ["SCORES_CSV_COLUMNS", "SCORE_ROW_COLUMNS", "alpha_notes", "alpha_text", "bt_note", "bt_table", "count_text",
           "fmt_ci", "fmt_num", "fmt_p", "fmt_pct", "latex_table", "main_results", "markdown_report", "mos_note",
           "mos_table", "ratings_text", "results_csv", "scores_csv", "scoring_kinds", "section_headings"]


def main_results(report: Report) -> pd.DataFrame:
    """The headline table: one row per (section, label, detail) with rate or mean, interval and p-value.

    The rows of every task in study order, each kind saying what its headline rows are (its result's
    ``main_rows()``): triplet selection rates (vs chance 1/k), pairwise win rates (vs .5, first source of each
    pair), rating MOS (t intervals clipped to the scale), and the compare / score / rank / realfake rows (win
    rates, mean scores, best-of-n shares, accuracy and fooling rates, strengths, correlations with automatic
    metrics); the Bradley–Terry log-strengths over all pairwise tasks (percentile bootstrap over evaluators)
    after the last pairwise task (:meth:`evalkit.analysis.Report.sections`).
    ``interval`` names each row's interval; ``n`` is an integer (empty where
    there is none, e.g. the Bradley–Terry rows).
    """
    rows: list[dict] = []
    for result in report.sections():
        rows += result.main_rows()
    frame = pd.DataFrame(rows, columns=["section", "label", "detail", "value", "low", "high", "p_value", "n",
                                        "interval", "kind"])
    frame["n"] = frame["n"].astype("Int64")
    frame.attrs["confidence"] = report.options.confidence
    return frame


def _tex_ci(low: float, high: float, pct: bool) -> str:
    """An interval for LaTeX: infinite ends as $\\pm\\infty$."""
    if pct:
        return _tex(fmt_ci(low, high))
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return _tex("–")

    def end(v: float) -> str:
        if math.isinf(v):
            return "$\\infty$" if v > 0 else "$-\\infty$"
        return _tex(fmt_num(v))

    return f"[{end(low)}, {end(high)}]"


def _tex(text: object) -> str:
    """Escape LaTeX special characters in a cell."""
    specials = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--"}
    return "".join(specials.get(ch, ch) for ch in str(text))


def latex_table(report: Report, *, label: str = "tab:human-eval") -> str:
    """A publication-ready booktabs table of the main results (needs ``\\usepackage{booktabs}``).

    The caption names each kind of interval the table has rows with, and only those: Wilson for rates, Student t
    for mean scores (clipped to the rating scale, and says so when one was), percentile bootstrap over evaluators
    for Bradley–Terry and Plackett–Luce strengths, Fisher z for correlations, order statistics for medians, the
    normal approximation for d'.
    """
    table = main_results(report)
    pct_conf = f"{round(100 * report.options.confidence)}\\%"
    interval = table["interval"].astype(str)
    clauses = []
    if interval.eq("Wilson").any():
        clauses.append(f"rates in \\%, {pct_conf} Wilson intervals, exact binomial tests")
    if interval.str.startswith("Student t").any():
        clauses.append("scores with Student-$t$ intervals, clipped to the rating scale (marked $^\\dagger$)"
                       if interval.str.startswith("Student t, clipped").any() else "scores with Student-$t$ intervals")
    booted = interval.str.startswith("bootstrap percentile")
    if booted.any():
        models = [name for name, word in (("Bradley--Terry", "Bradley–Terry"), ("Plackett--Luce", "Plackett–Luce"))
                  if table.loc[booted, "section"].str.contains(word).any()]
        clauses.append(f"{' and '.join(models or ['Bradley--Terry'])} log-strengths with percentile bootstrap "
                       f"intervals (evaluators resampled {report.options.bootstrap_resamples:,} times)")
    if interval.eq("Fisher z").any():
        clauses.append("correlations with automatic metrics with Fisher-$z$ intervals")
    if interval.eq("order statistics").any():
        clauses.append("medians with distribution-free order-statistic intervals")
    if interval.str.startswith("normal approximation").any():
        clauses.append("$d'$ with normal-approximation intervals (Gourevitch \\& Galanter 1967)")
    described = ";\n  ".join(clauses)
    described = f"\n  {described[0].upper()}{described[1:]}." if described else ""
    who = f"{count_text(report.n_sessions, 'evaluator')}, {report.n_completed:,} completed"
    lines = [
        "% Requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\caption{{Human evaluation results ({who}).{described}}}",
        f"\\label{{{label}}}",
        "\\begin{tabular}{llrrrl}",
        "\\toprule",
        f"Item & Detail & $n$ & Value & {pct_conf} CI & $p$ \\\\",
    ]
    for section, group in table.groupby("section", sort=False):
        lines.append("\\midrule")
        lines.append(f"\\multicolumn{{6}}{{l}}{{\\textit{{{_tex(section)}}}}} \\\\")
        for r in group.itertuples():
            value = fmt_pct(r.value) if r.kind == "pct" else fmt_num(r.value)
            value = {"inf": "$\\infty$", "-inf": "$-\\infty$"}.get(value) or _tex(value)
            ci = _tex_ci(r.low, r.high, r.kind == "pct")
            if r.interval.startswith("Student t, clipped"):
                ci += "$^\\dagger$"
            n = "" if pd.isna(r.n) else str(int(r.n))
            p = "" if isinstance(r.p_value, float) and math.isnan(r.p_value) else f"${_tex(fmt_p(r.p_value))}$"
            lines.append(f"{_tex(r.label)} & {_tex(r.detail)} & {n} & {value} & {ci} & {p} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def _md(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_No data yet._"
    cols = [str(c) for c in frame.columns]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):  # names and comments may hold ESC sequences: never print them
        out.append("| " + " | ".join(strip_controls(str(v)).replace("|", "\\|").replace("\n", " ")
                                     for v in row) + " |")
    return "\n".join(out)


def section_headings(result: TaskResult) -> tuple[str, str]:
    """(the results page's heading, the Markdown report's) of a task's section (its result's ``headings()``)."""
    return result.headings()


def markdown_report(report: Report) -> str:
    """Every result table as Markdown."""
    o = report.options
    # the item ratings only in a study that has them (a rating task, or ratings stored)
    rated = f", {ratings_text(report.n_ratings, report.n_rated_items)}" if report.ratings or report.n_ratings else ""
    parts = [f"# Results{': ' + report.title if report.title else ''}", "",
             f"{count_text(report.n_sessions, 'evaluator')} included ({report.n_completed:,} completed), "
             f"{count_text(report.n_answers, 'answer')}{rated}. "
             f"Options: completed only = {o.completed_only}, "
             f"familiarity-weighted = {o.familiarity_weighted}, fast threshold = {o.fast_ms} ms.", ""]
    for result in report.sections():
        parts += [f"## {section_headings(result)[1]}", ""]
        for block in result.blocks():
            if block.shown == "page":
                continue
            if block.heading:
                parts += [f"{block.heading}:", ""]
            if block.table is not None:
                parts += [_md(block.table), ""]
            if block.note:
                parts += [block.note, ""]
    q = report.quality.copy()
    if not q.empty:
        q["session"] = q["session_id"].str[:8]
        q["total_time_s"] = q["total_time_s"].map(lambda v: fmt_num(v, 0))
        q["median_time_s"] = q["median_time_s"].map(lambda v: fmt_num(v, 1))
        q["majority_agreement"] = q["majority_agreement"].map(fmt_pct)
        q = q[["session", "evaluator_name", "external_id", "status", "completed", "answers", "total_time_s",
               "median_time_s", "fast_answers", "longest_same_run", "majority_agreement",
               *[c for c in ("checks_passed", "checks_failed", "checks_result")
                 if "checks_result" in q.columns and q["checks_result"].astype(bool).any()],
               *[c for c in ("ended_by",) if c in q.columns and q[c].astype(bool).any()]]]
    parts += ["## Evaluators", "", _md(q), ""]
    return "\n".join(parts)


def results_csv(report: Report) -> str:
    """The main results as one CSV (same numbers as the page and the LaTeX table).

    ``n`` is an integer column; section and label text (from task titles and
    source names) is made safe for spreadsheets (:func:`evalkit.text.csv_safe`).
    """
    return csv_safe(main_results(report).drop(columns="kind")).to_csv(index=False)


# ----------------------------------------------------------------------------- the scores CSV

#: Columns of scores.csv, in order: one row per score (a tidy long table). The session's columns are named as in the
#: other exports (``evaluatorName, sessionId, externalId, sessionStatus``, ``questionIndex``, ``timeSpentMs``,
#: ``createdAt``); the score's own in plain words.
#: the scores export's columns: a tidy long table, named as issue 25 gives them (snake_case, unlike the older
#: exports' CERA-era camelCase)
SCORES_CSV_COLUMNS = ["session_id", "evaluator", "external_id", "session_status", "task", "kind", "question_index",
                      "item_id", "system", "position", "scale", "score", "scale_min", "scale_max", "time_spent_ms",
                      "created_at", "check"]


def scoring_kinds() -> dict[str, Any]:
    """The kinds that score, by name, with their ``score_rows`` function: every kind whose analysis module has one
    (score, rating, and any later kind that scores: it adds ``score_rows(frames) -> DataFrame`` of
    :data:`SCORE_ROW_COLUMNS` to its module)."""
    makers = {}
    for name, kind in KINDS.items():
        module = analysis_module(kind)
        if module is not None and callable(getattr(module, "score_rows", None)):
            makers[name] = module.score_rows
    return makers


def scores_csv(frames: Frames) -> str:
    """Every stored score as CSV (:data:`SCORES_CSV_COLUMNS`), one row per score: for a ``score`` task one row per
    (answer, output shown, scale) with the output's ``system`` and ``position`` (0 = the first shown), for a
    ``rating`` task one row per (rated item, metric) with the metric as ``scale`` (``familiarity`` included; no
    system). ``score``, ``scale_min`` and ``scale_max`` are numbers (the scale's range as configured; empty where
    the stored description does not say it), ``question_index``, ``position`` and ``time_spent_ms`` integers
    (``time_spent_ms`` is the whole question's). ``check`` is ``tutorial`` or ``attention`` for a check question's
    scores. Every session, any status (``session_status``), as the other exports; rows in the order answered.
    Text cells are made safe for spreadsheets (:func:`evalkit.text.csv_safe`). Needs every stored column: frames
    from ``load_frames(store, full=True)``.
    """
    parts = [part for make in scoring_kinds().values() if len(part := make(frames))]
    rows = (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=SCORE_ROW_COLUMNS))
    rows = rows.sort_values("created_at", kind="stable") if len(rows) else rows
    rows = rows.merge(frames.sessions[["session_id", "evaluator_name", "external_id", "status"]], on="session_id",
                      how="left")
    out = pd.DataFrame({
        "session_id": rows["session_id"], "evaluator": rows["evaluator_name"], "external_id": rows["external_id"],
        "session_status": rows["status"], "task": rows["task"], "kind": rows["kind"],
        "question_index": pd.to_numeric(rows["question_index"]).astype("Int64"), "item_id": rows["item_id"],
        "system": rows["system"], "position": pd.to_numeric(rows["position"]).astype("Int64"), "scale": rows["scale"],
        "score": pd.to_numeric(rows["score"]).astype(float),
        "scale_min": pd.to_numeric(rows["scale_min"]).astype(float),
        "scale_max": pd.to_numeric(rows["scale_max"]).astype(float),
        "time_spent_ms": pd.to_numeric(rows["time_spent_ms"]).astype("Int64"), "created_at": rows["created_at"],
        "check": rows["check"]}, columns=SCORES_CSV_COLUMNS)
    for column in ("score", "scale_min", "scale_max"):  # whole numbers as integers (4, not 4.0), halves as they are
        values = out[column]
        if values.notna().any() and (values.dropna() == values.dropna().round()).all():
            out[column] = values.astype("Int64")
    return csv_safe(out).to_csv(index=False)
