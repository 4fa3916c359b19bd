"""Results (researchers only): password gate, live statistics, admin controls, exports.

Not linked from any evaluator screen. The password comes from
``st.secrets["results_password"]`` or ``EVALKIT_RESULTS_PASSWORD``; with
neither, the page stays locked.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import re
import time
from collections.abc import Callable, Mapping
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
from evalkit.config import study_summary
from evalkit.display import TIME_FORMAT, Zone, format_clock, readable, resolve_zone, to_local
from evalkit.export import (
    fmt_num,
    fmt_pct,
    latex_table,
    results_csv,
    scores_csv,
    scoring_kinds,
    section_headings,
)
from evalkit.invite import OUTCOME_FLAGS, fixed_tasks, list_progress, status_counts, status_frame, statuses_of
from evalkit.missing import confirm_problem, login_problem
from evalkit.queue import statuses as queue_statuses
from evalkit.queue import summary as queue_summary
from evalkit.span_export import pearmut_jsonl, spans_csv
from evalkit.store import Store, StoreError, describe
from evalkit.tasks.form_analysis import FormSummary, form_descriptions, forms_csv, forms_frame, summarise
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
    empty = login_problem(entered)
    if empty:  # nothing to compare: not counted as a guess
        ui.flash("warning", empty)
        return
    result = ui.login_limiter().check(lambda: hmac.compare_digest(_digest(entered), _digest(password)))
    if result is True:
        st.session_state["_results_digest"] = _digest(entered)
    elif result is False:
        ui.flash("error", "Wrong password: the page stays locked. Please check the password and try again.")
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
    with st.form("results_login"):
        st.text_input("Password", type="password", key="results_password_input")
        ui.show_flash()  # under the box, right above "Unlock"
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
    evaluator table formatted for display (its text already made safe for a spreadsheet, :func:`csv_safe`) and
    the evaluator picker's labels."""

    report: Report
    specs: dict[str, dict]
    evaluators: pd.DataFrame
    labels: dict[str, str]
    latex: str
    results_csv: str
    zone: Zone
    #: whether the database holds rubric ratings / scores of a kind that scores (its downloads are offered)
    has_ratings: bool = False
    has_scores: bool = False


@st.cache_resource(max_entries=12, show_spinner="Computing the results...")
def compute(_store: Store, database: str, version: tuple, options: Options, tz_name: str | None,
            tz_offset: float | None, study_version: str) -> View:
    """The view for one data version, one set of options and one time zone (the browser's): a refresh with
    no new answers costs one cheap query (``data_version``) and no recomputation, and renders what is
    prepared here; changing an option recomputes without rereading. The study's items files (their automatic
    metrics) come from the loaded study, named by its version."""
    zone = resolve_zone(tz_name, tz_offset)
    frames = frames_at(_store, database, version)
    report = analyse(frames, options, items_of(loaded))
    q = report.quality.copy()
    q.insert(0, "session", q["session_id"].map(_short))
    q["majority_agreement"] = q["majority_agreement"].map(fmt_pct)
    q["total_time_s"] = q["total_time_s"].map(lambda v: fmt_num(v, 0))
    q["median_time_s"] = q["median_time_s"].map(lambda v: fmt_num(v, 1))
    q["started_at"], q["completed_at"] = to_local(q["started_at"], zone), to_local(q["completed_at"], zone)
    if not q["external_id"].fillna("").astype(str).str.strip().any():  # no crowdsourcing ids: no empty column
        q = q.drop(columns=["external_id"])
    if not q["ended_by"].astype(bool).any():  # no session ended by a [study.session] limit
        q = q.drop(columns=["ended_by"])
    if not q["outcome"].isin(list(OUTCOME_FLAGS)).any():  # every completed session did the work its plan asked
        q = q.drop(columns=["outcome"])
    if not (q["checks_passed"] + q["checks_failed"] + q["tutorial_first_try"]).any():  # a study without checks
        q = q.drop(columns=["checks_passed", "checks_failed", "tutorial_first_try", "checks_result"])
    else:  # the checks right after the status: what a researcher looks at first in a crowd study
        checks = ["checks_result", "checks_passed", "checks_failed", "tutorial_first_try"]
        rest = [c for c in q.columns if c not in checks]
        at = rest.index("status") + 1
        q = q[rest[:at] + checks + rest[at:]]
    if "outcome" in q.columns:  # right after the status: a session that got no work, or ended without its
        rest = [c for c in q.columns if c != "outcome"]  # checks, is seen at once
        at = rest.index("status") + 1
        q = q[[*rest[:at], "outcome", *rest[at:]]]
    labels = {s: f"{_short(s)} · {name or '(no name)'} · {status}" for s, name, status in
              zip(report.quality["session_id"], report.quality["evaluator_name"], report.quality["status"],
                  strict=True)}
    # made safe for a spreadsheet here, once per report (Streamlit's table download writes cells as they are;
    # evaluators type names and ids), not on every render (0.2 s at 20,000 evaluators)
    has_ratings = bool((frames.ratings["metric"].astype(object) != "comment").any())  # every session's, as the CSV
    has_scores = (has_ratings and "rating" in scoring_kinds()) or bool(
        frames.evaluations["kind"].astype(object).isin(list(scoring_kinds())).any())
    return View(report, charts.report_specs(report, zone), csv_safe(q.drop(columns=["session_id", "completed"])),
                labels, latex_table(report), results_csv(report), zone, has_ratings, has_scores)


