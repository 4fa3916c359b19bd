"""Renderer of kind ``rating``: rubric ratings of a system's output for items the evaluator knows (e.g. paper
novelty).

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Literal

import streamlit as st

import ui
from evalkit.rating_items import Evidence, Excerpt, GraphNode, RatingItem, RelatedPaper
from evalkit.sampling import item_order
from evalkit.tasks.rating import (
    SAVE_ANOTHER,
    SAVE_FINISH,
    RatingTask,
    compact_dot_graph,
    disabled_buttons_note,
    dot_graph,
    finish_allowed,
    finish_rating,
    full_nodes,
    graph_heading,
    kind_name,
    record_item_rating,
)


def render(ctx: ui.Context) -> None:
    """Pick an item, read the system's assessment, score every metric; save, or save and finish."""
    task = ctx.step.task
    assert isinstance(task, RatingTask)
    items = ctx.loaded.items[task.id]
    by_id = {i.id: i for i in items}
    rated = dict(ctx.step.rated)
    index = ctx.step.index
    available = [i.id for i in item_order(task, items, ctx.session.seed) if i.id not in rated.values()]
    metrics = task.questions

    ui.progress_header(ctx.step, "Paper")

    if rated:
        n = len(rated)
        note = f"You have rated {n} {'paper' if n == 1 else 'papers'}."
        if n < task.min_items:
            note += f" Please rate at least {task.min_items}."
        elif n < task.suggested_items:
            note += f" If you know more papers, rating {task.suggested_items} would help us a lot."
        st.success(note)
        if n >= task.min_items:
            st.button("I am done rating papers", on_click=lambda: ui.safe_save(
                lambda: finish_rating(ctx.store, ctx.session, task)), key=f"{task.id}-{index}-done")

    if not available:
        st.info("You have rated every paper in the list. Thank you!")
        st.stop()

    st.subheader("Choose a paper you know well", anchor=False)
    item_id = st.selectbox(
        "Paper", available, index=None, format_func=lambda i: by_id[i].title, key=f"{task.id}-{index}-item",
        placeholder="Type to search the list of papers...", label_visibility="collapsed")
    if item_id is None:
        ui.show_flash()
        st.caption(f"{len(available)} papers to choose from. Pick one you have read, so that you can judge the "
                   "system's assessment.")
        st.stop()

    item = by_id[item_id]
    clock = ui.clock_key(ctx.session, task.id, index, item_id)
    ui.start_clock(clock)

    assessment(task, item)

    st.markdown("#### Your ratings")
    prefix = f"{task.id}-{index}"
    last_needed = finish_allowed(task, len(rated))


    def save(finish: bool) -> None:
        scores = {m.id: st.session_state.get(f"{prefix}-{m.id}") for m in metrics}
        comment = st.session_state.get(f"{prefix}-comment") or ""
        if ui.mark_missing_scores(prefix, task, scores):  # validation: the page marks the unanswered questions
            return

        ui.safe_save(lambda: record_item_rating(ctx.store, ctx.session, task, index, item_id, scores, comment,
                                                ui.elapsed_ms(clock), items, finish=finish))  # one transaction


    missing = ui.missing_marks(prefix, task, metrics)  # questions left unanswered after a click on "Save"
    for m in metrics:  # outside the form: each answer reruns the page, so its mark goes away at once
        st.markdown(f"**{m.label}.** {m.question}")
        if m.id in missing:
            ui.missing_mark("Please choose a score for this question.", f"{prefix}-{m.id}")
        st.radio(f"**{m.label}.** {m.question}", list(m.scale), index=None, key=f"{prefix}-{m.id}",
                 format_func=lambda k, m=m: f"{k} · {m.anchors[k - 1]}", label_visibility="collapsed")
    with st.form(prefix, border=False):
        st.text_area("Comments (optional)", key=f"{prefix}-comment", max_chars=5000,
                     placeholder="Anything the scores do not capture")
        if missing:
            n = len(missing)
            st.warning(f"{n} {'question has' if n == 1 else 'questions have'} no score yet: "
                       f"{'it is' if n == 1 else 'they are'} marked above.")
        ui.show_flash()  # just above the buttons, where the evaluator is looking after a click
        c1, c2 = st.columns(2)
        with c1:
            st.form_submit_button(SAVE_ANOTHER, on_click=save, args=(False,), width="stretch",
                                  disabled=len(available) <= 1)
        with c2:
            st.form_submit_button(SAVE_FINISH, type="primary", on_click=save, args=(True,), width="stretch",
                                  disabled=not last_needed)
        note = disabled_buttons_note(task, len(rated), len(available))
        if note:  # a greyed-out button says why, right under it
            st.caption(f":material/info: {note}")
    ui.reveal_first_mark()


# ----------------------------------------------------------------------------- the system's assessment
# Every text of an item is untrusted (a system's output): it goes through st.text, or html.escape'd into st.html
# (for a muted or bold line), never into markdown. Only our own labels and the config's headings are markdown.


_STYLES = {
    "muted": "font-size: 0.875rem; color: rgba(49, 51, 63, 0.7);",
    "bold": "font-weight: 600;",
    "overline": "font-size: 0.75rem; font-weight: 600; letter-spacing: 0.04em; text-transform: uppercase; "
                "color: rgba(49, 51, 63, 0.7); margin-top: 0.25rem;",
}


