"""Results (researchers only): password gate, live statistics, admin controls, exports.

Not linked from any evaluator screen. The password comes from
``st.secrets["results_password"]`` or ``EVALKIT_RESULTS_PASSWORD``; with
neither, the page stays locked.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import ui
from evalkit import charts
from evalkit.analysis import (
    Frames,
    Options,
    Report,
    TaskResult,
    analyse,
    evaluations_csv,
    items_of,
    load_frames,
    ratings_csv,
)
from evalkit.display import TIME_FORMAT, Zone, format_clock, readable, resolve_zone, to_local
from evalkit.export import (
    alpha_notes,
    bt_note,
    bt_table,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    latex_table,
    mos_note,
    mos_table,
    ratings_text,
    results_csv,
)
from evalkit.store import Store, StoreError, describe
from evalkit.text import csv_safe

st.set_page_config(page_title="Results", layout="wide")
ACTOR = "results page"
REFRESH_SECONDS = 3


# ----------------------------------------------------------------------------- password gate


def configured_password() -> str | None:
    """The results password from secrets or the environment; None when neither is set."""
    value = ui.secret("results_password") or os.environ.get("EVALKIT_RESULTS_PASSWORD")
    return str(value) if value else None


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def authenticated(password: str) -> bool:
    """Check the digest kept in this browser session against the configured password, on every run."""
    held = st.session_state.get("_results_digest")
    return held is not None and hmac.compare_digest(held, _digest(password))


def login(password: str) -> None:
    """Login callback: compare in constant time, within the process-wide limit on guesses."""
    entered = st.session_state.get("results_password_input") or ""
    st.session_state["results_password_input"] = ""  # never keep or echo what was typed
    result = ui.login_limiter().check(lambda: hmac.compare_digest(_digest(entered), _digest(password)))
    if result is True:
        st.session_state["_results_digest"] = _digest(entered)
    elif result is False:
        ui.flash("error", "Wrong password.")
    else:  # refused without comparing: too many guesses (from anyone) just now
        ui.flash("warning", f"Too many login attempts just now: try again in {math.ceil(result.retry_after)} s.")


loaded, store = ui.load()
password = configured_password()
zone = resolve_zone(st.context.timezone, st.context.timezone_offset)  # the browser's, else UTC
st.title("Results")
if password is None:
    st.error("The results page is locked because no password is configured. Set `results_password` in "
             "`.streamlit/secrets.toml` or the environment variable `EVALKIT_RESULTS_PASSWORD`, then reload.")
    st.stop()
if not authenticated(password):
    ui.show_flash()
    with st.form("results_login"):
        st.text_input("Password", type="password", key="results_password_input")
        st.form_submit_button("Unlock", type="primary", on_click=login, args=(password,))
    st.stop()


# ----------------------------------------------------------------------------- cached analysis


@st.cache_resource(max_entries=2, show_spinner="Reading the answers...")
def frames_at(_store: Store, database: str, version: tuple) -> Frames:
    """The stored rows at one data version (the cache key); two versions kept, as frames of a large study are big."""
    return load_frames(_store)


def _short(session_id: str) -> str:
    return session_id[:8]


@dataclass(frozen=True)
class View:
    """What the page shows for one report, prepared once: the report, its charts as Vega-Lite dicts, the
    evaluator table formatted for display and the evaluator picker's labels."""

    report: Report
    specs: dict[str, dict]
    evaluators: pd.DataFrame
    labels: dict[str, str]
    latex: str
    results_csv: str
    zone: Zone


