"""Shared rendering of a question's texts and progress: the text cards (one escaped ``st.html``, or columns with
widgets under them; with ``[study] blind = false`` each output's card names its system), an items question's
input, instructions and head, the progress line, a paper's graph, and the CSS helpers keyed to a widget or a
container (``st-key-<key>``, :func:`key_class`).

An items question's images, audio clips and videos are drawn where its texts would be (:mod:`ui.media`): its cards
are then columns (stacked on a phone), each holding its heading and its text or media.

May import: Streamlit, ``evalkit``'s public names, ``ui.media`` and ``ui.session`` (:class:`~ui.session.Context`);
never ``pages``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from evalkit.items import Item
from evalkit.markup import html_to_markdown
from evalkit.sampling import Question
from evalkit.survey import Step, progress_label
from evalkit.tasks.itemsource import ItemsSource
from evalkit.text import markdown_literal

from .media import MediaShow, has_media
from .navigation import APP_DIR
from .session import Context


def text_card(label: str, text: str, *, system: str | None = None, media: Callable[[], None] | None = None) -> None:
    """A bordered card with our label and untrusted text rendered as plain text (no markdown, no HTML); with
    ``system`` (``[study] blind = false``), the label is followed by that name, escaped (:func:`heading`); with
    ``media`` (a media output: :meth:`ui.media.MediaShow.output`), that draws the card's content instead of the text.

    The card stretches to the height of its row, so cards side by side are equally tall.
    """
    with st.container(border=True, height="stretch"):
        st.markdown(f"**{label}**" if system is None else f"**{label}{SYSTEM_SEP}{markdown_literal(system.strip())}**")
        if media is not None:
            media()
        else:
            st.text(text)


def media_show(ctx: Context) -> MediaShow | None:
    """How the question's media are drawn (:class:`ui.media.MediaShow`), None when it has none (texts only)."""
    question = ctx.step.question
    if question is None or not has_media(question):
        return None
    return MediaShow.of(ctx.loaded.study, question)


def output_card(question: Question, k: int, label: str, *, system: str | None = None,
                show: MediaShow | None = None) -> None:
    """Output ``k`` of the question in a card headed ``label`` (:func:`text_card`): its text, or its media."""
    media = question.media_of(k)
    if media is not None and show is None:  # (never the file's path: a page that forgot ``show`` shows the type)
        text_card(label, f"({media.type})", system=system)
        return
    text_card(label, question.texts[k], system=system,
              media=None if media is None or show is None else (lambda: show.output(k, heading(label, system))))


#: Between a card's label and its output's system name (``[study] blind = false``): "Response A · gpt4"
SYSTEM_SEP = " · "


def heading(label: str, system: str | None = None) -> str:
    """A card's heading as plain text: ``label``, and `` · system`` when the study shows system names."""
    return label if system is None else f"{label}{SYSTEM_SEP}{system.strip()}"


def shown_systems(ctx: Context) -> tuple[str, ...] | None:
    """The system of each output of the question, in display order, when the study shows them (``[study] blind =
    false``) and the task reads an items file; else None: the names stay on the server (the default)."""
    question = ctx.step.question
    if ctx.loaded.study.blind or question is None or not isinstance(getattr(ctx.step.task, "source", None),
                                                                   ItemsSource):
        return None
    return question.sources