def plain(text: str, style: Literal["muted", "bold", "overline"]) -> None:
    """Untrusted text as escaped HTML (no markup in it can act), styled as a muted line, bold, or a small
    upper-case overline."""
    css = "white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; " + _STYLES[style]
    st.html(f'<p style="{css}">{html.escape(text)}</p>')


def byline(authors: Sequence[str], venue: str, year: int | None) -> str:
    """ "A, B, C et al. · venue 2024" (as much of it as is known)."""
    who = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    where = " ".join(x for x in (venue, str(year) if year is not None else "") if x)
    return " · ".join(x for x in (who, where) if x)


def evidence(entries: Sequence[Evidence]) -> None:
    """Evidence entries, each with the paper it cites and where that came from."""
    if not entries:
        st.text("(none)")
    for e in entries:
        with st.container(gap=None):  # the cited paper right under its evidence
            st.text(f"• {e.text}")
            cite = " · ".join(x for x in (e.paper_title, f"source: {e.source}" if e.source else "") if x)
            if cite:
                plain(f"— {cite}", "muted")


def related(papers: Sequence[RelatedPaper]) -> None:
    """The related papers the system retrieved: title, byline, polarity, source, its summary and the abstract."""
    for k, r in enumerate(papers):
        if k:
            st.divider()
        plain(r.title, "bold")
        meta = [byline(r.authors, r.venue, r.year), f"polarity: {r.polarity}" if r.polarity else "",
                f"source: {r.source}" if r.source else "", f"score: {r.score:.2f}" if r.score is not None else ""]
        plain(" · ".join(x for x in meta if x), "muted")
        if r.summary:
            st.text(f"Summary: {r.summary}")
        if r.abstract:
            st.text(f"Abstract: {r.abstract}")


def graph_nodes(item: RatingItem) -> None:
    """Every node of the graph, grouped by type, with its whole label and text (the graph abbreviates them) and
    the passages of the paper it was drawn from, each node folded under its label (a ``<details>`` element: a tap
    opens it; nested expanders are not possible). Nodes that are only a label (keywords) share one list."""
    for kind, nodes in full_nodes(item):
        plain(kind_name(kind, plural=len(nodes) > 1), "overline")
        bare = [n for n in nodes if (not n.text or n.text == n.label) and not n.excerpts]
        if bare:
            st.text("\n".join(f"• {n.label}" for n in bare))
        folded = [node_details(n) for n in nodes if n not in bare]
        if folded:
            st.html("".join(folded) + f"<style>{_DETAILS_CSS}</style>")


#: The look of a folded node (:func:`node_details`): its label a bold line with Streamlit's expander arrow feel.
_DETAILS_CSS = (".evalkit-node {margin: 0 0 0.35rem 0;} .evalkit-node summary {cursor: pointer; font-weight: 600; "
                "overflow-wrap: anywhere;} .evalkit-node p {white-space: pre-wrap; overflow-wrap: anywhere; "
                "margin: 0.25rem 0 0 1.1rem;} .evalkit-node p.evalkit-muted {" + _STYLES["muted"] + "}")


def node_details(node: GraphNode) -> str:
    """One node as a folded ``<details>`` element: its label as the summary, its text and the paper's passages
    inside. Every text is the item's (untrusted): ``html.escape``d, so it shows as text and no markup acts."""
    body = [f"<p>{html.escape(node.text)}</p>"] if node.text and node.text != node.label else []
    body += [f'<p class="evalkit-muted">{html.escape(excerpt_line(ex))}</p>' for ex in node.excerpts]
    return (f'<details class="evalkit-node"><summary>{html.escape(node.label)}</summary>{"".join(body)}'
            "</details>")


def excerpt_line(excerpt: Excerpt) -> str:
    """ "From the paper (Section): “passage”" """
    return f"From the paper{f' ({excerpt.section})' if excerpt.section else ''}: “{excerpt.text}”"


def assessment(task: RatingTask, item: RatingItem) -> None:
    """The system's output for one item: the paper, summary, label, conclusion, evidence, comparisons,
    related papers and the graph (with every node in full on demand)."""
    label = task.system_label
    st.markdown("#### The system's novelty assessment")
    with st.container(border=True):
        st.markdown("**Paper**")
        st.text(item.title)
        line = byline(item.authors, item.venue, item.year)
        if line:
            plain(line, "muted")
        if item.abstract:
            with st.expander("Abstract of the paper"):
                st.text(item.abstract)
        st.markdown("**Summary**")
        st.text(item.summary)
        st.markdown(f"**{label.heading}**")  # trusted: the config's
        with st.container(gap=None):
            st.text(label.show(item.rating))
            if item.probability is not None:
                st.text(label.show_probability(item.probability))
        if item.conclusion:
            st.markdown("**Conclusion**")
            st.text(item.conclusion)
        left, right = st.columns(2)
        with left:
            st.markdown("**Supporting evidence** (why it is novel)")
            evidence(item.supporting_evidence)
        with right:
            st.markdown("**Contradictory evidence** (why it may not be)")
            evidence(item.contradictory_evidence)
        st.markdown("**Key comparisons** with related work")
        for entry in item.key_comparisons:
            st.text(f"• {entry}")
        if item.related:
            with st.expander(f"Related papers the system retrieved ({len(item.related)})"):
                related(item.related)
        st.markdown("**Graph of the paper**")
        st.text(graph_heading(item))  # from the item's node types: untrusted
        ui.paper_graph(dot_graph(item), compact_dot_graph(item))
        with st.expander("Every node of the graph in full"):  # each node's details folded too (graph_nodes)
            graph_nodes(item)