def chart(where: DeltaGenerator, specs: dict[str, dict], key: str) -> None:
    """One of the report's charts (built once per report, see ``charts.report_specs``), as wide as the page;
    a faceted chart (one panel per metric) keeps its panels' own width."""
    spec = specs.get(key)
    if spec is not None:
        faceted = "facet" in spec or bool({"column", "row", "facet"} & set(spec.get("encoding", {})))
        where.vega_lite_chart(spec=spec, **({} if faceted else {"width": "stretch"}))


def table(where: DeltaGenerator, frame: pd.DataFrame, zone: Zone | None = None, *, untrusted: bool = False) -> None:
    """A table with readable column names (``evalkit.display.COLUMN_LABELS``); times shown in ``zone``.

    ``untrusted``: the frame holds text typed by evaluators (names, ids, comments). Streamlit's own
    "Download as CSV" button on a table writes cells as they are, so such text is neutralised as in the
    exports (a leading ``'`` before ``=``, ``+``, ``-``, ``@``; control characters removed)."""
    shown = readable(csv_safe(frame) if untrusted else frame)
    times = {c: st.column_config.DatetimeColumn(c, format=TIME_FORMAT, help=f"Time zone: {zone.label}")
             for c in shown.columns if zone is not None and isinstance(shown[c].dtype, pd.DatetimeTZDtype)}
    # a missing value (a session not completed yet, a statistic undefined) as the en dash of the formatted cells
    where.dataframe(shown, hide_index=True, column_config=times or None, placeholder="–")


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

END_CONFIRM, END_BUTTON = "I want to end the study for everyone", "End the study"


def end_study() -> None:
    """End the study, only when its confirmation box is ticked (else say so under the button)."""
    why = confirm_problem(bool(st.session_state.get("confirm_end")), END_CONFIRM, END_BUTTON)
    if why:
        st.session_state["_end_refused"] = why
        return
    store.set_survey_state("ended", actor=ACTOR)


with st.expander("Study controls", expanded=bool(st.session_state.get("_end_refused"))):
    c1, c2, c3 = st.columns(3)
    if state == "open":
        c1.button("Pause new evaluators", on_click=lambda: store.set_survey_state("paused", actor=ACTOR))
    elif state == "paused":
        c1.button("Resume: let new evaluators start", on_click=lambda: store.set_survey_state("open", actor=ACTOR))
    if state != "ended":
        c2.checkbox(END_CONFIRM, key="confirm_end")
        c3.button(END_BUTTON, type="primary", on_click=end_study)
        if why := st.session_state.pop("_end_refused", None):  # the unticked box, said under the button
            c3.warning(why)
    else:
        c1.button("Reopen the study", on_click=lambda: store.set_survey_state("open", actor=ACTOR))
    st.caption("Changes take effect for evaluators on their next click. Every change is logged.")