def key_class(key: str) -> str:
    """The CSS class Streamlit's frontend gives the element with widget or container key ``key``: "st-key-" and
    the key with every character outside ``[a-zA-Z0-9_-]`` replaced by "-" (a task id may hold a ".")."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def review_cards(question: Question, noun: str = "Review", *, topic: str | None = None, style: str = "",
                 systems: Sequence[str] | None = None, show: MediaShow | None = None) -> None:
    """The question's texts as equally tall bordered cards "Review A", "Review B", ... side by side (one
    under another on a narrow screen), drawn as one element, with a caption line ``topic`` above them if
    given; ``style`` is more CSS sent with it (e.g. the layout of the widget under the cards): ours only,
    never built from untrusted text. ``systems`` (:func:`shown_systems`): each card's heading names its system.

    One ``st.html`` instead of columns holding a label and an ``st.text`` each: ten elements become one, and
    each element counts when a question is answered (docs/explanation/performance.md). The texts are untrusted: each
    is HTML-escaped (so it reaches the page as text, never as markup; Streamlit's DOMPurify pass on
    ``st.html`` is a second guard) and shown with its line breaks and spaces, as ``st.text`` shows it.

    A question with media (``show``, :func:`media_show`): the cards are columns (:func:`media_columns`).
    """
    names = systems or [None] * len(question.labels)
    if has_media(question):
        if topic is not None:
            st.caption(topic)
        media_columns(question, noun, systems=systems, show=show)
        st.html(f"<style>{_CARDS_CSS}{style}</style>")
        return
    st.html(cards_html([heading(f"{noun} {label}", name) for label, name in zip(question.labels, names, strict=True)],
                       question.texts, topic, style))


#: The cards of :func:`cards_html`: the look of a bordered ``st.columns`` row (border, radius, padding and
#: gap from the app's light theme), stacked below Streamlit's own breakpoint for columns (640 px). The last
#: rule hides Streamlit's "-100 ... 100" row under a slider (shown on hover or focus) on pages with cards: the
#: HELP slider draws its own row of ends under it (one row, not two; see :func:`hide_slider_ticks`).
_CARDS_CSS = """.evalkit-cards {display: grid; grid-template-columns: repeat(var(--evalkit-n), minmax(0, 1fr));
gap: 1rem;}
.evalkit-card {border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; padding: calc(1rem - 1px);
min-width: 0;}
.evalkit-card-label {font-weight: 600; margin: 0 0 1rem 0;}
.evalkit-card-text {white-space: pre-wrap; overflow-wrap: anywhere; margin: 0;}
.evalkit-topic {font-size: 0.875rem; color: rgba(49, 51, 63, 0.6); margin: 0 0 1rem 0;}
@media (max-width: 640px) {.evalkit-cards {grid-template-columns: minmax(0, 1fr);}}
[data-testid='stSliderTickBar'] {display: none;}"""


def cards_html(labels: Sequence[str], texts: Sequence[str], topic: str | None = None, style: str = "") -> str:
    """The HTML of :func:`review_cards`: the ``topic`` line, our ``labels`` and the untrusted ``texts``, each
    escaped."""
    cards = "".join(f'<div class="evalkit-card" data-testid="evalkit-card"><p class="evalkit-card-label">'
                    f'{html.escape(label)}</p><div class="evalkit-card-text">{html.escape(text)}</div></div>'
                    for label, text in zip(labels, texts, strict=True))
    head = f'<p class="evalkit-topic">{html.escape(topic)}</p>' if topic is not None else ""
    return (f'{head}<div class="evalkit-cards" style="--evalkit-n: {len(texts)}">{cards}</div>'
            f"<style>{_CARDS_CSS}{style}</style>")


def topic_line(ctx: Context, question: Question) -> str | None:
    """"Topic: <domain label>" for a question whose texts come from the review pools, else None."""
    return f"Topic: {ctx.loaded.study.domain_label(question.domain)}" if question.domain else None


def review_columns(question: Question, noun: str = "Review", *, systems: Sequence[str] | None = None,
                   show: MediaShow | None = None) -> list[Any]:
    """The question's texts as cards side by side, each in a column of its own (stacked on narrow screens),
    so a widget drawn ``with`` a column sits under its card, outside the border (on a phone too). Returns
    the columns; see :func:`widgets_under_cards`. ``systems`` (:func:`shown_systems`): each card names its system;
    ``show`` (:func:`media_show`): a media output's card shows its media."""
    columns = st.columns(len(question.texts), gap="small")
    names = systems or [None] * len(question.texts)
    for k, (column, label, name) in enumerate(zip(columns, question.labels, names, strict=True)):
        with column:
            output_card(question, k, f"{noun} {label}", system=name, show=show)
    return columns


