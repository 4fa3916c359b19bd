"""Answer widgets shared by the task kinds: a question's display clock (how long it was shown before the
answer), the forced-choice form (cards, one option per card, "Next"), the forced-choice question of the
triplet and pair kinds, and the HELP slider.

May import: Streamlit, ``evalkit``'s public names, ``ui.errors``, ``ui.marks``, ``ui.media``, ``ui.session`` and
``ui.widgets``; never ``pages``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import streamlit as st

from evalkit.sampling import Question
from evalkit.store import Session
from evalkit.tasks.responses import (
    SLIDER_LABELS,
    TIE,
    choice_missing,
    in_sentence,
    plural,
    record_choice,
    record_slider,
)

from .errors import safe_save, show_flash
from .marks import clear_mark_css, missing_mark, refused_click, reveal_first_mark
from .media import MediaShow, media_events
from .session import Context
from .widgets import key_class, progress_header, review_cards, topic_line


def clock_key(session: Session, *parts: object) -> str:
    """Key of a question's display clock (server-side only)."""
    return ":".join([session.session_id, *map(str, parts)])


def start_clock(key: str) -> None:
    """Remember when a question was first shown in this browser session (a refresh restarts it)."""
    st.session_state.setdefault("_shown_at", {}).setdefault(key, time.monotonic())


def elapsed_ms(key: str) -> int | None:
    """Milliseconds since the question was first shown, or None if unknown."""
    shown = st.session_state.get("_shown_at", {}).get(key)
    return None if shown is None else round(1000 * (time.monotonic() - shown))


def align_choice_css(key: str, n: int, extra_row: bool = False) -> str:
    """CSS laying the radio options of widget ``key`` out as ``n`` equal columns, each under its card; with
    ``extra_row``, the option after the n (e.g. "No preference") gets a row of its own under them.

    Plain CSS scoped to the widget's key class (``st-key-<key>``); the key carries no source names.
    """
    last = f" .{key_class(key)} [role='radiogroup'] > label:nth-child({n + 1}) {{grid-column: 1 / -1;}}" \
        if extra_row else ""
    return (f".{key_class(key)} [role='radiogroup'] {{display: grid; "
            f"grid-template-columns: repeat({n}, minmax(0, 1fr)); column-gap: 1rem;}}{last}")


def choice_form(question: Question, key: str, label: str, noun: str, on_submit: Callable[[], None], *,
                tie: str | None = None, topic: str | None = None, missing: str | None = None,
                systems: Sequence[str] | None = None, show: MediaShow | None = None) -> None:
    """The cards and, in the same form right under them, one option per card (labelled like its card,
    nothing preselected; with ``tie``, one more option of that text, stored as ``"tie"``), then "Next",
    which saves in ``on_submit`` (a callback reading ``st.session_state[key]``). ``systems``
    (:func:`~ui.widgets.shown_systems`, ``[study] blind = false``): each card's heading names its system; ``show``
    (:func:`~ui.widgets.media_show`): the question's media are drawn in their cards (their players inside the form:
    their play logs go with "Next").

    "Next" with nothing chosen stores nothing and marks the options with ``missing`` (default
    :func:`~evalkit.tasks.responses.choice_missing`), right under them; choosing an option hides the mark at once
    (in the browser: an option of a form reruns nothing, see :func:`clear_mark_css`)."""
    options = [*question.labels, *([TIE] if tie else [])]
    tried = f"_{key}-tried"

    def submit() -> None:
        if st.session_state.get(key) is None:  # nothing stored; the options are marked from now on
            st.session_state[tried] = True
            refused_click()
            return
        on_submit()

    marked = bool(st.session_state.get(tried)) and st.session_state.get(key) is None
    with st.form(f"{question.task}-{question.index}", border=False):
        review_cards(question, noun, topic=topic,
                     style=align_choice_css(key, len(question.labels), extra_row=bool(tie))
                     + (clear_mark_css(key) if marked else ""), systems=systems, show=show)
        st.radio(label, options, format_func=lambda o: tie if o == TIE else f"{noun} {o}", index=None,
                 horizontal=True, key=key, label_visibility="collapsed", width="stretch")
        if marked:
            missing_mark(missing or choice_missing(question, ties=bool(tie), noun=noun), key)
        show_flash()
        st.form_submit_button("Next", type="primary", on_click=submit)
    reveal_first_mark()


def help_slider(ctx: Context, question: Question, clock: str, noun: str = "Review", suitable: str = "suitable") -> None:
    """The HELP protocol under a pair's cards: a slider from -100 (A entirely better) to +100 (B entirely
    better), default 0, and two equally styled buttons, accept / reject, each saving in its callback. The words
    follow the protocol: at 0, "Accept" records a tie of two suitable texts, "Reject" a tie of two unsuitable ones
    (``suitable``: what suitable means here, e.g. "suitable as real reviews")."""
    key = f"{question.task}-{question.index}-slider"
    lower = in_sentence(plural(noun))

    task = ctx.step.task

    def submit(button: str) -> None:
        value = st.session_state.get(key, 0)
        safe_save(lambda: record_slider(
            ctx.store, ctx.session, question, int(value), button, elapsed_ms(clock), media=media_events(question),
            full_play=getattr(getattr(task, "source", None), "require_full_play", False), noun=noun,
            input_label=getattr(task, "input_label", "Input")))

    with st.form(f"{question.task}-{question.index}"):
        st.slider(f"Move the slider towards the better {in_sentence(noun)}", min_value=-100, max_value=100,
                  value=0, step=1, key=key,
                  help=f"-100: {noun} A is entirely better · 0: no preference · +100: {noun} B is entirely better")
        with st.container(horizontal=True, wrap=False):  # one row under the slider's ends, also on a phone
            st.caption(f"◀ {noun} A is better")
            st.caption("0 = no preference", text_alignment="center")
            st.caption(f"{noun} B is better ▶", text_alignment="right")
        st.markdown(f"Then say whether **both** {lower} are {suitable}: *Accept* if both are, *Reject* if both "
                    f"are not. The slider starts at 0 (no preference): left there, *Accept* records a tie in which "
                    f"both are {suitable}, *Reject* a tie in which neither is.")
        show_flash()  # right above the buttons, where the evaluator is looking after a click
        c1, c2 = st.columns(2)
        with c1:
            st.form_submit_button(SLIDER_LABELS["accept"], on_click=submit, args=("accept",), width="stretch")
        with c2:
            st.form_submit_button(SLIDER_LABELS["reject"], on_click=submit, args=("reject",), width="stretch")


def choice_question(ctx: Context) -> None:
    """A forced-choice question (triplet or pair): cards side by side, under them one option per card
    with the card's label, nothing preselected, one submit that saves in its callback."""
    step, session = ctx.step, ctx.session
    question = step.question
    assert question is not None and step.task is not None
    clock = clock_key(session, question.task, question.index)
    start_clock(clock)
    progress_header(step)
    st.subheader(getattr(step.task, "question", ""), anchor=False)
    key = f"{question.task}-{question.index}-choice"

    def submit() -> None:
        label = st.session_state.get(key)
        safe_save(lambda: record_choice(ctx.store, session, question, label, elapsed_ms(clock)))

    choice_form(question, key, getattr(step.task, "question", "Your answer"), "Review", submit,
                topic=topic_line(ctx, question))