#: the switches that mean something only for a study with rating tasks, or with tutorials and attention checks
RATING_TASKS = any(task.kind == "rating" for task in loaded.study.tasks)
SPANS_TASKS = any(task.kind == "spans" for task in loaded.study.tasks)
#: the kinds Pearmut's annotation-log shape holds (error spans, and scores: Pearmut's DA)
PEARMUT_TASKS = any(task.kind in ("spans", "score") for task in loaded.study.tasks)
CHECKS = any(checks.tutorial or checks.attention_checks for _, checks in loaded.study.checks)
o1, o2, o3 = st.columns(3)
options = Options(
    completed_only=o1.toggle("Completed sessions only", key="opt_completed"),
    familiarity_weighted=RATING_TASKS and o2.toggle("Familiarity-weighted rating means", key="opt_weighted"),
    fast_ms=int(o3.number_input("Flag answers faster than (seconds)", min_value=0.0, max_value=120.0, value=2.0,
                                step=0.5, key="opt_fast") * 1000),
    exclude_failed_checks=not CHECKS or o1.toggle(
        "Leave out failed evaluators", value=True, key="opt_failed_checks",
        help="Evaluators who failed the attention checks: more failed checks (first answer wrong) than "
             "[study.quality] max_failed_checks. The evaluator table shows everyone's checks."),
    include_check_questions=CHECKS and o2.toggle(
        "Count check questions", key="opt_check_questions",
        help="Tutorial and attention-check questions. Off: their answers are left out of every statistic."),
)


# ----------------------------------------------------------------------------- sections


def tab_of(result: TaskResult) -> str:
    """The tab a task's section is in (rating tasks: "Ratings", the others "Overview")."""
    return result.tab


def show_overview(report: Report, specs: dict[str, dict]) -> None:
    m = st.columns(5 if RATINGS else 3)
    m[0].metric("Evaluators counted", report.n_sessions)
    m[1].metric("Completed", report.n_completed)
    m[2].metric("Answers", report.n_answers)
    if RATINGS:  # a study without a rating task has no item ratings to count
        m[3].metric("Item ratings", report.n_ratings, help="Ratings of an item by one evaluator; an item rated by "
                    "two evaluators counts twice.")
        m[4].metric("Items rated", report.n_rated_items, help="Distinct items rated by at least one evaluator.")
    show_queues()
    shown = [result for result in report.sections() if tab_of(result) == "Overview"]
    elsewhere = sorted({tab_of(result) for result in report.sections()} - {"Overview"})
    if not shown and elsewhere:  # e.g. a study of rating tasks only: say where its results are
        tabs = " and ".join(f"**{tab}**" for tab in elsewhere)
        st.info(f"The results of this study's tasks are in the {tabs} tab{'s' if len(elsewhere) > 1 else ''}.",
                icon=":material/arrow_forward:")
    for result in shown:
        show_task(result, specs)


def show_queues() -> None:
    """Tasks with ``judgments_per_item``: how many judgments each unit (item and systems) has, read on every
    render (a few counts), so it is current whenever the page shows new answers."""
    found = queue_statuses(store, loaded.study)
    if not found:
        return
    st.markdown("#### Judgments per item")
    for task, spec, status in found:
        st.progress(min(status.judged / max(status.units * spec.k, 1), 1.0), text=queue_summary(task, spec, status))
    st.caption("A unit is an item with the systems one question shows. Claims of evaluators who leave return to "
               "the queue after the task's claim_minutes. Judgments count the answers of evaluators still counted: "
               "those who failed the attention checks, and excluded or trashed sessions, gave theirs back (their "
               "answers stay stored), so each unit gets k judgments from the others.")