@st.cache_resource(max_entries=12, show_spinner="Computing the results...")
def compute(_store: Store, database: str, version: tuple, options: Options, tz_name: str | None,
            tz_offset: float | None, study_version: str) -> View:
    """The view for one data version, one set of options and one time zone (the browser's): a refresh with
    no new answers costs one cheap query (``data_version``) and no recomputation, and renders what is
    prepared here; changing an option recomputes without rereading. The study's items files (their automatic
    metrics) come from the loaded study, named by its version."""
    zone = resolve_zone(tz_name, tz_offset)
    report = analyse(frames_at(_store, database, version), options, items_of(loaded))
    q = report.quality.copy()
    q.insert(0, "session", q["session_id"].map(_short))
    q["majority_agreement"] = q["majority_agreement"].map(fmt_pct)
    q["total_time_s"] = q["total_time_s"].map(lambda v: fmt_num(v, 0))
    q["median_time_s"] = q["median_time_s"].map(lambda v: fmt_num(v, 1))
    q["started_at"], q["completed_at"] = to_local(q["started_at"], zone), to_local(q["completed_at"], zone)
    if not q["external_id"].fillna("").astype(str).str.strip().any():  # no crowdsourcing ids: no empty column
        q = q.drop(columns=["external_id"])
    if not (q["checks_passed"] + q["checks_failed"] + q["tutorial_first_try"]).any():  # a study without checks
        q = q.drop(columns=["checks_passed", "checks_failed", "tutorial_first_try", "checks_result"])
    labels = {s: f"{_short(s)} · {name or '(no name)'} · {status}" for s, name, status in
              zip(report.quality["session_id"], report.quality["evaluator_name"], report.quality["status"],
                  strict=True)}
    return View(report, charts.report_specs(report, zone), q.drop(columns=["session_id", "completed"]), labels,
                latex_table(report), results_csv(report), zone)


def chart(where: DeltaGenerator, specs: dict[str, dict], key: str, **kwargs: object) -> None:
    """One of the report's charts (built once per report, see ``charts.report_specs``)."""
    spec = specs.get(key)
    if spec is not None:
        where.vega_lite_chart(spec=spec, **kwargs)


def table(where: DeltaGenerator, frame: pd.DataFrame, zone: Zone | None = None, *, untrusted: bool = False) -> None:
    """A table with readable column names (``evalkit.display.COLUMN_LABELS``); times shown in ``zone``.

    ``untrusted``: the frame holds text typed by evaluators (names, ids, comments). Streamlit's own
    "Download as CSV" button on a table writes cells as they are, so such text is neutralised as in the
    exports (a leading ``'`` before ``=``, ``+``, ``-``, ``@``; control characters removed)."""
    shown = readable(csv_safe(frame) if untrusted else frame)
    times = {c: st.column_config.DatetimeColumn(c, format=TIME_FORMAT, help=f"Time zone: {zone.label}")
             for c in shown.columns if zone is not None and isinstance(shown[c].dtype, pd.DatetimeTZDtype)}
    where.dataframe(shown, hide_index=True, column_config=times or None)


def exported(what: str, generate: Callable[[], str]) -> Callable[[], str]:
    """A download's content, made when its button is clicked, and the export logged then. The button does
    not rerun the page (``on_click="ignore"``): a rerun started by the click itself would replace the button's
    file while the browser is still fetching it."""
    def make() -> str:
        content = generate()
        store.log(ACTOR, "export", {"what": what})
        return content
    return make


# ----------------------------------------------------------------------------- study controls and options

state = store.survey_state()
top = st.columns([3, 2, 2])
with top[0]:
    database = describe(loaded.study.database, short=True)
    st.caption(f"{loaded.study.title} · study version {loaded.version} · database `{database}`")
with top[1]:
    labels = {"open": ":green[open]", "paused": ":orange[paused for new evaluators]", "ended": ":red[ended]"}
    st.markdown(f"**Survey:** {labels[state]}")
with top[2]:
    st.button("Lock this page", on_click=lambda: st.session_state.pop("_results_digest", None))

with st.expander("Study controls"):
    c1, c2, c3 = st.columns(3)
    if state == "open":
        c1.button("Pause new evaluators", on_click=lambda: store.set_survey_state("paused", actor=ACTOR))
    elif state == "paused":
        c1.button("Resume: let new evaluators start", on_click=lambda: store.set_survey_state("open", actor=ACTOR))
    if state != "ended":
        confirm_end = c2.checkbox("I want to end the study for everyone", key="confirm_end")
        c3.button("End the study", type="primary", disabled=not confirm_end,
                  on_click=lambda: store.set_survey_state("ended", actor=ACTOR))
    else:
        c1.button("Reopen the study", on_click=lambda: store.set_survey_state("open", actor=ACTOR))
    st.caption("Changes take effect for evaluators on their next click. Every change is logged.")

