"""Renderer of kind ``score``: each output of the question (one, or several side by side) scored on every
scale of the task (Likert levels with their anchors, or a slider), optionally with a comment or a post-edit.

The scales are one custom component (``components/scores/``, Streamlit components v2: no iframe, no build
step, no request leaving the server) that keeps every score in the browser until "Next": moving a slider or
picking a level reruns nothing on the server. An untouched slider is not a score (the browser keeps "moved" per
slider); "Next" with a score missing marks each missing score under its widget and sends nothing. A complete
answer arrives as one trigger value, in whose callback :func:`evalkit.tasks.score.record_scores` validates
everything again (the browser is not trusted) and stores it exactly once; a refused answer (a score missing or
out of range) is marked and said, and nothing is stored. A check question answered wrong (its feedback decided on
the server) says what is wrong with each output under that output's card, the rest where every message goes.

``EVALKIT_SCORE_WIDGET=streamlit`` draws the previous renderer instead (Streamlit sliders and radios, a rerun per
change; :func:`render_widgets`), for the benchmark's before / after (``bench/bench_score_click.py``).

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v2 as components_v2

import ui
from evalkit.tasks.responses import in_sentence
from evalkit.tasks.score import (
    COMMENT_CHARS,
    POST_EDIT_CHARS,
    Scale,
    ScoreTask,
    missing_mark,
    missing_scores,
    missing_summary,
    record_scores,
    score_name,
)

SHORT_ANCHORS = 24  # Likert levels of one output go in a row on a wide screen when every anchor is this short
COMPONENT_DIR = Path(__file__).resolve().parents[2] / "components" / "scores"
#: The score widget, registered once per process (its JS and CSS are files of the repository, sent inline)
SCORES = components_v2.component(
    "evalkit_scores", js=(COMPONENT_DIR / "scores.js").read_text(encoding="utf-8"),
    css=ui.component_css("scores"), isolate_styles=True)


def render(ctx: ui.Context) -> None:
    """The input, the outputs' cards, then the score widget (every scale of every output, the text boxes and
    "Next"); "Next" sends all at once and the callback stores them (or refuses them, saying what is missing)."""
    if os.environ.get("EVALKIT_SCORE_WIDGET") == "streamlit":
        render_widgets(ctx)
        return
    task, question, clock, prefix = _question(ctx)
    widget = widget_key(prefix)
    refused_key = f"_{prefix}-refused"
    noun = task.output_label
    n = len(question.texts)

    def submit() -> None:
        """The trigger's callback (runs before the question reruns, with the question bound when drawn)."""
        scores, texts = answer_of(task, (st.session_state.get(widget) or {}).get("submit"))
        refused = st.session_state.get(refused_key, {"n": 0})
        still = missing_scores(task, question, scores)
        if still:  # the browser sends complete answers only: this one did not come from the widget as it is
            st.session_state[refused_key] = {"n": refused["n"] + 1, "marks": {
                f"{s.id}-{k}": missing_mark(question, k, s, noun) for k, s in still}}
            ui.flash("warning", missing_summary(question, still, noun))
            ui.refused_click()
            return
        stored: list[Any] = []
        ui.safe_save(lambda: stored.append(record_scores(ctx.store, ctx.session, task, question, scores, texts,
                                                         ui.elapsed_ms(clock), media=ui.media_events(question))))
        if not stored:  # refused (e.g. a score out of range: its message is shown): "Next" works again
            st.session_state[refused_key] = {"n": refused["n"] + 1, "marks": {}}

    systems = ui.shown_systems(ctx)  # ([study] blind = false: each card names its system)
    show = ui.media_show(ctx)  # (the question's images, audio clips and videos, if any)
    if n == 1:
        ui.output_card(question, 0, noun, system=systems[0] if systems else None, show=show)
    elif ui.has_media(question):  # side by side, stacked on a phone (the widget draws no card of its own then)
        ui.media_columns(question, noun, systems=systems, show=show)
    else:  # side by side on a wide screen; on a phone the widget draws each card above its own scales instead
        with st.container(key=f"{prefix}-cards"):
            ui.review_cards(question, noun, systems=systems)
        st.html(f"<style>@media (max-width: 640px) {{.{ui.key_class(f'{prefix}-cards')} "
                "{display: none;}}</style>")
    refused = st.session_state.get(refused_key, {"n": 0, "marks": {}})
    problems = ui.practice_problems(ctx.store, ctx.session, question)
    data = widget_data(task, question, prefix, refused, problems, systems=systems)
    SCORES(key=widget, data=data, on_submit_change=submit)
    ui.show_flash()