def show_task(result: TaskResult, specs: dict[str, dict]) -> None:
    """A task's section: its heading, then each of its blocks (a line above it, its chart, its table, its note)."""
    st.subheader(section_headings(result)[0])
    for block in result.blocks():
        if block.shown == "report":
            continue
        where = st.expander(block.heading) if block.folded else st
        line = block.page_heading
        if line is None:
            line = f"**{block.heading}**" if block.heading else ""
        if line and not block.folded:
            where.markdown(line)
        if block.chart:
            chart(where, specs, block.chart)
        if block.table is not None:
            table(where, block.table)
        if block.note:
            where.caption(block.note)


def show_ratings(report: Report, specs: dict[str, dict]) -> None:
    shown = [r for r in report.sections() if tab_of(r) == "Ratings"]
    if not shown:
        st.info("This study has no rating block.")
    for result in shown:
        show_task(result, specs)


def set_status(session_id: str, status: str, done: str) -> None:
    """Set a session's status (exclude, include, trash, restore); ``done`` is said under the evaluator picker."""
    store.set_session_status(session_id, status, actor=ACTOR)
    ui.flash("success", done)


#: ASCII punctuation, each escaped with a backslash: Markdown then shows it as it is
MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def who(session_id: str, name: object) -> str:
    """A session as the admin messages name it: ``053c108f (Tester)``, the name (typed by the evaluator) shown as
    typed, never as Markdown."""
    text = MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(str(name or "").split()))
    return f"{_short(session_id)} ({text})" if text else _short(session_id)


DELETE_CONFIRM, DELETE_BUTTON = "Delete permanently: I understand this cannot be undone", "Delete permanently"
#: what each action does, under the buttons
ACTIONS_NOTE = ("**Exclude**: the session is kept but not counted; Include again undoes it. **Move to trash**: not "
                "counted either, and its participant id is free to start again (for test runs and duplicates); "
                "Restore brings it back. **Delete permanently**: the session and its answers are gone for good.")


def delete(session_id: str, named: str) -> None:
    """Delete a session and its answers, only when its confirmation box is ticked (else say so under the button)."""
    why = confirm_problem(bool(st.session_state.get(f"confirm_delete_{session_id}")), DELETE_CONFIRM, DELETE_BUTTON)
    if why:
        st.session_state["_delete_refused"] = (session_id, why)
        return
    store.delete_session(session_id, actor=ACTOR)
    ui.flash("success", f"Deleted {named} and all its answers for good.")


def show_evaluators(view: View) -> None:
    report, specs = view.report, view.specs
    if report.quality.empty:
        st.info("No evaluator has started yet.")
        return
    table(st, view.evaluators, view.zone)  # (made safe in compute)
    st.caption(f"Times in {view.zone.label}. Fast answers: under {report.options.fast_ms / 1000:g} s · Max "
               "identical run: the longest run of identical responses (straight-lining) · Majority agreement: "
               "picks matching the other evaluators' majority on the same question slot. Excluded and trashed "
               "sessions are listed but never counted, and so are abandoned ones (nothing was recorded for them "
               "within `[study.session] abandon_minutes` of their start: their places went to others)."
               + (" Outcome: *full*: the queue had no work for them, no pass code; *incomplete*: ended without "
                  "their attention checks or a judgment, the fail code." if "outcome" in view.evaluators.columns
                  else ""))
    left, right = st.columns(2)
    if report.n_answers:
        chart(left, specs, "timeline")
        chart(left, specs, "timeline_evaluators")
        chart(right, specs, "answer_times")

    st.markdown("#### Manage an evaluator")
    # The picker's labels carry the session's status. The browser keeps the label it was sent, so when the status
    # of the session shown changed (an action below, an evaluator finishing) the choice is set again: the browser
    # is sent the label with the new status.
    shown, picked = st.session_state.get("_admin_shown"), st.session_state.get("admin_session")
    if shown and shown[0] == picked and view.labels.get(picked, shown[1]) != shown[1]:
        st.session_state["admin_session"] = picked
    chosen = st.selectbox("Evaluator", list(view.labels), index=None, key="admin_session",
                          format_func=view.labels.__getitem__, placeholder="Choose an evaluator")
    st.session_state["_admin_shown"] = (chosen, view.labels[chosen]) if chosen is not None else None
    ui.show_flash()  # what the last action did, right under the picker
    if chosen is None:
        return
    row = report.quality[report.quality["session_id"] == chosen].iloc[0]
    back = "completed" if row["completed"] else "active"
    status, named = row["status"], who(chosen, row["evaluator_name"])
    a1, a2, a3 = st.columns(3)
    if status == "trashed":  # (first: no gap before it)
        a1.button("Restore from trash", on_click=set_status, key="act_restore",
                  args=(chosen, back, f"Restored {named} from the trash: it is {back} and counts as before."))
    elif status == "excluded":
        a1.button("Include again", on_click=set_status, key="act_include",
                  args=(chosen, back, f"Included {named} again: it is {back} and counts as before."))
    else:
        a1.button("Exclude from the results", on_click=set_status, key="act_exclude",
                  args=(chosen, "excluded", f"Excluded {named} from the results: it is kept but no longer counts; "
                                            "Include again brings it back."))
    if status != "trashed":
        a2.button("Move to trash", on_click=set_status, key="act_trash",
                  args=(chosen, "trashed", f"Moved {named} to the trash: it no longer counts; Restore brings it "
                                           "back."))
    with a3:  # the one action that cannot be undone: a plain button, after a tick
        st.checkbox(DELETE_CONFIRM, key=f"confirm_delete_{chosen}")
        st.button(DELETE_BUTTON, on_click=delete, args=(chosen, named), key="act_delete")
        refused = st.session_state.pop("_delete_refused", None)
        if refused and refused[0] == chosen:  # the unticked box, said under the button
            st.warning(refused[1])
    st.caption(ACTIONS_NOTE)