o1, o2, o3 = st.columns(3)
options = Options(
    completed_only=o1.toggle("Completed sessions only", key="opt_completed"),
    familiarity_weighted=o2.toggle("Familiarity-weighted rating means", key="opt_weighted"),
    fast_ms=int(o3.number_input("Flag answers faster than (seconds)", min_value=0.0, max_value=120.0, value=2.0,
                                step=0.5, key="opt_fast") * 1000),
    exclude_failed_checks=o1.toggle(
        "Leave out evaluators who failed the attention checks", value=True, key="opt_failed_checks",
        help="Failed: more failed attention checks (first answer wrong) than [study.quality] max_failed_checks. "
             "The evaluator table shows every evaluator's checks passed and failed."),
    include_check_questions=o2.toggle(
        "Count tutorial and attention-check questions", key="opt_check_questions",
        help="Off: the answers to check questions are left out of every statistic."),
)


# ----------------------------------------------------------------------------- sections


def show_overview(report: Report, specs: dict[str, dict]) -> None:
    m = st.columns(5)
    m[0].metric("Evaluators counted", report.n_sessions)
    m[1].metric("Completed", report.n_completed)
    m[2].metric("Answers", report.n_answers)
    m[3].metric("Item ratings", report.n_ratings, help="Ratings of an item by one evaluator; an item rated by "
                "two evaluators counts twice.")
    m[4].metric("Items rated", report.n_rated_items, help="Distinct items rated by at least one evaluator.")
    for t in report.triplets:
        st.subheader(f"{t.title} · which one is {t.target}?")
        left = right = st.container()  # stacked: a table beside a chart hid its last columns
        chart(left, specs, f"selection:{t.task}", width="stretch")
        rates = t.selection.assign(**{"rate %": t.selection["rate"].map(fmt_pct),
                                      "95% CI": [fmt_ci(a, b) for a, b in zip(t.selection["low"],
                                                                               t.selection["high"], strict=True)],
                                      "p": t.selection["p_value"].map(fmt_p)})
        table(right, rates[["source", "role", "picked", "n", "rate %", "95% CI", "p"]])
        if t.accuracy:
            a = t.accuracy
            right.markdown(f"**Accuracy** (found the {t.target} text): {fmt_pct(a['rate'])}% "
                           f"{fmt_ci(a['low'], a['high'])}, p {fmt_p(a['p_value'])}")
        right.markdown(f"**Fleiss' kappa** over {t.kappa_basis}: {fmt_num(t.kappa, 3)} "
                       f"({t.kappa_subjects} subjects, {t.kappa_raters} raters)")
        if t.kappa_note:
            right.caption(t.kappa_note)
        if t.unmatched:
            right.caption(f"{t.unmatched} answers came from questions that could not be length-matched.")
        with st.expander("Per domain"):
            d = t.per_domain
            table(st, d.assign(**{"rate %": d["rate"].map(fmt_pct),
                                  "95% CI": [fmt_ci(a, b) for a, b in zip(d["low"], d["high"], strict=True)],
                                  "p": d["p_value"].map(fmt_p)})[["domain", "source", "picked", "n", "rate %",
                                                                  "95% CI", "p"]])
    for p in report.pairwise:
        st.subheader(f"{p.title} · pairwise ({p.response})")
        left = right = st.container()
        if not p.win_rates.empty:
            chart(left, specs, f"wins:{p.task}", width="stretch")
        w = p.win_rates
        table(right, w.assign(**{"rate %": w["rate"].map(fmt_pct),
                                 "95% CI": [fmt_ci(a, b) for a, b in zip(w["low"], w["high"], strict=True)],
                                 "p": w["p_value"].map(fmt_p)})[["pair", "source", "wins", "ties", "n",
                                                                 "rate %", "95% CI", "p"]])
        if not p.slider.empty:
            s = p.slider
            right.markdown("**Slider** (positive = the favoured source better)")
            table(right, s.assign(mean=s["mean"].map(lambda v: fmt_num(v, 1)),
                                  **{"95% CI": [fmt_ci(a, b, pct=False) + (" †" if cut else "")
                                                for a, b, cut in zip(s["low"], s["high"], s["clipped"],
                                                                     strict=True)]})[
                ["pair", "favoured", "mean", "95% CI", "n", "positive_draws", "negative_draws"]])
            if s["clipped"].any():
                right.caption("† t interval clipped to the slider's range, -100..100.")
        def count(v: object) -> str:
            return "–" if v is None or v != v else f"{int(v):,}"  # v != v: NaN

        power = p.power.assign(rate=p.power["rate"].map(fmt_pct), needed_total=p.power["needed_total"].map(count),
                               further=p.power["further"].map(count))
        right.markdown("**Power**: judgments needed per comparison (alpha .05, power .8) at the current effect")
        table(right, power)
    if report.pairwise:
        st.subheader("Bradley–Terry strengths over all pairs")
        bt = report.bradley_terry_all
        if bt.empty:
            st.caption("No pairwise comparison yet.")
        else:
            chart(st, specs, "bradley_terry", width="stretch")
            table(st, bt_table(bt))
            st.caption(bt_note(report))
    for result in report.item_tasks:
        show_task(result, specs)


