"""Completion: thanks (saying so when a time or question limit ended the study), the completion code (pass /
fail / per-session, decided on the server) and, if configured, the link back to the platform with an automatic
redirect. A session that could not get work (the queue was full) is told the study is full and gets no pass
code: the study's ``completion_code_full`` when it has one, else a request to return the study. ``[study]
done_message`` replaces the thanks line (:func:`evalkit.survey.done_text`); the code box stays under it.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

import streamlit as st

import ui
from evalkit.survey import completion_link, done_text, finish_session, outcome_of, redirect_script

ctx = ui.enter("done")
study = ctx.loaded.study
session = None
with ui.calm_errors("done"):  # (also when this page runs without app.py's guard, as after a switch)
    # idempotent: the same code on every visit; the outcome is decided from the stored answers and the plan; a
    # session ended by a [study.session] limit keeps that in its meta
    session = finish_session(ctx.store, study, ctx.session.session_id, ctx.step.limit, ctx.questions)
if session is None:
    st.stop()
code, limit, outcome = session.completion_code or "", session.meta.get("limit"), outcome_of(session)

if outcome == "full":
    st.title("This study is full", anchor=False)
    st.write(done_text(limit, outcome))
    if not code:
        st.warning("**Please return this study** on the recruiting platform (on Prolific: \"Return submission\"). "
                   "There is no completion code to enter.", icon=":material/undo:")
        st.stop()
    st.markdown("Please submit the study with this code, so that you are paid for your time:")
elif not code:
    st.stop()
else:
    st.title("Thank you!", anchor=False)
    # [study] done_message (the researcher's Markdown, trusted like the consent text) replaces the thanks line, with
    # the code and the participant's id (the invited one's, else the platform's) filled in as plain text
    st.write(done_text(limit, outcome, message=study.done_message, code=code, participant=session.external_id))
    st.markdown("Your completion code:")
st.code(code, language=None)
link = completion_link(study, code)
if link:
    st.link_button("Return to the recruiting platform", link, type="primary", icon=":material/open_in_new:")
    if study.redirect_seconds:
        st.caption(f"You will be taken back to the platform automatically in {study.redirect_seconds} seconds, "
                   "with your completion code filled in. If nothing happens, use the button.")
        st.html("<style>[data-testid=stElementContainer]:has(.evalkit-redirect) {display: none;}</style>"
                + redirect_script(link, study.redirect_seconds), unsafe_allow_javascript=True)
    else:
        st.caption("The button takes you back to the platform with your completion code filled in.")