def show_invitations(zone: Zone) -> None:
    """Invited participants (``python -m evalkit invite``): who has not started and who has not finished.

    Read on every render (two small queries), so it is current whenever the page shows new answers."""
    statuses = statuses_of(store)
    if not statuses and loaded.study.participants != "invited":
        return  # an open study without invitations: nothing to say
    st.markdown("#### Invited participants")
    if not statuses:
        st.info("Nobody is invited yet, and this study admits invited participants only. "
                "`python -m evalkit invite --n 50` (or `--csv FILE`) creates participants with private links.")
        return
    counts = status_counts(statuses)
    st.write(f"{len(statuses):,} invited · **{counts['not started']:,} not started** · "
             f"**{counts['not finished']:,} started, not finished** · {counts['finished']:,} finished")
    frame = status_frame(statuses)
    frame["started_at"] = to_local(frame["started_at"], zone)
    left, right = st.columns(2)
    for where, status, title, columns in (
            (left, "not started", "Not started", ["participant_id", "note"]),
            (right, "not finished", "Started, not finished", ["participant_id", "note", "started_at"])):
        rows = frame.loc[frame["status"] == status, columns].rename(columns={"participant_id": "Participant",
                                                                              "note": "Note"})
        where.markdown(f"**{title}** ({len(rows):,})")
        if len(rows):
            table(where, rows, zone, untrusted=True)
        else:
            where.caption("Nobody.")
    flagged = frame.loc[frame["flag"] != "", ["participant_id", "note", "flag"]]
    if len(flagged):  # finished without a queued judgment (the study was full) or without their checks
        st.markdown(f"**Finished, but look at these** ({len(flagged):,})")
        table(st, flagged.rename(columns={"participant_id": "Participant", "note": "Note", "flag": "Why"}), zone,
              untrusted=True)
    st.caption(f"Times in {zone.label}. A participant counts from their newest session that is not in the trash; "
               "`python -m evalkit invite --status` prints the same lists.")
    for task_id, lists in fixed_tasks(loaded.study, loaded.item_sets).items():
        show_list_progress(task_id, lists, statuses)


