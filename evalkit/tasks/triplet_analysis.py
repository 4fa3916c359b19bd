"""Analysis of ``triplet`` tasks (:mod:`evalkit.tasks.triplet`): which of N texts, one per source, comes from the
target source.

Selection rates per source with Wilson intervals and exact binomial tests against chance (1/k), the accuracy
of finding the target, the Turing view (how often each generated source was taken for the target), Fleiss'
kappa as CERA computes it and a per-domain breakdown. Imported only when a report is made (through
:func:`evalkit.tasks.results`).

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
    Block,
    ResultDefaults,
    TaskContext,
    column_codes,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    interval_row,
    p_clause,
    rate_table,
)
from ..text import join_title

__all__ = ["PER_EVALUATOR_KAPPA_NOTE", "TripletResult", "results", "selection_chart", "triplet_results"]

#: What Fleiss' kappa means when every evaluator saw different texts in a question slot.
PER_EVALUATOR_KAPPA_NOTE = (
    "Per-evaluator selection: evaluators saw different texts in each question slot, so this kappa measures how "
    "consistently they pick the same source in a slot (CERA's statistic), not agreement about the same texts. "
    "For inter-rater reliability use selection = \"shared\".")


@dataclass
class TripletResult(ResultDefaults):
    """Everything about one triplet task."""

    task: str
    title: str
    target: str | None
    sources: list[str]
    selection: pd.DataFrame  # source, role, picked, n, rate, low, high, p_value (vs 1/k)
    turing: pd.DataFrame  # generated sources: fooled, n, rate, low, high, p_value
    accuracy: dict[str, Any]  # finding the target: picked, n, rate, low, high, p_value
    kappa: float
    kappa_subjects: int
    kappa_raters: int
    kappa_basis: str  # "identical triplets" (shared) or "question slots" (per-evaluator)
    kappa_note: str  # what kappa measures here: a caveat under per-evaluator selection, "" under shared
    per_domain: pd.DataFrame  # domain, source, picked, n, rate, low, high
    unmatched: int
    n_answers: int
    kind: str = "triplet"

    def describe(self) -> str:
        return "triplet"

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's)."""
        return (f"{self.title} · which one is {self.target}?",
                f"{self.title} (`{self.task}`, triplet): which one is {self.target}?")

    def blocks(self) -> list[Block]:
        k = max(len(self.sources), 2)
        rates = rate_table(self.selection, ["source", "role", "picked", "n"])
        out = [Block(f"Selection rate per source (chance {100 / k:.1f}%, exact binomial test against 1/{k})", rates,
                     chart=f"selection:{self.task}", page_heading="")]
        if self.accuracy:
            a = self.accuracy
            found = f"(found the {self.target} text): "
            out += [Block("", None, page_heading=f"**Accuracy** {found}{fmt_pct(a['rate'])}% "
                                                 f"{fmt_ci(a['low'], a['high'])}, p {fmt_p(a['p_value'])}",
                          shown="page"),
                    Block("", None, f"Accuracy {found}{a['picked']}/{a['n']} = {fmt_pct(a['rate'])}% "
                                    f"{fmt_ci(a['low'], a['high'])}, p {p_clause(a['p_value'])}.", shown="report")]
        out += [
            Block("Turing view (fooling rate = generated text picked as the target)",
                  rate_table(self.turing, ["source", "fooled", "n"]), shown="report"),
            Block("", None, page_heading=f"**Fleiss' kappa** over {self.kappa_basis}: {fmt_num(self.kappa, 3)} "
                                         f"({self.kappa_subjects} subjects, {self.kappa_raters} raters)", shown="page"),
            Block("", None, f"Fleiss' kappa over {self.kappa_basis}: {fmt_num(self.kappa, 3)} ({self.kappa_subjects} "
                            f"subjects, {self.kappa_raters} raters). Unmatched (length) questions answered: "
                            f"{self.unmatched}.", shown="report")]
        if self.kappa_note:
            out.append(Block("", None, self.kappa_note))
        if self.unmatched:
            out.append(Block("", None, f"{self.unmatched} answers came from questions that could not be "
                                       "length-matched.", shown="page"))
        out.append(Block("Per domain", rate_table(self.per_domain, ["domain", "source", "picked", "n"]),
                         folded=True))
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        k = max(len(self.sources), 2)
        section = join_title(self.title, f"picked as {self.target or 'target'} (chance {100 / k:.1f}%)")
        return [{"section": section, "label": r.source, "detail": r.role, "value": r.rate, "low": r.low,
                 "high": r.high, "p_value": r.p_value, "n": r.n, "interval": "Wilson", "kind": "pct"}
                for r in self.selection.itertuples()]

    def charts(self) -> dict[str, Any]:
        return {f"selection:{self.task}": selection_chart(self)}