def show_task(result: TaskResult, specs: dict[str, dict]) -> None:
    """A compare, score, rank or realfake task: each of its tables under its chart, with its note."""
    st.subheader(f"{result.title} · {result.describe()} · {result.n_answers:,} "
                 f"{'answer' if result.n_answers == 1 else 'answers'}")
    for block in result.blocks():
        st.markdown(f"**{block.heading}**")
        if block.chart:
            chart(st, specs, block.chart, width="stretch")
        if block.table is not None:
            table(st, block.table)
        if block.note:
            st.caption(block.note)


def show_ratings(report: Report, specs: dict[str, dict]) -> None:
    if not report.ratings:
        st.info("This study has no rating block.")
    for r in report.ratings:
        st.subheader(f"{r.title} · {ratings_text(r.n_item_ratings, r.n_items)}")
        shown = mos_table(r.mos)
        cols = ["label", "mean", "95% CI", "sd", "n", "weighted_mean"]
        if report.options.familiarity_weighted:
            cols = ["label", "weighted_mean", "mean", "95% CI", "sd", "n"]
        table(st, shown[cols])
        st.caption(mos_note(r.mos))
        if not r.distribution.empty:
            chart(st, specs, f"rating:{r.task}")
        agree = r.agreement
        st.markdown("**Krippendorff's alpha** (ordinal) over items with two or more raters")
        table(st, agree.assign(alpha=agree["alpha"].map(lambda v: fmt_num(v, 3)))[
            ["label", "alpha", "items", "raters"]])
        if (agree["note"] != "").any():
            st.caption(alpha_notes(agree))


def set_status(session_id: str, status: str) -> None:
    store.set_session_status(session_id, status, actor=ACTOR)


def delete(session_id: str) -> None:
    if st.session_state.get(f"confirm_delete_{session_id}"):
        store.delete_session(session_id, actor=ACTOR)
        ui.flash("success", f"Session {_short(session_id)} and all its answers were deleted.")


def show_evaluators(view: View) -> None:
    report, specs = view.report, view.specs
    if report.quality.empty:
        st.info("No evaluator has started yet.")
        return
    table(st, view.evaluators, view.zone, untrusted=True)
    st.caption(f"Times in {view.zone.label}. Fast answers: under {report.options.fast_ms / 1000:g} s · Max "
               "identical run: the longest run of identical responses (straight-lining) · Majority agreement: "
               "picks matching the other evaluators' majority on the same question slot. Excluded and trashed "
               "sessions are listed but never counted.")
    left, right = st.columns(2)
    if report.n_answers:
        chart(left, specs, "timeline", width="stretch")
        chart(left, specs, "timeline_evaluators", width="stretch")
        chart(right, specs, "answer_times", width="stretch")

    st.markdown("#### Manage an evaluator")
    chosen = st.selectbox("Evaluator", list(view.labels), index=None, key="admin_session",
                          format_func=view.labels.__getitem__, placeholder="Choose an evaluator")
    ui.show_flash()
    if chosen is None:
        return
    row = report.quality[report.quality["session_id"] == chosen].iloc[0]
    back = "completed" if row["completed"] else "active"
    status = row["status"]
    a1, a2, a3 = st.columns(3)
    if status == "excluded":
        a1.button("Include again", on_click=set_status, args=(chosen, back), key="act_include")
    elif status != "trashed":
        a1.button("Exclude from the results", on_click=set_status, args=(chosen, "excluded"), key="act_exclude")
    if status == "trashed":
        a2.button("Restore from trash", on_click=set_status, args=(chosen, back), key="act_restore")
    else:
        a2.button("Move to trash", on_click=set_status, args=(chosen, "trashed"), key="act_trash")
    with a3:
        sure = st.checkbox("Delete permanently: I understand this cannot be undone",
                           key=f"confirm_delete_{chosen}")
        st.button("Delete permanently", type="primary", disabled=not sure, on_click=delete, args=(chosen,),
                  key="act_delete")