def show_list_progress(task_id: str, lists: Mapping[str, tuple[str, ...]], statuses: list) -> None:
    """Each participant's progress through their fixed list in one task (``assignment = "fixed"``)."""
    frame = list_progress(lists, statuses, store.answered_items(task_id))
    listed = frame[frame["status"] != "no list"]
    done = int((listed["answered"] == listed["items"]).sum())
    st.markdown(f"**Fixed lists of task `{task_id}`**: {len(listed):,} lists · {done:,} done · "
                f"{int(listed['answered'].sum()):,} of {int(listed['items'].sum()):,} items answered")
    st.dataframe(csv_safe(frame).rename(columns={"participant_id": "Participant", "status": "Status",
                                                 "items": "Items", "answered": "Answered", "share": "Progress"}),
                 hide_index=True, placeholder="–", column_config={"Progress": st.column_config.ProgressColumn(
                     "Progress", format="percent", min_value=0.0, max_value=1.0)})
    missing = (frame["status"] == "not invited").sum()
    if missing:
        st.caption(f"{missing:,} list(s) belong to ids nobody has invited yet: `python -m evalkit invite --csv` "
                   "with those ids makes their private links.")


def evaluations_file() -> str:
    """Every stored evaluation, every column, read when the button is clicked (not on every rerun)."""
    return evaluations_csv(load_frames(store, full=True))


def ratings_file() -> str:
    """Every stored rating, read when the button is clicked."""
    return ratings_csv(load_frames(store, full=True))


def scores_file() -> str:
    """Every stored score (score and rating tasks), one row each, read when the button is clicked."""
    return scores_csv(load_frames(store, full=True))


# ----------------------------------------------------------------------------- background forms (kind "form")

FORMS = form_descriptions({"": study_summary(loaded.study)})  # the study's forms, in the config's order


def form_summaries(options: Options, report: Report) -> list[FormSummary]:
    """The forms' answers summarised per field, read from the store now: the sessions every other table counts
    (completed ones only with that switch; without those who failed the attention checks, with "Leave out failed
    evaluators", as the report found them)."""
    failed = report.quality.loc[report.quality["checks_result"] == "failed", "session_id"] \
        if options.exclude_failed_checks and "checks_result" in report.quality.columns else ()
    return summarise(forms_frame(store.form_answers(), store.sessions()), FORMS,
                     completed_only=options.completed_only, leave_out=list(failed))


def show_forms(forms: list[FormSummary]) -> None:
    """Per form, per field: counts per option or level, min / median / max of numbers, the texts (as text)."""
    with st.container(width=820):  # small tables: full width would spread three columns over the screen
        _show_forms(forms)


def _show_forms(forms: list[FormSummary]) -> None:
    for form in forms:
        st.subheader(f"{form.title} · form · {form.submitted} submitted", anchor=False)
        for f in form.fields:
            skipped = f", {f.skipped} left it empty" if f.skipped else ""
            st.markdown(f"**{f.label}**")
            st.caption(f"{f.type} · {f.answered} {'answer' if f.answered == 1 else 'answers'}{skipped}")
            if f.type == "text" and not f.answered:
                pass
            elif f.type == "text":
                with st.expander(f"Show the {f.answered} {'text' if f.answered == 1 else 'texts'}"):
                    table(st, f.table.rename(columns={"text": "Text"}), untrusted=True)  # a cell renders no markup
            else:
                frame = f.table.copy()
                if "share" in frame:
                    frame["share"] = frame["share"].map(fmt_pct)
                table(st, frame.rename(columns={"option": "Option", "count": "Evaluators", "share": "Share (%)",
                                                "n": "Answers", "min": "Min", "median": "Median", "max": "Max",
                                                "mean": "Mean"}))
            if f.note:
                st.caption(f.note)
    st.download_button("Forms (CSV)", exported("forms.csv", lambda: forms_csv(store)), file_name="forms.csv",
                       mime="text/csv", on_click="ignore", key="dl_forms_tab")


