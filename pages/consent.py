"""Consent and identity: creates the session only when the evaluator agrees.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import logging

import streamlit as st

import ui
from evalkit.invite import INVITED_META, check_link, invited_resume
from evalkit.missing import NAME_LABEL, agree_label, consent_problems
from evalkit.queue import is_full
from evalkit.store import ParticipantHasSession
from evalkit.survey import EXTERNAL_ID_PARAMS, participant_resume, sweep_abandoned

log = logging.getLogger("evalkit.app")
#: The words of every refused start of a participant id: one that already has a session (when the link opens, or
#: when "Start" is clicked on a stale page) and an open study's PROLIFIC_PID that is an invited id (refused only at
#: "Start": until then it looks like any other id, so nobody can list the invited ids by trying them).
PARTICIPANT_HAS_SESSION = (
    "This participant ID already has a session in this study or is reserved, so a new session cannot be started "
    "here. To continue where you left off, open the study again from the recruiting platform (e.g. your Prolific "
    "dashboard) or use the address your browser showed while you were taking part (it contains \"?s=\"). If you "
    "think this is a mistake, please contact the research team.")


INVALID_LINK = (
    "This invitation link is not valid: the participant ID or its key does not match an invitation of this "
    "study. Please open the link exactly as you received it (copying only part of it breaks it). If it still "
    "does not work, contact the research team; nothing was recorded.")
INVITED_ONLY = (
    "This study is open to invited participants only. Please open the personal link you received from the "
    "research team (it contains \"participant=\" and \"key=\").")
STUDY_FULL = (
    "**This study is full.** Enough people have taken part, or are taking part right now, so no new "
    "participants can start. Thank you for your interest; nothing was recorded.")
INVITED_ID_TAKEN = (
    "This participant ID already has a session that was not started from its invitation link, so it cannot be "
    "continued or started here. Please contact the research team.")


def participant_has_session_notice() -> None:
    """Shown when a link carries the participant id of an existing session but not its own SESSION_ID."""
    st.error(PARTICIPANT_HAS_SESSION)  # a refused start: red like every failure (docs: evaluator-screens.md)

loaded, store = ui.load()
study = loaded.study
state = store.survey_state()
sweep_abandoned(store, study)  # sessions whose browser never got its token give their slot back (once a minute)

if state == "ended":
    st.title(study.title)
    ui.ended_notice()
    st.stop()

# A returning evaluator: resume from the token in the URL, from this browser tab's session,
# or from their crowdsourcing id.
token = ui.token() or st.session_state.get("_created")
if token is not None:
    session = store.get_session(token)
    if session is not None and session.status == "abandoned":  # nothing was ever recorded for it: start afresh
        st.session_state.pop("_created", None)
        st.query_params.pop(ui.TOKEN_PARAM, None)
    elif session is None:
        st.title(study.title)
        ui.unknown_session_notice()
        st.stop()
    else:
        ui.go(ui.step_of(loaded, store, session)[0], session.session_id)

# A private link of an invited participant (python -m evalkit invite): the key proves who opens it.
query = {k: v for k, v in st.query_params.items() if isinstance(v, str)}
link = check_link(store, query, study.participants)
# An open study's PROLIFIC_PID that is an invited id ("reserved") gets the page every id gets, and is refused only
# at "Start" (see _start), with the words of every refused start: the page tells nobody which ids are invited.
if link.outcome in ("invalid", "required"):
    st.title(study.title)
    st.error(INVITED_ONLY if link.outcome == "required" else INVALID_LINK)
    st.stop()
invited = link.outcome == "valid"

external = {} if invited else {k: st.query_params[k].strip()[:200] for k in EXTERNAL_ID_PARAMS
                               if isinstance(st.query_params.get(k), str) and st.query_params[k].strip()}
external_id = link.participant_id if invited else external.get("PROLIFIC_PID", "")
if invited:
    earlier = store.find_session(external_id)
    decision = invited_resume(earlier)
    if decision == "resume":
        ui.go(ui.step_of(loaded, store, earlier)[0], earlier.session_id)
    elif decision == "refuse":
        st.title(study.title)
        st.error(INVITED_ID_TAKEN)
        st.stop()
elif external_id:
    earlier = store.find_session(external_id)
    decision = participant_resume(earlier, external)
    if decision == "resume":
        ui.go(ui.step_of(loaded, store, earlier)[0], earlier.session_id)
    elif decision == "refuse":
        st.title(study.title)
        participant_has_session_notice()
        st.stop()

st.title(study.title)
if study.description:
    st.write(study.description)

if state == "paused":
    st.info("**The study is paused.** Please come back later; no new participants can start right now.")
    st.stop()

if is_full(store, study):  # judgments_per_item: every item has its k judgments (or live claims)
    st.info(STUDY_FULL)
    st.stop()

if st.session_state.get("_declined"):
    st.info("You have chosen not to take part. Nothing was recorded. You can close this page.")
    if st.button("I changed my mind"):
        st.session_state["_declined"] = False
        st.rerun()
    st.stop()

if study.estimated_minutes:
    st.caption(f":material/schedule: About {study.estimated_minutes} minutes")
if study.consent_text:
    with st.container(border=True):
        st.markdown(study.consent_text)  # trusted: the researcher's own consent file


def problems() -> dict[str, str]:
    """What stops "Start the study" (the box unticked, a required name empty), by widget."""
    name_required = not invited and not external_id
    return consent_problems(bool(st.session_state.get("consent_agree")), st.session_state.get("consent_name"),
                            name_required)


def start() -> None:
    """Create the session (from the button's callback: a double click cannot create two).

    A failed write (disk full, database gone) is logged and shown as a calm "please try again", never as
    a traceback; nothing is half-created (the session is one INSERT).
    """
    try:
        _start()
    except Exception:
        log.exception("starting a session failed")
        ui.flash("error", "We could not start your session just now. Please try again in a moment; if it keeps "
                          "happening, tell the research team.")


def _start() -> None:
    if st.session_state.get("_created"):
        return
    if problems():  # nothing is created; each problem is marked next to its widget from now on
        st.session_state["_consent_tried"] = True
        return
    name = (st.session_state.get("consent_name") or "").strip()
    if store.survey_state() == "paused":
        ui.flash("info", "The study was paused a moment ago. Please come back later.")
        return
    if is_full(store, study):  # the last slot went while this page was open
        ui.flash("info", STUDY_FULL)
        return
    if not invited and check_link(store, query, study.participants).outcome == "reserved":
        ui.flash("error", PARTICIPANT_HAS_SESSION)  # an invited id starts only from its private link
        return
    user_agent = (st.context.headers.get("User-Agent", "") or "") if study.record_user_agent else ""
    try:  # one transaction: two tabs of one participant clicking at once still make one session
        session = store.create_session(
            study_version=loaded.version, evaluator_name=name[:100], external_id=external_id, user_agent=user_agent,
            meta={INVITED_META: True} if invited else {k.lower(): v for k, v in external.items()},
            one_per_participant=True,
        )
    except ParticipantHasSession as exc:  # started in another tab meanwhile: the same rule as opening the link
        again = invited_resume(exc.session) if invited else participant_resume(exc.session, external)
        if again == "resume":
            st.session_state["_created"] = exc.session.session_id
            st.query_params[ui.TOKEN_PARAM] = exc.session.session_id
        else:
            ui.flash("error", INVITED_ID_TAKEN if invited else PARTICIPANT_HAS_SESSION)
        return
    st.session_state["_created"] = session.session_id
    st.query_params[ui.TOKEN_PARAM] = session.session_id


ui.show_flash()
marks = problems() if st.session_state.get("_consent_tried") else {}  # checked again on each click (a form)
with st.form("consent"):
    # "the information above" only when there is some (a study without a consent file: docs: evaluator-screens.md)
    st.checkbox(agree_label(bool(study.consent_text.strip())), key="consent_agree")
    if "agree" in marks:  # a yellow "what is missing" mark, hidden as soon as the box is ticked
        ui.missing_mark(marks["agree"], "consent_agree")
        ui.clear_mark_when_checked("consent_agree")
    if invited:
        st.caption("You opened your personal invitation link, so your name is optional.")
        st.text_input(f"{NAME_LABEL} (optional)", key="consent_name", max_chars=100)
    elif external_id:
        st.caption("Your participant ID was received from the recruiting platform, so your name is optional.")
        st.text_input(f"{NAME_LABEL} (optional)", key="consent_name", max_chars=100)
    else:  # (the placeholder lets the browser hide the name's mark once something is typed)
        st.text_input(NAME_LABEL, key="consent_name", max_chars=100, placeholder="A first name is enough",
                      help="Used only to tell participants apart; it is never published.")
    if "name" in marks:
        ui.missing_mark(marks["name"], "consent_name")
        typed = st.session_state.get("consent_name") or ""
        if typed.strip() or not typed:  # (a box of only spaces is no name: its mark must stay in sight)
            st.html(f"<style>{ui.clear_mark_css('consent_name', 'input:not(:placeholder-shown)')}</style>")
    st.form_submit_button("Start the study", type="primary", on_click=start)

st.button("I do not want to take part", type="tertiary",
          on_click=lambda: st.session_state.update(_declined=True))