def widget_key(prefix: str) -> str:
    """The score widget's key for the question ``{task}-{index}``: a new key per question (a new widget, nothing
    carried over), without "__", which Streamlit keeps for its trigger ids ("~" is in no task id)."""
    return f"{prefix}-scores".replace("__", "_~")


def widget_data(task: ScoreTask, question: Any, prefix: str, refused: Mapping[str, Any],
                problems: Sequence[Sequence[str]] = (), *, systems: Sequence[str] | None = None) -> dict[str, Any]:
    """What the score widget draws (JSON): our labels and words, the outputs' texts (several outputs: each one's
    card, shown above its scales on a phone; a post-edit box's starting value; set as text by the browser, never
    as HTML), the marks of an answer the server refused, and ``problems``: a check question's feedback lines per
    output (display order; :func:`ui.practice_problems`); ``systems`` (``[study] blind = false``): each heading (several
    outputs) names its system. A question with media sends no texts (its cards stay on the page, stacked on a phone;
    a media output's post-edit box starts empty)."""
    noun, n = task.output_label, len(question.texts)
    one = in_sentence(noun)
    media = ui.has_media(question)
    outputs = []
    for k, label in enumerate(question.labels):
        of = f" on {one} {label}" if n > 1 else ""
        output: dict[str, Any] = {"heading": ui.heading(f"{noun} {label}", systems[k] if systems else None)
                                  if n > 1 else ""}
        if n > 1 and not media:  # (the card drawn above the output's own scales on a phone: set as text)
            output["text"] = question.texts[k]
        if task.textfield == "comment":
            output.update(textLabel=f"Comment{of} (optional)", placeholder="Anything the scores do not capture")
        elif task.textfield == "post-edit":
            output.update(textLabel=f"Your corrected version of {f'{one} {label}' if n > 1 else f'the {one}'}",
                          textHelp="Edit the text as little as needed to make it right.",
                          prefill="" if question.media_of(k) else question.texts[k])
        outputs.append(output)
    scales = [{"id": s.id, "label": s.label, "type": s.type, "min": s.low, "max": s.high, "anchors": list(s.anchors),
               "horizontal": n == 1 and s.type == "likert" and max(len(a) for a in s.anchors) <= SHORT_ANCHORS}
              for s in task.scales]
    cells = [(k, s) for k in range(n) for s in task.scales]
    return {"qid": prefix, "outputs": outputs, "scales": scales, "textfield": task.textfield,
            "maxChars": POST_EDIT_CHARS if task.textfield == "post-edit" else COMMENT_CHARS,
            "marks": {f"{s.id}-{k}": missing_mark(question, k, s, noun) for k, s in cells},
            "names": {f"{s.id}-{k}": score_name(question, k, s, noun) for k, s in cells},
            "refused": refused.get("n", 0), "serverMarks": refused.get("marks", {}),
            "problems": [list(p) for p in problems] or [[] for _ in question.texts]}


def answer_of(task: ScoreTask, value: Any) -> tuple[dict[str, list[Any]], list[Any] | None]:
    """The scores and texts of a trigger value as sent, reshaped only: ``record_scores`` checks every value (a
    value that is not a list counts as missing, anything else is passed on for it to refuse)."""
    value = value if isinstance(value, Mapping) else {}
    raw = value.get("scores")
    raw = raw if isinstance(raw, Mapping) else {}
    scores = {str(key): list(v) if isinstance(v, list) else [] for key, v in raw.items()}  # (extra keys too:
    for scale in task.scales:                                                                  # refused there)
        scores.setdefault(scale.id, [])
    texts = value.get("texts")
    return scores, (list(texts) if isinstance(texts, list) else None)