def show_exports(view: View) -> None:
    # (label, file, content, key); the ratings and scores only when the database holds some: no empty file
    downloads = [("Evaluations (CSV)", "evaluations.csv", evaluations_file, "dl_evaluations"),
                 *([("Ratings (CSV)", "ratings.csv", ratings_file, "dl_ratings")] if view.has_ratings else []),
                 *([("Scores (CSV)", "scores.csv", scores_file, "dl_scores")] if view.has_scores else []),
                 ("Main results (CSV)", "results.csv", lambda: view.results_csv, "dl_results")]
    for where, (label, name, content, key) in zip(st.columns(len(downloads)), downloads, strict=True):
        where.download_button(label, exported(name, content), file_name=name, mime="text/csv", on_click="ignore",
                              key=key)
    notes = ["The evaluations CSV starts with the column names of the CERA study's original export (evaluatorName, "
             "sessionId, task, questionIndex, response, reviewSource, domain, timeSpentMs, leftSource, rightSource, "
             "createdAt), kept so that the CERA analysis scripts read this file unchanged; its source columns are "
             "filled for the kinds CERA used (triplet, pairwise). An answer of another kind names its systems in "
             "system (the output shown), preferred_system (the one chosen) and left_system / right_system."]
    if view.has_ratings:
        notes.append("The ratings CSV has one row per metric score; comments are in the itemComment and "
                     "metricComment columns.")
    if view.has_scores:
        notes.append("The scores CSV has one row per score (score and rating tasks) with its system, scale and "
                     "the scale's range, as numbers: ready for a spreadsheet or pandas.read_csv.")
    notes.append("In every CSV, text that a spreadsheet would run as a formula (starting with =, +, -, @, tab or "
                 "carriage return) gets a leading ', and control characters are removed.")
    st.caption(" ".join(notes))
    if FORMS:
        st.download_button("Forms (CSV)", exported("forms.csv", lambda: forms_csv(store)), file_name="forms.csv",
                           mime="text/csv", on_click="ignore", key="dl_forms")
        st.caption("The forms CSV has one row per session and form field; a multiple choice is a JSON list of the "
                   "options chosen; an optional field left empty has an empty value.")
    if SPANS_TASKS or PEARMUT_TASKS:
        left, right = st.columns(2)
        if SPANS_TASKS:
            left.download_button("Spans (CSV)", exported("spans.csv", lambda: spans_csv(store)),
                                 file_name="spans.csv", mime="text/csv", on_click="ignore", key="dl_spans")
        right.download_button("Annotations, Pearmut's shape (JSONL)",
                              exported("pearmut.jsonl", lambda: pearmut_jsonl(store, items_of(loaded))),
                              file_name="annotations.pearmut.jsonl", mime="application/jsonl", on_click="ignore",
                              key="dl_pearmut")
        st.caption(("The spans CSV has one row per error span (offsets in code points, the end exclusive), deleted "
                    "suggestions included; the" if SPANS_TASKS else "The") +
                   " JSONL has one line per answer (per document of an imported Pearmut campaign) in Pearmut's "
                   "annotation-log shape (offsets in UTF-16 units, end_i inclusive), for tools written for "
                   "Pearmut's logs; `evalkit import pearmut --with-annotations` reads it back.")
    latex = view.latex
    st.markdown("**LaTeX table** (booktabs)")
    # shown as plain text: a LaTeX highlighter takes the % of an escaped \% for a comment and greys the rest of
    # the line (every rate, interval and p of a row); the text shown and copied is the exported table itself
    st.code(latex, language=None)
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
#: the Ratings tab and the rating counters: for a study with a rating task (or a database that holds ratings)
RATINGS = (RATING_TASKS or view.report.n_ratings > 0
           or any(tab_of(result) == "Ratings" for result in view.report.sections()))
names = ["Overview", *(["Ratings"] if RATINGS else []), "Evaluators", "Exports", *(["Forms"] if FORMS else [])]
tabs = dict(zip(names, st.tabs(names), strict=True))
with tabs["Overview"]:
    show_overview(view.report, view.specs)
if RATINGS:
    with tabs["Ratings"]:
        show_ratings(view.report, view.specs)
with tabs["Evaluators"]:
    show_evaluators(view)
    show_invitations(view.zone)
with tabs["Exports"]:
    show_exports(view)
if FORMS:
    with tabs["Forms"]:
        show_forms(form_summaries(options, view.report))
st.session_state["_results_render_s"] = time.perf_counter() - started
st.session_state["_results_shown_at"] = time.monotonic()
