"""Renderer of kind ``score``: each output of the question (one, or several side by side) scored on every
scale of the task (Likert levels with their anchors, or a slider), optionally with a comment or a post-edit.

An untouched slider is not a score: a slider counts as answered once it has been moved (its ``on_change``
sets a flag in the session state). After a click on "Next" with scores missing, nothing is saved and each
missing score is marked right under its widget until it is given.
"""

from __future__ import annotations

import streamlit as st

import ui
from evalkit.tasks.score import Scale, ScoreTask, missing_mark, missing_scores, missing_summary, record_scores

NOUN = "Response"
SHORT_ANCHORS = 24  # Likert levels of one output go in a row on a wide screen when every anchor is this short


def render(ctx: ui.Context) -> None:
    """The input, then each output with its scales (and text box) under it; "Next" saves all at once."""
    task, question = ctx.step.task, ctx.step.question
    assert isinstance(task, ScoreTask) and question is not None
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.item_question_header(ctx, task.question)
    prefix = f"{question.task}-{question.index}"
    n = len(question.texts)

    def key(scale: Scale, k: int) -> str:
        return f"{prefix}-{scale.id}-{k}"

    def given() -> dict[str, list[int | None]]:
        """The scores given so far, per scale in display order (an unmoved slider gives None)."""
        state = st.session_state
        return {s.id: [state.get(key(s, k)) if s.type == "likert" or state.get(f"_{key(s, k)}-moved") else None
                       for k in range(n)] for s in task.scales}

    def texts() -> list[str] | None:
        if task.textfield == "none":
            return None
        default = question.texts if task.textfield == "post-edit" else [""] * n
        return [st.session_state.get(f"{prefix}-text-{k}", default[k]) for k in range(n)]

    def submit() -> None:
        scores = given()
        if missing_scores(task, question, scores):  # the page marks each missing score under its widget
            st.session_state[f"_{prefix}-tried"] = True
            ui.refused_click()
            return
        ui.safe_save(lambda: record_scores(ctx.store, ctx.session, task, question, scores, texts(),
                                           ui.elapsed_ms(clock)))

    still = missing_scores(task, question, given()) if st.session_state.get(f"_{prefix}-tried") else []
    missing = {(k, s.id): missing_mark(question, k, s) for k, s in still}
    with st.container(key=f"{prefix}-scores"):
        columns = ui.review_columns(question, NOUN) if n > 1 else [st.container()]
        for k, column in enumerate(columns):
            with column:
                if n == 1:
                    ui.text_card(NOUN, question.texts[0])
                for scale in task.scales:
                    _scale(scale, key(scale, k), n, missing.get((k, scale.id)))
                    beside = [m for (j, sid), m in missing.items() if sid == scale.id and j != k]
                    if n > 1 and beside and (k, scale.id) not in missing:  # the widgets below stay in one row
                        ui.mark_spacer(max(beside, key=len), key(scale, k))
                _text_field(task, question.texts[k], f"{prefix}-text-{k}", question.labels[k] if n > 1 else "")
    ui.widgets_under_cards(f"{prefix}-scores")
    ui.stack_options_on_phone(f"{prefix}-scores")  # Likert levels one per line on a phone
    if still:
        st.error(missing_summary(question, still))
    ui.show_flash()
    st.button("Next", type="primary", on_click=submit, key=f"{prefix}-next")
    ui.reveal_first_mark()


def _moved(key: str) -> None:
    st.session_state[f"_{key}-moved"] = True


def _scale(scale: Scale, key: str, n: int, missing: str | None) -> None:
    """One scale's widget for one output, and under it the mark ``missing`` when the score is missing."""
    if scale.type == "slider":
        st.slider(scale.label, min_value=scale.min, max_value=scale.max, value=(scale.min + scale.max) // 2,
                  step=1, key=key, on_change=_moved, args=(key,))
        moved = st.session_state.get(f"_{key}-moved", False)
        if not moved:  # greyed out, its number hidden: where it starts does not look like an answer
            st.html(f"<style>.{ui.key_class(key)} [data-testid='stSlider'] [role='group'] "
                    "{filter: grayscale(1); opacity: 0.55;} "
                    f".{ui.key_class(key)} [data-testid='stSliderThumbValue'] {{visibility: hidden;}}</style>")
        with st.container(horizontal=True, wrap=False):  # the ends, and whether it counts yet (same height)
            st.caption(str(scale.min))
            st.caption("Scored" if moved else "Not scored yet: move the slider", text_alignment="center")
            st.caption(str(scale.max), text_alignment="right")
        if missing:
            ui.missing_mark(missing, key)
        return
    horizontal = n == 1 and max(len(a) for a in scale.anchors) <= SHORT_ANCHORS
    st.radio(scale.label, range(1, len(scale.anchors) + 1), index=None, key=key, horizontal=horizontal,
             format_func=lambda level: f"{level} · {scale.anchors[level - 1]}")
    if missing:
        ui.missing_mark(missing, key)


def _text_field(task: ScoreTask, output: str, key: str, label: str) -> None:
    """The comment box (optional) or the post-edit box (pre-filled with the output) of one output."""
    of = f" on response {label}" if label else ""
    if task.textfield == "comment":
        st.text_area(f"Comment{of} (optional)", key=key, max_chars=5000,
                     placeholder="Anything the scores do not capture")
    elif task.textfield == "post-edit":
        st.text_area(f"Your corrected version of {'response ' + label if label else 'the response'}", value=output,
                     key=key, max_chars=20000, help="Edit the text as little as needed to make it right.")