def _question(ctx: ui.Context) -> tuple[ScoreTask, Any, str, str]:
    """Both renderers' start: the task, the question, its clock (started) and its widgets' key prefix, the question
    and its input drawn."""
    task, question = ctx.step.task, ctx.step.question
    assert isinstance(task, ScoreTask) and question is not None
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.item_question_header(ctx, task.question)
    return task, question, clock, f"{question.task}-{question.index}"


def render_widgets(ctx: ui.Context) -> None:
    """The previous renderer (Streamlit widgets, each move of a slider or pick of a level a rerun), kept for the
    benchmark's before / after (``EVALKIT_SCORE_WIDGET=streamlit``): the input, then each output with its scales
    (and text box) under it; "Next" saves all at once."""
    task, question, clock, prefix = _question(ctx)
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
        default = [("" if question.media_of(k) else question.texts[k]) for k in range(n)] \
            if task.textfield == "post-edit" else [""] * n
        return [st.session_state.get(f"{prefix}-text-{k}", default[k]) for k in range(n)]

    def submit() -> None:
        scores = given()
        if missing_scores(task, question, scores):  # the page marks each missing score under its widget
            st.session_state[f"_{prefix}-tried"] = True
            ui.refused_click()
            return
        ui.safe_save(lambda: record_scores(ctx.store, ctx.session, task, question, scores, texts(),
                                           ui.elapsed_ms(clock), media=ui.media_events(question)))

    still = missing_scores(task, question, given()) if st.session_state.get(f"_{prefix}-tried") else []
    noun = task.output_label  # the cards' heading: "Response", or "Response A", "Response B" side by side
    missing = {(k, s.id): missing_mark(question, k, s, noun) for k, s in still}
    with st.container(key=f"{prefix}-scores"):
        systems = ui.shown_systems(ctx)  # ([study] blind = false: each card names its system)
        show = ui.media_show(ctx)
        columns = ui.review_columns(question, noun, systems=systems, show=show) if n > 1 else [st.container()]
        for k, column in enumerate(columns):
            with column:
                if n == 1:
                    ui.output_card(question, 0, noun, system=systems[0] if systems else None, show=show)
                for scale in task.scales:
                    _scale(scale, key(scale, k), n, missing.get((k, scale.id)))
                    beside = [m for (j, sid), m in missing.items() if sid == scale.id and j != k]
                    if n > 1 and beside and (k, scale.id) not in missing:  # the widgets below stay in one row
                        ui.mark_spacer(max(beside, key=len), key(scale, k))
                _text_field(task, "" if question.media_of(k) else question.texts[k], f"{prefix}-text-{k}",
                            question.labels[k] if n > 1 else "", noun)
    ui.widgets_under_cards(f"{prefix}-scores")
    ui.stack_options_on_phone(f"{prefix}-scores")  # Likert levels one per line on a phone
    if still:  # what is missing is yellow (docs: evaluator-screens.md "Messages")
        st.warning(missing_summary(question, still, noun))
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
        # one row of ends under it (ours, below): Streamlit's own "min ... max" row, shown on hover, is hidden;
        # until moved, greyed out with its number hidden: where it starts does not look like an answer
        unmoved = "" if moved else (f".{ui.key_class(key)} [data-testid='stSlider'] [role='group'] "
                                    "{filter: grayscale(1); opacity: 0.55;} "
                                    f".{ui.key_class(key)} [data-testid='stSliderThumbValue'] {{visibility: hidden;}}")
        st.html(f"<style>{ui.hide_slider_ticks(key)} {unmoved}</style>")
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


def _text_field(task: ScoreTask, output: str, key: str, label: str, noun: str) -> None:
    """The comment box (optional) or the post-edit box (pre-filled with the output) of one output."""
    one = in_sentence(noun)
    of = f" on {one} {label}" if label else ""
    if task.textfield == "comment":
        st.text_area(f"Comment{of} (optional)", key=key, max_chars=5000,
                     placeholder="Anything the scores do not capture")
    elif task.textfield == "post-edit":
        st.text_area(f"Your corrected version of {f'{one} {label}' if label else f'the {one}'}", value=output,
                     key=key, max_chars=20000, help="Edit the text as little as needed to make it right.")
