"""Completion: thanks (saying so when a time or question limit ended the study), the completion code (pass /
fail / per-session, decided on the server) and, if configured, the link back to the platform with an automatic
redirect."""

import streamlit as st

import ui
from evalkit.survey import completion_link, done_text, finish_session, redirect_script

ctx = ui.enter("done")
study = ctx.loaded.study
code, limit = "", None
with ui.calm_errors("done"):  # (also when this page runs without app.py's guard, as after a switch)
    # idempotent: the same code on every visit; the outcome is decided from the stored answers; a session
    # ended by a [study.session] limit keeps that in its meta
    session = finish_session(ctx.store, study, ctx.session.session_id, ctx.step.limit)
    code, limit = session.completion_code or "", session.meta.get("limit")
if not code:
    st.stop()

st.title("Thank you!", anchor=False)
st.write(done_text(limit))
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
