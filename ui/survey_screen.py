"""The survey screen's frame around a question: the break screen and a task's instructions before it, and the
fragment that draws the current question with its kind's renderer.

May import: Streamlit, ``evalkit``'s public names, ``ui.errors`` and ``ui.session``. A kind's renderer
(``pages/tasks/<kind>.py``) is handed in by the survey page (:func:`question`'s ``renderer``): this module never
imports ``pages``, not even by name.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from evalkit.checks import pending_feedback, skip_tutorial
from evalkit.survey import pause_due, pause_text, progress_label

from .errors import calm_errors, feedback_plain, feedback_text, flash, safe_save
from .session import Context, dismissed_pause, enter

#: The callout above a practice question (a task's ``tutorial``): the one thing that sets it apart
PRACTICE_NOTE = ("**Practice question: this one is not counted.** If your answer is not the expected one, you will "
                 "be told why.")


#: What the survey page hands :func:`question`: a kind's name -> its ``render(ctx)`` (``pages.tasks.renderer``)
Renderers = Callable[[str], Callable[[Context], None]]


def pause_gate(ctx: Context) -> None:
    """The "take a short break" screen after every ``[study.session] pause_every`` judgments (see
    :func:`evalkit.survey.pause_due`), until the evaluator clicks "Continue". The count comes from the stored
    answers; the click is kept in this browser session, so a reload at that moment shows the break again."""
    if not pause_due(ctx.loaded.study, ctx.step, dismissed_pause(ctx.session)):
        return
    st.set_page_config(layout="centered")
    dismissed: dict = st.session_state.setdefault("_pause_dismissed", {})
    fraction, text = progress_label(ctx.step)
    with st.container(key="pause"):
        st.header("Take a short break", anchor=False)
        st.progress(fraction, text=text.split(" · ")[-1])
        st.markdown(pause_text(ctx.loaded.study, ctx.step))
        st.button("Continue", type="primary", key=f"pause-{ctx.step.judged}",
                  on_click=lambda: dismissed.__setitem__(ctx.session.session_id, ctx.step.judged))
    st.stop()


def instructions_gate(ctx: Context) -> None:
    """Show a task's instructions before its first question, until the evaluator clicks "Begin".

    Sets the page layout once per run: centred for the instructions, wide for the question.
    """
    task = ctx.step.task
    assert task is not None
    seen: set = st.session_state.setdefault("_intro_seen", set())
    key = (ctx.session.session_id, task.id)
    first = ctx.step.index == 0 and not (ctx.step.kind == "rating" and ctx.step.rated)
    if not first or key in seen or not getattr(task, "instructions", "").strip():
        st.set_page_config(layout="wide")
        return
    st.set_page_config(layout="centered")
    st.caption(f"Task {ctx.step.task_number} of {ctx.step.n_tasks}")
    st.header(task.title, anchor=False)
    st.markdown(task.instructions)  # trusted: written by the researcher in config.toml
    st.button("Begin", type="primary", on_click=lambda: seen.add(key), key=f"begin-{task.id}")
    st.stop()


def question(ctx: Context, renderer: Renderers) -> None:
    """Draw the current question with its kind's renderer (``renderer(kind)``: ``pages/tasks/<kind>.py``, which the
    survey page hands in, so this package never imports a page) inside a fragment.

    A click inside it (an answer, a picked item, a score) reruns only the fragment: its callbacks run first
    (the answer is stored), then the fragment reads the session's progress again and draws the next question
    of the same task, progress bar included. When the task's block is over, or the session belongs on
    another screen, the fragment asks for a full run instead (see :func:`enter`).
    """
    assert ctx.step.task is not None
    _question_fragment(ctx.step.task.id, [ctx], renderer)


@st.fragment
def _question_fragment(block: str, first: list[Context], renderer: Renderers) -> None:
    """The fragment body. ``first`` holds the context of the full run that drew it and is used once: a rerun
    of the fragment (Streamlit calls it again with the same arguments) reads a fresh one."""
    with calm_errors("survey"):
        rerun = not first
        ctx = first.pop() if first else enter("survey", block)
        _bring_new_question_into_view(ctx, scroll=rerun)
        question = ctx.step.question
        offer_skip = False
        if question is not None and question.check is not None:
            if question.check.type == "tutorial":  # a callout that cannot be missed; the question itself looks
                st.info(PRACTICE_NOTE, icon=":material/school:")  # like every other (same layout and widgets)
            pending = pending_feedback(ctx.store, ctx.session, question)  # from the stored tries: survives a reload
            if pending is not None:
                if "_flash" not in st.session_state:
                    flash("warning", feedback_text(pending), feedback_plain(pending))
                offer_skip = pending.skippable
        renderer(ctx.step.kind)(ctx)
        instructions = getattr(ctx.step.task, "instructions", "").strip()
        if instructions and question is not None:  # to read again while answering (folded: the question first)
            with st.expander("The task's instructions", icon=":material/help:"):
                st.markdown(instructions)  # trusted: written by the researcher in config.toml
        if offer_skip and question is not None:
            st.button("Skip this practice question", key=f"{question.task}-{question.index}-skip",
                      on_click=lambda: safe_save(lambda: skip_tutorial(ctx.store, ctx.session, question)),
                      help="Go on without the expected answer.")


def _bring_new_question_into_view(ctx: Context, scroll: bool) -> None:
    """When a fragment rerun (``scroll``) draws a new question (not the one shown before with a message):
    if the evaluator had scrolled past its top (on a phone "Next" is a screen or more below the first text),
    scroll it back to just under the app's header, so the next question is read from its top. Nothing moves
    when its top is already visible (a wide screen). A whole-page run only notes the question it shows.
    Static script, no untrusted input; its element takes no space."""
    shown = (ctx.session.session_id, ctx.step.task.id if ctx.step.task else "", ctx.step.index)
    last, count = st.session_state.get("_question_shown", (None, 0))
    if shown == last:
        return
    st.session_state["_question_shown"] = (shown, count + 1)
    if not scroll:
        return
    # the count makes each script's HTML new, so the browser runs it again (the same HTML is not re-run)
    st.html(_SCROLL_TO_QUESTION.replace("{n}", str(count + 1)), unsafe_allow_javascript=True)


_SCROLL_TO_QUESTION = """<span class="question-scroll" data-n="{n}"></span>
<style>[data-testid=stElementContainer]:has(.question-scroll) {display: none;}</style>
<script>
requestAnimationFrame(() => {  // the question is the fragment's block, which holds this script first
  const mark = document.querySelector(".question-scroll[data-n='{n}']");
  const question = mark && mark.closest("[data-testid=stVerticalBlock]");
  const header = document.querySelector("[data-testid=stHeader]");
  const below = header ? header.getBoundingClientRect().bottom : 0;
  if (question && question.getBoundingClientRect().top < below) {
    question.style.scrollMarginTop = below + "px";
    question.scrollIntoView({block: "start"});
  }
});
</script>"""
