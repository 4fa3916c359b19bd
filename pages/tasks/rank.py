"""Renderer of kind ``rank``: n outputs of one input side by side; the best one, or a place for each.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import streamlit as st

import ui
from evalkit.tasks.rank import (
    RankTask,
    best_missing,
    order_from_places,
    place_label,
    place_name,
    place_problems,
    record_rank,
)


def render(ctx: ui.Context) -> None:
    """Best-of-N: one option under each card. Ranking: a place (1st (best) .. nth (worst)) under each card."""
    task, question = ctx.step.task, ctx.step.question
    assert isinstance(task, RankTask) and question is not None
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.item_question_header(ctx, task.question)
    prefix = f"{question.task}-{question.index}"
    labels = question.labels
    noun = task.output_label  # the cards' heading: "Response A", "Response B", ...
    systems = ui.shown_systems(ctx)  # ([study] blind = false: each card names its system)
    show = ui.media_show(ctx)  # (the question's images, audio clips and videos, if any)

    if task.response == "best":
        def best() -> None:
            label = st.session_state.get(f"{prefix}-choice")
            ui.safe_save(lambda: record_rank(ctx.store, ctx.session, task, question, [label] if label else [],
                                             ui.elapsed_ms(clock), media=ui.media_events(question)))

        ui.choice_form(question, f"{prefix}-choice", task.question, noun, best, missing=best_missing(task, labels),
                       systems=systems, show=show)
        return

    def places() -> dict[str, int | None]:
        return {label: st.session_state.get(f"{prefix}-place-{label}") for label in labels}

    def ranking() -> None:
        if place_problems(labels, places(), noun):  # from now on each place box says what is wrong with it
            st.session_state[f"_{prefix}-tried"] = True
            ui.refused_click()
        ui.safe_save(lambda: record_rank(ctx.store, ctx.session, task, question,
                                         order_from_places(labels, places(), noun), ui.elapsed_ms(clock),
                                         media=ui.media_events(question)))

    n = len(labels)
    marks = place_problems(labels, places(), noun) if st.session_state.get(f"_{prefix}-tried") else {}
    with st.form(prefix, border=False):
        with st.container(key=f"{prefix}-places"):
            columns = ui.review_columns(question, noun, systems=systems, show=show)
            for column, label in zip(columns, labels, strict=True):
                with column:  # the place right under its card (on a phone too)
                    st.selectbox(place_label(label, noun), range(1, n + 1), index=None,
                                 format_func=lambda k: place_name(k, n), key=f"{prefix}-place-{label}",
                                 placeholder="Choose a place")
                    if label in marks:  # checked again on each click of "Next" (the boxes are in a form)
                        ui.missing_mark(marks[label], f"{prefix}-place-{label}")
                    elif marks:  # keeps this column as tall as its marked neighbours: the boxes stay in a row
                        ui.mark_spacer(max(marks.values(), key=len), f"{prefix}-place-{label}")
        ui.widgets_under_cards(f"{prefix}-places")
        ui.show_flash()
        st.form_submit_button("Next", type="primary", on_click=ranking)
    ui.reveal_first_mark()
