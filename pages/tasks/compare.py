"""Renderer of kind ``compare``: two systems' outputs for one input, side by side; a choice (optionally with
"No preference") or the HELP slider.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import streamlit as st

import ui
from evalkit.tasks.compare import CompareTask
from evalkit.tasks.responses import TIE_LABEL, record_choice

NO_PREFERENCE = TIE_LABEL


def render(ctx: ui.Context) -> None:
    """The input, then Response A / B (the task's ``input_label`` / ``output_label``; an image, audio clip or video
    in place of a text: :mod:`ui.media`); the answer in the same form under them, with the clips' play log."""
    task, question = ctx.step.task, ctx.step.question
    assert isinstance(task, CompareTask) and question is not None
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.item_question_header(ctx, task.question)
    noun = task.output_label
    systems = ui.shown_systems(ctx)  # ([study] blind = false: each card names its system)
    show = ui.media_show(ctx)  # (the question's media, if any)
    if task.response == "slider":
        ui.review_cards(question, noun, systems=systems, show=show)
        ui.help_slider(ctx, question, clock, noun)
        return
    key = f"{question.task}-{question.index}-choice"
    ties = task.response == "choice-tie"

    def submit() -> None:
        label = st.session_state.get(key)
        ui.safe_save(lambda: record_choice(ctx.store, ctx.session, question, label, ui.elapsed_ms(clock),
                                           ties=ties, noun=noun, media=ui.media_events(question),
                                           full_play=task.source.require_full_play, input_label=task.input_label))

    ui.choice_form(question, key, task.question, noun, submit, tie=NO_PREFERENCE if ties else None, systems=systems,
                   show=show)
