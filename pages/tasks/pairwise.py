"""Renderer of kind ``pairwise``: which of two texts sounds more natural (forced choice, or the HELP slider)."""

import streamlit as st

import ui
from evalkit.tasks.pairwise import PairwiseTask
from evalkit.tasks.responses import record_slider


def render(ctx: ui.Context) -> None:
    """A forced choice between the two cards, or the HELP slider with its accept / reject buttons."""
    task = ctx.step.task
    assert isinstance(task, PairwiseTask)
    if task.response == "choice":
        ui.choice_question(ctx)
        return
    slider(ctx, task)


def slider(ctx: ui.Context, task: PairwiseTask) -> None:
    """HELP protocol: -100 (A entirely better) .. +100 (B entirely better), accept / reject buttons."""
    question = ctx.step.question
    assert question is not None
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.progress_header(ctx.step)
    st.subheader(task.question, anchor=False)
    st.caption(f"Topic: {ctx.loaded.study.domain_label(question.domain)}")
    ui.review_cards(question)
    key = f"{question.task}-{question.index}-slider"

    def submit(button: str) -> None:
        value = st.session_state.get(key, 0)
        ui.safe_save(lambda: record_slider(ctx.store, ctx.session, question, int(value), button,
                                           ui.elapsed_ms(clock)))

    ui.show_flash()
    with st.form(f"{question.task}-{question.index}"):
        st.slider("Move the slider towards the better review", min_value=-100, max_value=100, value=0, step=1,
                  key=key,
                  help="-100: Review A is entirely better · 0: no preference · +100: Review B is entirely better")
        with st.container(horizontal=True, wrap=False):  # one row under the slider's ends, also on a phone
            st.caption("◀ Review A is better")
            st.caption("0 = no preference", text_alignment="center")
            st.caption("Review B is better ▶", text_alignment="right")
        st.markdown("Then say whether **both** reviews would be acceptable as real reviews:")
        c1, c2 = st.columns(2)
        with c1:
            st.form_submit_button("Accept: both are acceptable", on_click=submit, args=("accept",),
                                  width="stretch")
        with c2:
            st.form_submit_button("Reject: neither is acceptable", on_click=submit, args=("reject",),
                                  width="stretch")
