"""Numbers and tables formatted for the results page, the Markdown report and the LaTeX table: p-values in APA
style, percentages, intervals, counts with their nouns, and the display forms of the rate, MOS, agreement and
Bradley–Terry tables every kind's analysis shows.

May import pandas and :mod:`evalkit.resultkit.parts` (for :class:`Options`); nothing above the task kinds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from .parts import Options

__all__ = ["SCORE_ROW_COLUMNS", "alpha_notes", "alpha_text", "bt_note", "bt_table", "count_text", "fmt_ci", "fmt_num",
           "fmt_p", "fmt_pct", "mos_note", "mos_table", "p_clause", "rate_table", "ratings_text", "scale_text"]


def fmt_p(p: float | None) -> str:
    """APA-style p-value: ``< .001``, else three decimals without the leading zero."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    if p < 0.001:
        return "< .001"
    return f"{p:.3f}".replace("0.", ".", 1) if p < 1 else "1.000"



def p_clause(p: float | None) -> str:
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



def scale_text(scales: Iterable[int]) -> str:
    found = sorted({int(s) for s in scales})
    return f"1–{found[0]}" if len(found) == 1 else "1–" + "/".join(str(s) for s in found)



def rate_table(frame: pd.DataFrame, first: Iterable[str]) -> pd.DataFrame:
    out = frame[list(first)].copy()
    out["rate %"] = frame["rate"].map(fmt_pct)
    out["95% CI"] = [fmt_ci(lo, hi) for lo, hi in zip(frame["low"], frame["high"], strict=True)]
    out["p"] = frame["p_value"].map(fmt_p)
    return out



def count_text(n: int, singular: str, plural: str | None = None) -> str:
    """``1 rating``, ``4 ratings``: a count with its noun in the right number."""
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"



def ratings_text(n_ratings: int, n_items: int) -> str:
    """What a rating count means: ``4 ratings of 3 items`` (an item rated by two evaluators counts twice)."""
    return f"{count_text(n_ratings, 'rating')} of {count_text(n_items, 'item')}"



def alpha_text(alpha: float, note: str) -> str:
    """Krippendorff's alpha to three decimals, or why it is undefined (``– (needs items rated by ...)``)."""
    text = fmt_num(alpha, 3)
    return f"{text} ({note})" if note and text == "–" else text



def alpha_notes(agreement: pd.DataFrame) -> str:
    """Why alpha is missing, one sentence per reason: ``Alpha is undefined for Specificity and Relevance:
    needs items rated by two or more evaluators.`` ("" when alpha is defined for every metric)."""
    sentences = []
    for note, group in agreement[agreement["note"] != ""].groupby("note", sort=False):
        labels = [str(x) for x in group["label"]]
        which = ("every metric" if len(labels) == len(agreement) and len(labels) > 1
                 else " and ".join([", ".join(labels[:-1]), labels[-1]] if len(labels) > 1 else labels))
        sentences.append(f"Alpha is undefined for {which}: {note}.")
    return " ".join(sentences)



def mos_table(mos: pd.DataFrame) -> pd.DataFrame:
    """The MOS table for display: numbers formatted, ``†`` after an interval clipped to the scale."""
    out = mos.copy()
    for col in ("mean", "sd", "weighted_mean"):
        out[col] = mos[col].map(fmt_num)
    out["95% CI"] = [fmt_ci(lo, hi, pct=False, digits=2) + (" †" if cut else "")
                     for lo, hi, cut in zip(mos["low"], mos["high"], mos["clipped"], strict=True)]
    return out



def mos_note(mos: pd.DataFrame) -> str:
    """The footnote of a MOS table: how its intervals were made."""
    scale = scale_text(mos["scale"]) if len(mos) else "1–5"
    return (f"Intervals: Student t, clipped to the rating scale ({scale}); † marks an interval that was clipped "
            "(the t interval ran past the scale).")



def bt_table(bt: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A Bradley–Terry table for display: log-strength and its bootstrap interval formatted."""
    out = bt[["source"]].copy()
    out["log_strength"] = bt["log_strength"].map(lambda v: fmt_num(v, digits))
    if "low" in bt.columns:
        out["95% CI"] = [fmt_ci(lo, hi, pct=False, digits=digits) for lo, hi in zip(bt["low"], bt["high"],
                                                                                    strict=True)]
    return out



def bt_note(options: Options) -> str:
    """How the Bradley–Terry intervals were made, and what an infinite end means."""
    return (f"Intervals: percentile bootstrap, evaluators resampled {options.bootstrap_resamples:,} times "
            f"(seed {options.bootstrap_seed}); all of an evaluator's judgments stay together. An end at "
            "-inf or inf means the source never won or never lost in enough of the resamples.")



#: What a kind's ``score_rows(frames)`` returns (its analysis module's, :func:`scores_csv`): one row per score.
SCORE_ROW_COLUMNS = ["session_id", "task", "kind", "question_index", "item_id", "system", "position", "scale",
                     "score", "scale_min", "scale_max", "time_spent_ms", "created_at", "check"]
