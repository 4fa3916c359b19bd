"""Renderer of kind ``pairwise``: which of two texts sounds more natural (forced choice, or the HELP slider).

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

import streamlit as st

import ui
from evalkit.tasks.pairwise import PairwiseTask


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
    ui.review_cards(question, topic=ui.topic_line(ctx, question))
    ui.help_slider(ctx, question, clock, "Review", suitable="suitable as real reviews")
