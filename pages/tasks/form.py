"""Renderer of kind ``form``: a background form, one widget per field, and one button that stores it.

The server checks every field (:func:`evalkit.tasks.form.check_answers`). A click with a field missing or
invalid stores nothing; from then on each invalid field shows, right under it, what is wrong, re-checked on
every change (fixing a field removes its mark at once), and one line above the button says how many are left.
What was typed stays in the widgets.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import ui
from evalkit.tasks.form import Field, FormTask, check_answers, record_form


def render(ctx: ui.Context) -> None:
    """Progress, the form's title, its fields and the submit button (centred, at most about 46 rem wide)."""
    task = ctx.step.task
    assert isinstance(task, FormTask)
    clock = ui.clock_key(ctx.session, task.id, "form")
    ui.start_clock(clock)
    prefix = f"{task.id}-form"
    tried = f"_{prefix}-tried"

    def given() -> dict[str, Any]:
        return {f.id: st.session_state.get(f"{prefix}-{f.id}") for f in task.fields}

    def submit() -> None:
        if check_answers(task, given())[1]:  # nothing stored; each problem is marked under its field from now on
            st.session_state[tried] = True
            ui.refused_click()
            return
        ui.safe_save(lambda: record_form(ctx.store, ctx.session, task, given(), ui.elapsed_ms(clock)))

    errors = check_answers(task, given())[1] if st.session_state.get(tried) else {}
    centred = st.container(horizontal_alignment="center")  # the page is wide (questions); a form reads better narrow
    with centred, st.container(key=f"{prefix}-body", width=760):
        ui.progress_header(ctx.step)
        st.subheader(task.title, anchor=False)
        for field in task.fields:
            _field(field, f"{prefix}-{field.id}", errors.get(field.id))
        ui.stack_options_on_phone(f"{prefix}-body")
        if errors:
            n = len(errors)
            st.warning(f"{n} {'answer needs' if n == 1 else 'answers need'} your attention: "
                     f"{'it is' if n == 1 else 'they are'} marked above. Nothing has been saved yet.")
        else:
            ui.show_flash()
        st.button(task.submit, type="primary", on_click=submit, key=f"{prefix}-submit")
    ui.reveal_first_mark()


def _field(field: Field, key: str, error: str | None) -> None:
    """One field's widget (nothing preselected), labelled "(optional)" when it may be left empty, and its
    problem under it."""
    label = field.label + (" (optional)" if field.optional else "")
    helptext = field.help or None
    if field.type == "text":
        st.text_input(label, key=key, max_chars=field.max_length, help=helptext)
    elif field.type == "number":
        st.number_input(label, value=None, step=1 if field.integer else 0.1,
                        format="%d" if field.integer else "%g", key=key, help=helptext,
                        placeholder=_number_hint(field))
    elif field.type == "choice":
        st.radio(label, field.options, index=None, key=key, help=helptext)
    elif field.type == "multichoice":
        st.multiselect(label, field.options, key=key, help=helptext, placeholder="Choose one or more")
    else:
        st.radio(label, field.levels, index=None, key=key, help=helptext, horizontal=True,
                 format_func=field.level_label)
    if error:
        ui.missing_mark(error, key)


def _number_hint(field: Field) -> str:
    low, high = field.min, field.max
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if low is not None:
        return f"at least {low:g}"
    if high is not None:
        return f"at most {high:g}"
    return "a number"
