"""Completion: thanks, the completion code and, if configured, the link back to the platform."""

import streamlit as st

import ui
from evalkit.survey import completion_link

ctx = ui.enter("done")
session = ctx.store.complete_session(ctx.session.session_id)  # idempotent: the same code on every visit
code = session.completion_code or ""

st.title("Thank you!", anchor=False)
st.write("You have finished the study and all your answers are saved. You can close this page.")
st.markdown("Your completion code:")
st.code(code, language=None)
link = completion_link(ctx.loaded.study, code)
if link:
    st.link_button("Return to the recruiting platform", link, type="primary", icon=":material/open_in_new:")
    st.caption("The button takes you back to the platform with your completion code filled in.")
