"""Renderer of kind ``rating``: rubric ratings of a system's output for items the evaluator knows (e.g. paper
novelty)."""

from __future__ import annotations

import streamlit as st

import ui
from evalkit.sampling import item_order
from evalkit.tasks.rating import RatingTask, dot_graph, finish_rating, record_item_rating


def render(ctx: ui.Context) -> None:
    """Pick an item, read the system's assessment, score every metric; save, or save and finish."""
    task = ctx.step.task
    assert isinstance(task, RatingTask)
    items = ctx.loaded.items[task.id]
    by_id = {i.id: i for i in items}
    rated = dict(ctx.step.rated)
    index = ctx.step.index
    available = [i.id for i in item_order(task, items, ctx.session.seed) if i.id not in rated.values()]
    metrics = task.questions

    ui.progress_header(ctx.step, "Paper")

    if rated:
        n = len(rated)
        note = f"You have rated {n} {'paper' if n == 1 else 'papers'}."
        if n < task.min_items:
            note += f" Please rate at least {task.min_items}."
        elif n < task.suggested_items:
            note += f" If you know more papers, rating {task.suggested_items} would help us a lot."
        st.success(note)
        if n >= task.min_items:
            st.button("I am done rating papers", on_click=lambda: ui.safe_save(
                lambda: finish_rating(ctx.store, ctx.session, task)), key=f"{task.id}-{index}-done")

    if not available:
        st.info("You have rated every paper in the list. Thank you!")
        st.stop()

    st.subheader("Choose a paper you know well", anchor=False)
    item_id = st.selectbox(
        "Paper", available, index=None, format_func=lambda i: by_id[i].title, key=f"{task.id}-{index}-item",
        placeholder="Type to search the list of papers...", label_visibility="collapsed")
    if item_id is None:
        ui.show_flash()
        st.caption(f"{len(available)} papers to choose from. Pick one you have read, so that you can judge the "
                   "system's assessment.")
        st.stop()

    item = by_id[item_id]
    clock = ui.clock_key(ctx.session, task.id, index, item_id)
    ui.start_clock(clock)

    st.markdown("#### The system's novelty assessment")
    with st.container(border=True):
        st.markdown("**Paper**")
        st.text(item.title)
        st.markdown("**Summary**")
        st.text(item.summary)
        st.markdown("**Novelty rating**")
        st.text(f"{'★' * item.rating}{'☆' * (5 - item.rating)}  {item.rating} / 5")
        left, right = st.columns(2)
        with left:
            st.markdown("**Supporting evidence** (why it is novel)")
            for entry in item.supporting_evidence:
                st.text(f"• {entry}")
        with right:
            st.markdown("**Contradictory evidence** (why it may not be)")
            for entry in item.contradictory_evidence:
                st.text(f"• {entry}")
        st.markdown("**Key comparisons** with related work")
        for entry in item.key_comparisons:
            st.text(f"• {entry}")
        st.markdown("**Graph of the paper**: title → claims → methods → experiments")
        ui.paper_graph(dot_graph(item))

    st.markdown("#### Your ratings")
    prefix = f"{task.id}-{index}"
    last_needed = len(rated) + 1 >= task.min_items


    def save(finish: bool) -> None:
        scores = {m.id: st.session_state.get(f"{prefix}-{m.id}") for m in metrics}
        comment = st.session_state.get(f"{prefix}-comment") or ""
        if ui.mark_missing_scores(prefix, task, scores):  # validation: the page marks the unanswered questions
            return

        ui.safe_save(lambda: record_item_rating(ctx.store, ctx.session, task, index, item_id, scores, comment,
                                                ui.elapsed_ms(clock), items, finish=finish))  # one transaction


    missing = ui.missing_marks(prefix, task, metrics)  # questions left unanswered after a click on "Save"
    for m in metrics:  # outside the form: each answer reruns the page, so its mark goes away at once
        st.markdown(f"**{m.label}.** {m.question}")
        if m.id in missing:
            st.markdown(":red[**Please choose a score for this question.**]")
        st.radio(f"**{m.label}.** {m.question}", list(m.scale), index=None, key=f"{prefix}-{m.id}",
                 format_func=lambda k, m=m: f"{k} · {m.anchors[k - 1]}", label_visibility="collapsed")
    with st.form(prefix, border=False):
        st.text_area("Comments (optional)", key=f"{prefix}-comment", max_chars=5000,
                     placeholder="Anything the scores do not capture")
        if missing:
            n = len(missing)
            st.error(f"{n} {'question has' if n == 1 else 'questions have'} no score yet: "
                     f"{'it is' if n == 1 else 'they are'} marked in red above.")
        ui.show_flash()  # just above the buttons, where the evaluator is looking after a click
        c1, c2 = st.columns(2)
        with c1:
            st.form_submit_button("Save and rate another paper", on_click=save, args=(False,), width="stretch",
                                  disabled=len(available) <= 1)
        with c2:
            st.form_submit_button("Save and finish", type="primary", on_click=save, args=(True,), width="stretch",
                                  disabled=not last_needed)