def media_columns(question: Question, noun: str, *, systems: Sequence[str] | None = None,
                  show: MediaShow | None = None) -> list[Any]:
    """A question with media: :func:`review_columns` (side by side; stacked below 640 px, Streamlit's breakpoint for
    columns), whose cards are as tall as the tallest."""
    with st.container(key=f"{question.task}-{question.index}-media-cards"):
        columns = review_columns(question, noun, systems=systems, show=show)
    widgets_under_cards(f"{question.task}-{question.index}-media-cards")
    return columns


def item_card(question: Question, label: str = "Input", show: MediaShow | None = None) -> None:
    """An items question's title and input, above its outputs, as plain text in a card headed ``label`` (the
    task's ``input_label``, default "Input"); a media input is drawn by ``show`` (:func:`media_show`)."""
    if question.title is None and question.input is None:
        return
    with st.container(border=True, key="item-input"):
        st.markdown(f"**{label}**")  # the researcher's (config), like the task's question
        if question.title is not None:
            with st.container(key="item-title"):  # bold by our CSS: the title itself stays plain text
                st.text(question.title)
        if question.input_media is not None:
            if show is not None:
                show.input(label)
            else:  # (never the file's path)
                st.text(f"({question.input_media.type})")
        elif question.input is not None:
            st.text(question.input)
    st.html("<style>.st-key-item-title [data-testid='stText'] {font-weight: 600;}</style>")


def item_question_header(ctx: Context, question_text: str, *, show_input: bool = True) -> None:
    """The head of a question of the items kinds (compare, score, rank, realfake, spans): task, "Question i of n"
    and overall progress, the task's question, the topic (texts from the review pools), the item's instructions
    (:func:`item_instructions`) and the input (unless ``show_input`` is False: a document's inputs are shown
    segment by segment)."""
    question = ctx.step.question
    assert question is not None
    progress_header(ctx.step)
    st.subheader(question_text, anchor=False)
    topic = topic_line(ctx, question)
    if topic is not None:
        st.caption(topic)
    item = question_item(ctx)
    if item is not None:
        item_instructions(item)
    if show_input:
        item_card(question, getattr(ctx.step.task, "input_label", "Input"), media_show(ctx))


def question_item(ctx: Context) -> Item | None:
    """The item of the question when its task reads an items file (looked up by id in the loaded file), else
    None (a question from the review pools, or a queued question not yet filled)."""
    question, source = ctx.step.question, getattr(ctx.step.task, "source", None)
    if question is None or not question.review_ids or not isinstance(source, ItemsSource):
        return None
    items = ctx.loaded.item_sets.get(source.items)
    position = None if items is None else items.index.get(question.review_ids[0])
    return None if items is None or position is None else items[position]


def instructions_markdown(item: Item) -> str:
    """The item's instructions (:meth:`~evalkit.items.Item.instruction_blocks`) as one safe Markdown text: each
    converted from untrusted HTML (:func:`evalkit.markup.html_to_markdown`), a segment's headed "Segment k";
    "" when there are none (or nothing visible is left of them)."""
    parts = []
    for segment, text in item.instruction_blocks():
        converted = html_to_markdown(text)
        if not converted:
            continue
        if segment is None:
            parts.append(converted)
        elif "\n" in converted or re.match(r"[-+] |\d+[.)] ", converted):  # a list or several lines: under its label
            parts.append(f"**Segment {segment}:**\n\n{converted}")
        else:
            parts.append(f"**Segment {segment}:** {converted}")
    return "\n\n".join(parts)


def item_instructions(item: Item) -> None:
    """The item's instructions above it (Pearmut's per-item ``instructions``): an info box of safe Markdown, never
    HTML (:func:`instructions_markdown`); nothing when the item has none."""
    text = instructions_markdown(item)
    if text:
        with st.container(key="item-instructions"):
            st.info(text, icon=":material/info:")