def evaluations_file() -> str:
    """Every stored evaluation, every column, read when the button is clicked (not on every rerun)."""
    return evaluations_csv(load_frames(store, full=True))


def ratings_file() -> str:
    """Every stored rating, read when the button is clicked."""
    return ratings_csv(load_frames(store, full=True))


def show_exports(view: View) -> None:
    c1, c2, c3 = st.columns(3)
    c1.download_button("Evaluations (CSV)", exported("evaluations.csv", evaluations_file),
                       file_name="evaluations.csv", mime="text/csv", on_click="ignore", key="dl_evaluations")
    c2.download_button("Ratings (CSV)", exported("ratings.csv", ratings_file), file_name="ratings.csv",
                       mime="text/csv", on_click="ignore", key="dl_ratings")
    c3.download_button("Main results (CSV)", exported("results.csv", lambda: view.results_csv),
                       file_name="results.csv", mime="text/csv", on_click="ignore", key="dl_results")
    st.caption("The evaluations CSV starts with the original CERA columns (evaluatorName, sessionId, task, "
               "questionIndex, response, reviewSource, domain, timeSpentMs, leftSource, rightSource, createdAt). "
               "The ratings CSV has one row per metric score; comments are in the itemComment and metricComment "
               "columns. In every CSV, text that a spreadsheet would run as a formula (starting with =, +, -, @, "
               "tab or carriage return) gets a leading ', and control characters are removed.")
    latex = view.latex
    st.markdown("**LaTeX table** (booktabs)")
    st.code(latex, language="latex")
    st.download_button("Download the LaTeX table", exported("results.tex", lambda: latex), file_name="results.tex",
                       mime="text/x-tex", on_click="ignore", key="dl_latex")
    log = store.admin_log()
    if log:
        with st.expander(f"Admin log ({len(log)} {'entry' if len(log) == 1 else 'entries'}, newest first)"):
            entries = pd.DataFrame(log)[::-1]
            entries["at"] = to_local(entries["at"], view.zone)
            table(st, entries[["at", "actor", "action", "detail"]], view.zone, untrusted=True)


@st.fragment(run_every=REFRESH_SECONDS)
def watch(shown: tuple) -> None:
    """Every few seconds: re-check the password and the data's version, and render the page again only when
    the data changed. A tick with no new answers is one small query. Re-renders are spaced by at least four
    times what the last one took, so a large study's analysis cannot take more than a fifth of a core."""
    if not authenticated(password):
        st.rerun()
    waited = time.monotonic() - st.session_state.get("_results_shown_at", 0.0)
    if store.data_version() != shown and waited >= 4 * st.session_state.get("_results_render_s", 0.0):
        st.rerun()
    shown_at = datetime.fromtimestamp(st.session_state.get("_results_wall", time.time()), UTC)
    st.caption(f"Updated {format_clock(shown_at, zone)} ({zone.label}) · checks for new answers every "
               f"{REFRESH_SECONDS} s")


started = time.perf_counter()
version = store.data_version()
st.session_state["_results_wall"] = time.time()
watch(version)
try:
    view = compute(store, store.where, version, options, st.context.timezone, st.context.timezone_offset,
                   loaded.version)
except StoreError as exc:  # e.g. the reader process failed: say what happened, keep the controls usable
    logging.getLogger("evalkit.results").exception("reading the answers failed")
    st.error(f"The answers could not be read for the analysis: {exc}. Nothing was changed or lost; the page "
             "tries again on the next refresh.")
    st.stop()
overview, ratings, evaluators, exports = st.tabs(["Overview", "Ratings", "Evaluators", "Exports"])
with overview:
    show_overview(view.report, view.specs)
with ratings:
    show_ratings(view.report, view.specs)
with evaluators:
    show_evaluators(view)
with exports:
    show_exports(view)
st.session_state["_results_render_s"] = time.perf_counter() - started
st.session_state["_results_shown_at"] = time.monotonic()
