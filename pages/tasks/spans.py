"""Renderer of kind ``spans``: the source, then the span widget (``components/spans/``, Streamlit components v2:
no iframe, no build step, no request leaving the server) holding each output shown, segment by segment, the
evaluator's error spans, the scales and "Next".

Marking, changing and deleting spans happens in the browser: nothing reruns on the server until "Next", which
sends the question's spans, scores and action log as one trigger value. Its callback hands them to
:func:`evalkit.tasks.spans.record_spans`, which checks everything again (the browser is not trusted) and stores
the answer with its spans in one transaction; a refused answer is said inside the widget, above its "Next" (and the
widget can send again), nothing stored.

An output that is an image, audio clip or video (:mod:`ui.media`) is drawn in a card above the widget and cannot be
marked (it has no characters, as in Pearmut): the widget shows its heading, a line saying so, and its scales.

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v2 as components_v2

import ui
from evalkit.items import Item
from evalkit.spans import to_utf16
from evalkit.tasks.spans import SpansTask, record_spans, segments_of, suggestions

COMPONENT_DIR = Path(__file__).resolve().parents[2] / "components" / "spans"
#: The span widget, registered once per process (its JS and CSS are files of the repository, sent inline)
SPANS = components_v2.component(
    "evalkit_spans", js=(COMPONENT_DIR / "spans.js").read_text(encoding="utf-8"),
    css=ui.component_css("spans"), isolate_styles=True)


def render(ctx: ui.Context) -> None:
    """The question's head (and its input, for a single segment), then the widget; "Next" sends the answer and the
    callback stores it (or refuses it, saying why)."""
    task, question = ctx.step.task, ctx.step.question
    assert isinstance(task, SpansTask) and question is not None
    item = ctx.loaded.item_sets[task.source.items].by_id(question.review_ids[0])
    clock = ui.clock_key(ctx.session, question.task, question.index)
    ui.start_clock(clock)
    ui.item_question_header(ctx, task.question, show_input=not item.segments)
    prefix = f"{question.task}-{question.index}"
    widget = f"{prefix}-spans".replace("__", "_~")  # ("__" is Streamlit's, for trigger ids)
    refused_key = f"_{prefix}-refused"

    def submit() -> None:
        """The trigger's callback: check and store (refused: said, and "Next" works again)."""
        value = (st.session_state.get(widget) or {}).get("submit")
        stored: list[Any] = []
        ui.safe_save(lambda: stored.append(record_spans(ctx.store, ctx.session, task, question, item, value,
                                                        ui.elapsed_ms(clock), media=ui.media_events(question))))
        if not stored:
            st.session_state[refused_key] = st.session_state.get(refused_key, 0) + 1

    systems = ui.shown_systems(ctx)
    show = ui.media_show(ctx)
    shown = [k for k in range(len(question.sources)) if question.media_of(k) is not None]
    if shown:  # the media outputs in cards above the widget (side by side, stacked on a phone)
        columns = st.columns(len(shown), gap="small")
        for column, k in zip(columns, shown, strict=True):
            with column:
                label = f"{task.output_label} {question.labels[k]}" if len(question.sources) > 1 else task.output_label
                ui.output_card(question, k, label, system=systems[k] if systems else None, show=show)
    data = widget_data(task, question, item, prefix, st.session_state.get(refused_key, 0), systems=systems)
    # a check question's feedback about one output: under that output's heading (the rest stays queued, below)
    data["problems"] = ui.practice_problems(ctx.store, ctx.session, question)
    # the refusal, the practice feedback, the "are you sure": in the widget, right above its "Next", where the
    # evaluator is looking (plain text, shown as text)
    message = ui.take_flash()
    if message is not None:
        data.update(serverKind=message[0], serverMessage=message[1])
    # the widget keeps unsent marks across a refresh of the page under this key (per session and question; the
    # token itself is not sent to the browser's storage)
    data["stateKey"] = hashlib.sha256(f"{ctx.session.session_id}/{prefix}".encode()).hexdigest()[:16]
    SPANS(key=widget, data=data, on_submit_change=submit)


def widget_data(task: SpansTask, question: Any, item: Item, qid: str, refused: int = 0, *,
                systems: Sequence[str] | None = None) -> dict[str, Any]:
    """What the widget draws (JSON): the outputs' segments as text (set as text by the browser, never as HTML),
    each segment's source when the item is a document, the suggestions (ESA-AI) in the browser's UTF-16 offsets,
    the severities with their keys, the categories, the scales and the count of refused answers. ``systems``
    (``[study] blind = false``, :func:`ui.shown_systems`): each output's heading names its system (one output
    alone gets a heading then)."""
    segments = segments_of(item)
    n = len(question.sources)
    outputs = []
    for k, system in enumerate(question.sources):
        shown = []
        media = item.output_media.get(system)
        if media is not None:  # drawn above the widget: here its heading, a line saying so, and its scales
            what = {"image": "image", "audio": "audio clip", "video": "video"}.get(media.type, media.type)
            note = f"This {what} is shown above. It cannot be marked: give its score below."
            shown.append({"source": None, "text": "", "dir": "auto", "suggestions": [], "media": note})
        for segment in segments if media is None else ():
            text = segment.outputs[system]
            offered = [{"start": to_utf16(text, s.start), "end": to_utf16(text, s.end, missing_token=True),
                        "severity": s.severity, "category": s.category} for s in suggestions(task, segment, system)]
            shown.append({"source": segment.input if item.segments and segment.input else None, "text": text,
                          "dir": "auto", "suggestions": offered})
        label = f"{task.output_label} {question.labels[k]}" if n > 1 else task.output_label
        # ([study] blind = false) the heading names the system, of one output alone too
        heading = ui.heading(label, systems[k]) if systems else (label if n > 1 else "")
        outputs.append({"heading": heading, "segments": shown})
    categories: Any = task.categories
    if isinstance(categories, dict):
        categories = {top: list(subs) for top, subs in categories.items()}
    severities = [{"id": s, "label": s.capitalize(), "key": str(k)} for k, s in enumerate(task.severities, 1)]
    return {"qid": qid, "words": {"source": task.input_label}, "protocol": task.protocol, "severities": severities,
            "categories": categories, "missingToken": task.missing_token,
            "wordLevel": task.word_level, "outputs": outputs,
            "scorePer": task.score_per if item.segments else "document",
            "scales": [{"id": s.id, "label": s.label, "type": s.type, "min": s.low, "max": s.high,
                        "anchors": list(s.anchors)} for s in task.scales],
            "minScoreWithoutSpans": task.min_score_without_spans, "outputLabel": task.output_label,
            "refused": refused, "serverMessage": "", "serverKind": "warning"}