def selection_chart(result: TripletResult) -> Any:
    """Selection rate per source with Wilson intervals and the chance line (1/k)."""
    from ..resultkit import rate_chart

    k = max(len(result.sources), 2)
    frame = result.selection.dropna(subset=["rate"])
    return rate_chart(frame, "source", 1 / k, join_title(result.title, f"picked as {result.target}"),
                      "share of questions")


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> TripletResult:
    """The task's results (:func:`triplet_results` at the context's confidence)."""
    return triplet_results(ev, task, context.options.confidence)


def triplet_results(ev: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95) -> TripletResult:
    """Selection rates, the Turing view, accuracy, Fleiss' kappa (CERA style) and a per-domain breakdown."""
    rows = ev.loc[(ev["task"] == task["id"]).to_numpy(),
                  ["session_id", "slot", "review_source", "domain", "matched"]]  # copy only what is used
    n = len(rows)
    src, src_names = column_codes(rows["review_source"])
    k_all = len(src_names)
    picked_arr = np.bincount(src[src >= 0], minlength=k_all)
    picked = {str(name): int(c) for name, c in zip(src_names, picked_arr, strict=True) if c}
    sources = list(task.get("sources") or sorted(picked))
    target = task.get("target")
    k = max(len(sources), 2)
    selection = pd.DataFrame([
        {"source": s, "role": "target" if s == target else "generated", "picked": picked.get(s, 0),
         **interval_row(picked.get(s, 0), n, 1 / k, confidence)} for s in sources
    ], columns=["source", "role", "picked", "n", "rate", "low", "high", "p_value"])
    turing = selection[selection["role"] == "generated"].rename(columns={"picked": "fooled"}).drop(columns="role")
    accuracy = {"picked": picked.get(target, 0), **interval_row(picked.get(target, 0), n, 1 / k, confidence)
                } if target else {}
    # Fleiss' kappa as CERA computes it: subjects = question slots, categories = the source picked,
    # raters = evaluators. In "shared" selection a slot is the very same triplet for everyone.
    slot, _ = pd.factorize(rows["slot"])
    both = (slot >= 0) & (src >= 0)
    n_slots = int(slot.max()) + 1 if len(slot) else 0
    counts = np.bincount(slot[both] * k_all + src[both], minlength=n_slots * k_all).reshape(n_slots, k_all)
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]
    kappa = stats.fleiss_kappa(counts) if n else math.nan
    dom, dom_names = column_codes(rows["domain"])
    per_dom = np.bincount(dom[(dom >= 0) & (src >= 0)] * k_all + src[(dom >= 0) & (src >= 0)],
                          minlength=len(dom_names) * k_all).reshape(len(dom_names), k_all)
    dom_n = np.bincount(dom[dom >= 0], minlength=len(dom_names))
    source_code = {str(name): c for c, name in enumerate(src_names)}
    per_domain = []
    for d in sorted(range(len(dom_names)), key=lambda c: str(dom_names[c])):
        if dom_n[d] == 0:
            continue
        for s in sources:
            got = int(per_dom[d, source_code[s]]) if s in source_code else 0
            per_domain.append({"domain": dom_names[d], "source": s, "picked": got,
                               **interval_row(got, int(dom_n[d]), 1 / k, confidence)})
    per_domain_df = pd.DataFrame(per_domain, columns=["domain", "source", "picked", "n", "rate", "low", "high",
                                                      "p_value"])
    sessions, _ = column_codes(rows["session_id"])
    return TripletResult(
        task=task["id"], title=task.get("title", task["id"]), target=target, sources=sources, selection=selection,
        turing=turing.reset_index(drop=True),
        accuracy=accuracy, kappa=kappa, kappa_subjects=int(counts.shape[0]) if n else 0,
        kappa_raters=int(np.count_nonzero(np.bincount(sessions[sessions >= 0]))),
        kappa_basis="identical triplets" if task.get("selection") == "shared" else "question slots",
        kappa_note="" if task.get("selection") == "shared" else PER_EVALUATOR_KAPPA_NOTE,
        per_domain=per_domain_df, unmatched=int((rows["matched"] == 0).sum()), n_answers=n,
    )
