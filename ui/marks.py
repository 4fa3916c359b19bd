"""The "what is missing" marks: a yellow mark under a widget the evaluator left empty, the CSS that hides it as
soon as the widget is answered, an invisible stand-in that keeps columns level, and the scroll that brings the
first mark into view after a refused click.

May import: Streamlit, ``evalkit``'s public names and ``ui.widgets``; never ``pages``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from evalkit.tasks import Metric, RatingTask
from evalkit.tasks.rating import missing_scores

from .widgets import key_class

MARK_KEY = "why-mark"  # the class prefix of every "what is missing" mark (see missing_mark / reveal_first_mark)


def missing_mark(message: str, key: str) -> None:
    """A "what is missing" mark right under its widget (``key``: unique on the page, e.g. the widget's own key).

    Yellow (``st.warning``), like every "what is missing" message; failures are red (docs: evaluator-screens.md,
    "Messages"). Drawn in a keyed container, so :func:`reveal_first_mark` can find the first one on the page and
    :func:`clear_mark_css` can hide it once its widget is answered."""
    with st.container(key=f"{MARK_KEY}-{key}"):
        st.warning(message)


def clear_mark_css(key: str, answered: str = "input:checked") -> str:
    """CSS hiding the mark of widget ``key`` (:func:`missing_mark`) as soon as the widget is answered: an option of
    it checked (a radio or a checkbox), or with ``answered="input:not(:placeholder-shown)"`` a text box holding
    something (the box needs a placeholder). In a form a change reruns nothing, so the browser hides the mark
    itself (``:has``, no script); the server checks again on the next click. Ours only: the key is the widget's,
    never untrusted text."""
    mark = key_class(f"{MARK_KEY}-{key}")
    given = f"body:has(.{key_class(key)} {answered})"
    return f"{given} [data-testid='stLayoutWrapper']:has(> .{mark}), {given} .{mark} {{display: none;}}"


def clear_mark_when_checked(*keys: str) -> None:
    """:func:`clear_mark_css` of each widget in ``keys``, as one style element (draw it after the marks)."""
    st.html(f"<style>{' '.join(clear_mark_css(k) for k in keys)}</style>")


def mark_spacer(text: str, key: str) -> None:
    """An invisible stand-in for a mark in a column that has none while a column beside it has one (``text``: the
    longest mark of the row), so that the columns stay equally tall and the widgets under the cards stay in one
    row. Takes no space on a phone, where the columns are stacked."""
    with st.container(key=f"why-spacer-{key}"):  # its style inside it: on a phone nothing of it takes space
        st.warning(text)
        st.html("<style>[class*='st-key-why-spacer-'] {visibility: hidden;} @media (max-width: 640px) "
                "{[data-testid=stLayoutWrapper]:has(> [class*='st-key-why-spacer-']) {display: none;}}</style>")


def refused_click() -> None:
    """From a button's callback that stored nothing because inputs are missing: the next run brings the first
    mark into view (see :func:`reveal_first_mark`)."""
    st.session_state["_refused_clicks"] = st.session_state.get("_refused_clicks", 0) + 1
    st.session_state["_reveal_mark"] = True


def reveal_first_mark() -> None:
    """Once after a refused click: when the page's first mark (:func:`missing_mark`) is not on screen (on a phone the
    first missing widget is often a screen above the button), scroll it to the middle of the screen, so the
    evaluator sees which widget is missing something. Nothing moves when it is already visible. Static script, no
    untrusted input; its element takes no space."""
    if not st.session_state.pop("_reveal_mark", False):
        return
    n = st.session_state.get("_refused_clicks", 0)
    st.html(_REVEAL_MARK.replace("{n}", str(n)).replace("{key}", MARK_KEY), unsafe_allow_javascript=True)


_REVEAL_MARK = """<span class="reveal-mark" data-n="{n}"></span>
<style>[data-testid=stElementContainer]:has(.reveal-mark) {display: none;}</style>
<script>
setTimeout(() => {  // after the run has drawn the marks
  const mark = document.querySelector("[class*='st-key-{key}-']");
  if (!mark) return;
  const header = document.querySelector("[data-testid=stHeader]");
  const top = header ? header.getBoundingClientRect().bottom : 0;
  const box = mark.getBoundingClientRect();
  if (box.top < top || box.bottom > window.innerHeight) {
    mark.scrollIntoView({block: "center"});
  }
}, 50);
</script>"""


def mark_missing_scores(prefix: str, task: RatingTask, scores: Mapping[str, int | None]) -> bool:
    """From a save callback: whether a score is missing; if so, the page marks the missing questions
    (see :func:`missing_marks`) from now on, until they are answered."""
    if not missing_scores(task, scores):
        return False
    st.session_state[f"_{prefix}-tried"] = True
    refused_click()
    return True


def missing_marks(prefix: str, task: RatingTask, metrics: Sequence[Metric]) -> set[str]:
    """Ids of the rating questions to mark as missing: none before the first failed save, then those
    still without a score in the widgets keyed ``{prefix}-{metric id}``."""
    if not st.session_state.get(f"_{prefix}-tried"):
        return set()
    scores = {m.id: st.session_state.get(f"{prefix}-{m.id}") for m in metrics}
    return {m.id for m in missing_scores(task, scores)}