def widgets_under_cards(key: str) -> None:
    """For review_columns drawn inside container ``key`` with widgets added under each card: each card keeps at
    least its text's height and grows to the tallest column, so the widgets under the cards line up.

    (A card stretched to its row starts from a height of 0, so with widgets under it the column counts the
    card as empty and the card's text runs over what follows.)
    """
    st.html(f"<style>.{key_class(key)} [data-testid='stColumn'] > [data-testid='stVerticalBlock'] > "
            "[data-testid='stLayoutWrapper']:first-child {flex: 1 0 auto;}</style>")


def stack_options_on_phone(key: str) -> None:
    """On a phone (narrow screen), the options of every radio inside container ``key`` stand one per line
    (a horizontal row of levels that wraps halfway reads as two scales)."""
    st.html(f"<style>@media (max-width: 640px) {{.{key_class(key)} [role='radiogroup'] "
            "{flex-direction: column; align-items: flex-start;}}</style>")


def hide_slider_ticks(key: str) -> str:
    """CSS hiding Streamlit's own "min ... max" row, which it shows under a slider on hover or focus, for the
    slider ``key``: the page draws its own row of ends (one row, not two)."""
    return f".{key_class(key)} [data-testid='stSliderTickBar'] {{display: none;}}"


def progress_header(step: Step, what: str = "Question") -> None:
    """Task and question numbers plus an overall progress bar, as one element: the task's line (grey) above
    the bar's own text (each element counts when a question is answered, docs/explanation/performance.md)."""
    assert step.task is not None
    fraction, text = progress_label(step, what)
    st.progress(fraction, text=f":gray[Task {step.task_number} of {step.n_tasks} · {bracket_safe(step.task.title)}]"
                               f"  \n{text}")


def bracket_safe(text: str) -> str:
    """``text`` (the researcher's, e.g. a task title) ready to stand inside a markdown directive such as
    ``:gray[...]``: one line, its backslashes and square brackets escaped, so it cannot close the directive
    early or leave it open (other markdown in it stays markdown, as in any caption)."""
    return re.sub(r"([\\\[\]])", r"\\\1", " ".join(text.splitlines()))


def paper_graph(dot: str, compact: str) -> None:
    """A Graphviz chart at its natural size (node text stays legible), never shrunk to the column's width (5 px
    text on a phone): ``dot`` on a wide screen, ``compact`` (top to bottom, labels only: it fits a 390 px phone,
    see :func:`evalkit.tasks.rating.compact_dot_graph`) below 641 px. Either scrolls sideways if it is still
    wider than the screen. Both are sent; CSS shows one (the width is known only to the browser)."""
    st.html("<style>.st-key-paper-graph {overflow-x: auto;} "
            ".st-key-paper-graph [data-testid='stGraphVizChart'] svg {max-width: none;} "
            # the phone's graph takes the card's padding too, and is scaled down (a little) only if still too wide
            "[data-testid='stLayoutWrapper']:has(> .st-key-paper-graph-phone) {width: calc(100% + 1.5rem); "
            "max-width: none; margin-left: -0.75rem;} "
            ".st-key-paper-graph-phone [data-testid='stGraphVizChart'] svg {max-width: 100%; height: auto;} "
            "@media (max-width: 640px) {[data-testid='stLayoutWrapper']:has(> .st-key-paper-graph) "
            "{display: none;}} @media (min-width: 641px) {[data-testid='stLayoutWrapper']:has(> "
            "[class*='st-key-paper-graph-phone']) {display: none;}}</style>")
    with st.container(key="paper-graph"):
        st.graphviz_chart(dot)
    with st.container(key="paper-graph-phone-note"):
        st.caption("Each node shows its label; its whole text is in the list below the graph.")
    with st.container(key="paper-graph-phone"):
        st.graphviz_chart(compact)


def component_css(name: str) -> str:
    """The stylesheet of the custom component ``components/<name>/``: what evalkit's widgets share
    (``components/common.css``: the theme, the scales, the marks, "Next"), then its own ``<name>.css``."""
    base = APP_DIR / "components"
    return (base / "common.css").read_text(encoding="utf-8") + (base / name / f"{name}.css").read_text(encoding="utf-8")
