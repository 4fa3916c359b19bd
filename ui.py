"""Streamlit helpers shared by app.py and the pages.

Only app.py, this module and pages/ import Streamlit. Everything that decides
something (which question, what is stored) lives in ``evalkit``; this module
caches the study and the store per process, reads the session token from the
URL, routes a session to the screen it belongs on, and renders untrusted text
safely.
"""

from __future__ import annotations

import gc
import html
import importlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import streamlit as st

from evalkit.balance import arrival_of
from evalkit.checks import CheckFeedback, pending_feedback, skip_tutorial
from evalkit.config import ConfigError, LoadedStudy, open_study, relative_paths, study_summary
from evalkit.datasets import DatasetError
from evalkit.login_limit import LoginLimiter
from evalkit.queue import register_in_background, resolve_step
from evalkit.sampling import PlanError, Question, plan
from evalkit.store import AnswerConflict, Progress, Session, Store, StoreError, Unavailable, open_store
from evalkit.survey import EXTERNAL_ID_PARAMS, Step, SurveyError, pause_due, pause_text, progress_label
from evalkit.tasks import Metric, RatingTask
from evalkit.tasks.rating import missing_scores
from evalkit.tasks.responses import (
    SLIDER_LABELS,
    TIE,
    choice_missing,
    in_sentence,
    plural,
    record_choice,
    record_slider,
)

log = logging.getLogger("evalkit.app")
HERE = Path(__file__).resolve().parent
PAGES = {
    "consent": "pages/consent.py",
    "survey": "pages/survey.py",  # every task kind's questions (pages/tasks/<kind>.py draws them)
    "done": "pages/done.py",
    "results": "pages/results.py",
}
TOKEN_PARAM = "s"
#: The callout above a practice question (a task's ``tutorial``): the one thing that sets it apart
PRACTICE_NOTE = ("**Practice question: this one is not counted.** If your answer is not the expected one, you will "
                 "be told why.")
PAGE_ICON = str(HERE / "assets" / "favicon.png")  # served by this server: no third-party request
# by url_path; question pages choose (see instructions_gate)
_LAYOUTS: dict[str, Literal["centered", "wide"]] = {"": "centered", "done": "centered", "results": "wide"}


#: Seconds Streamlit's runtime loop pauses after sending a session's queued messages (its
#: ``MESSAGE_FLUSH_INTERVAL_SECS``, 5 ms in Streamlit 1.67; no config option sets it). See
#: :func:`send_messages_promptly`.
FLUSH_INTERVAL_SECONDS = 0.0


def send_messages_promptly(seconds: float = FLUSH_INTERVAL_SECONDS) -> bool:
    """Make Streamlit send a run's messages as soon as they are ready; True when the setting took.

    Streamlit's runtime loop sends whatever is queued, then sleeps 5 ms before it looks again. A rerun's
    first message (the run has started) goes out at once, so everything a question fragment draws after it
    waits for that sleep: half of what an answer costs on the server (README "Performance"). Streamlit has
    no option for this, so the module constant its loop reads on every pass is set here. With 0 the loop
    still waits for its "messages queued" event between passes (it does not spin); it only batches less.
    A Streamlit without that constant is left as it is, with one warning in the log.
    """
    from streamlit.runtime import runtime  # not at import: AppTest and tools import ui without a server

    if not isinstance(getattr(runtime, "MESSAGE_FLUSH_INTERVAL_SECS", None), (int, float)):
        if not getattr(send_messages_promptly, "warned", False):
            log.warning("this Streamlit has no runtime.MESSAGE_FLUSH_INTERVAL_SECS: answers are sent at its pace")
            send_messages_promptly.warned = True  # type: ignore[attr-defined]
        return False
    runtime.MESSAGE_FLUSH_INTERVAL_SECS = seconds  # type: ignore[misc]  # a Final in Streamlit: see above
    return True


def page_layout(url_path: str) -> Literal["centered", "wide"] | None:
    """The layout app.py sets before a page runs, or None when the page sets it itself (question pages)."""
    return _LAYOUTS.get(url_path)


# ----------------------------------------------------------------------------- cached resources


#: The results page's address at the app's root, ``/?page=results`` (see :func:`results_at_root`).
RESULTS_QUERY = ("page", "results")


def results_at_root() -> bool:
    """Whether this run asks for the results page at the app's root address, ``/?page=results``.

    Streamlit's browser client, opened directly at a page's own path (``/results``), first takes that path for
    the app's base URL: it asks for ``/results/_stcore/health`` and ``/results/_stcore/host-config``, gets two
    404s (the server answers them at the root only, on purpose, so that the client falls back), then connects
    at ``/``. Opened at the root address it asks the root's only. So the results page is served at
    ``/?page=results`` too (the address researchers are given); ``/results`` keeps working for bookmarks."""
    return st.query_params.get(RESULTS_QUERY[0]) == RESULTS_QUERY[1]


def page_path(page: Any) -> str:
    """A page's path in the app (``""`` consent, ``"survey"``, ``"done"``, ``"results"``), also for the results
    page served at the root address (:func:`results_at_root`), whose ``url_path`` is then ``""``."""
    return RESULTS_QUERY[1] if not page.url_path and results_at_root() else page.url_path


def app_pages() -> list[st.Page]:
    """The app's pages, made once per browser session and kept in its session state (each page resolves and
    checks its file: a few system calls, on every whole-page run otherwise). Not shared between sessions: a
    Page object carries per-run state (``st.navigation`` arms the page it returns, ``run`` disarms it), so one
    object used by concurrent evaluators breaks (seen in bench_concurrency.py). The consent page is the default
    (the root address), unless the run asks for the results page there (:func:`results_at_root`)."""
    results_here = results_at_root()
    held = st.session_state.get("_pages")
    if held is not None and held[0] == results_here:
        return held[1]
    pages = [
        st.Page(PAGES["consent"], title="Welcome", default=not results_here),
        st.Page(PAGES["survey"], title="Survey", url_path="survey"),
        st.Page(PAGES["done"], title="Thank you", url_path="done"),
        st.Page(PAGES["results"], title="Results", url_path="results",  # linked from no evaluator screen
                default=results_here),
    ]
    st.session_state["_pages"] = (results_here, pages)
    return pages


def secret(name: str) -> str | None:
    """A value from Streamlit's secrets (``.streamlit/secrets.toml``; Community Cloud's secrets), or None."""
    try:
        value = st.secrets.get(name)
    except Exception:  # no secrets file at all
        value = None
    return str(value) if value else None


def database_override() -> tuple[str | None, str]:
    """The database that replaces ``[study] database``, and where it came from.

    ``EVALKIT_DATABASE`` (one process, one deployment) wins over the ``database_url`` secret, which wins
    over the config: so a hosted app keeps its PostgreSQL URL (and its password) out of the repository.
    """
    if os.environ.get("EVALKIT_DATABASE"):
        return os.environ["EVALKIT_DATABASE"], "EVALKIT_DATABASE"
    return secret("database_url"), "the database_url secret"


@st.cache_resource(show_spinner="Loading the study...")
def _load_study(config: str, database: str | None, database_from: str) -> LoadedStudy:
    loaded = open_study(config, database=database, database_from=database_from)
    gc.freeze()  # the pools live as long as the process: keep them out of every later garbage collection
    return loaded


@st.cache_resource(show_spinner=False)
def _open_store(location: str, version: str, _loaded: LoadedStudy) -> Store:
    """One store per process and database (for PostgreSQL: one connection pool)."""
    store = open_store(_loaded.study.database)
    store.register_study(version, study_summary(_loaded.study))  # the database describes its own tasks
    # judgments_per_item: the shared queue's units, registered on a thread (a million units take seconds; the
    # first page does not wait for them, a claim does)
    register_in_background(store, _loaded.study, _loaded.item_sets)
    return store


@st.cache_resource(show_spinner=False, max_entries=20_000)
def _plan(version: str, seed: int, arrival: int | None, _loaded: LoadedStudy) -> list[Question]:
    """An evaluator's plan, computed once per process (a pure function of the study, the seed and the arrival)."""
    return plan(_loaded.study, _loaded.pools, seed, _loaded.item_sets, arrival)


def page_title() -> str:
    """The browser tab's title: the study's ``title`` (the config is read once per process), or "Survey" while the
    study cannot be read (the page then says why, see :func:`load`)."""
    config = os.environ.get("EVALKIT_CONFIG", str(HERE / "config.toml"))
    key = (config, *database_override())
    held = st.session_state.get("_resources")
    if held is not None and held[0] == key:
        return held[1].study.title
    try:
        return _load_study(*key).study.title
    except Exception:  # a set-up problem: load() shows it on the page (a failed load is not cached)
        return "Survey"


def load() -> tuple[LoadedStudy, Store]:
    """The study (parsed once per process) and its store; on a set-up error, a clear message and stop."""
    config = os.environ.get("EVALKIT_CONFIG", str(HERE / "config.toml"))
    key = (config, *database_override())
    held = st.session_state.get("_resources")
    if held is not None and held[0] == key:  # this browser session already looked them up
        return held[1], held[2]
    try:
        loaded = _load_study(*key)
        store = _open_store(str(loaded.study.database), loaded.version, loaded)
    except Unavailable as exc:  # a database server that does not answer (yet): a reload will try again
        log.error("the database cannot be reached (config %s): %s", config, exc)
        unavailable_notice()  # no details for evaluators: the log has the masked URL and the reason
        st.stop()
    except (ConfigError, DatasetError, StoreError, OSError) as exc:
        log.error("study set-up failed (config %s): %s", config, exc)  # the full detail, absolute paths included
        st.error("The study is not set up correctly, so the survey cannot start. "
                 "Please tell the research team; the problem is:")
        # paths relative to the study folder: the browser gets no server folders
        st.code(relative_paths(str(exc), Path(config).resolve().parent), language=None, wrap_lines=True)
        st.stop()
    st.session_state["_resources"] = (key, loaded, store)
    return loaded, store


# ----------------------------------------------------------------------------- sessions and routing


def token() -> str | None:
    """The session token from the URL, if any."""
    value = st.query_params.get(TOKEN_PARAM)
    return value if isinstance(value, str) else None


def screen(step: Step) -> str:
    """The page a step is shown on: ``done``, or ``survey`` for a question of any task kind."""
    return "done" if step.kind == "done" else "survey"


def go(step: Step, session_id: str) -> None:
    """Switch to the screen of ``step``, keeping the token in the URL."""
    st.switch_page(PAGES[screen(step)], query_params={TOKEN_PARAM: session_id})


def renderer(kind: str) -> Callable[[Context], None]:
    """The ``render(ctx)`` of a task kind: ``pages/tasks/<kind>.py`` (one module per kind of evalkit.tasks)."""
    return importlib.import_module(f"pages.tasks.{kind}").render


def step_of(loaded: LoadedStudy, store: Store, session: Session,
            progress: Progress | None = None) -> tuple[Step, list[Question]]:
    """Where this session stands now (read from the database unless given) and its plan.

    The plan is kept in the browser session too: a lookup in ``st.cache_resource`` (hashing its arguments)
    costs about 0.2 ms, a noticeable part of answering a question."""
    arrival = arrival_of(session.meta)
    key = (loaded.version, session.seed, arrival)
    held = st.session_state.get("_plan")
    if held is not None and held[0] == key:
        questions = held[1]
    else:
        try:
            questions = _plan(loaded.version, session.seed, arrival, loaded)
        except PlanError as exc:  # the data changed under a running study
            log.error("plan failed for a session: %s", exc)
            st.error("This study cannot show your questions right now. Please tell the research team.")
            st.stop()
        st.session_state["_plan"] = (key, questions)
    if progress is None:
        progress = store.progress(session.session_id)
    # session_step (the [study.session] limits applied), with a queued task's item claimed from the shared queue
    # (not while a break screen is due: no claim's time runs out during the break)
    return resolve_step(store, loaded.study, loaded.item_sets, session, questions, progress,
                        hold=lambda step: pause_due(loaded.study, step, _dismissed_pause(session))), questions


def ended_notice() -> None:
    """The screen everybody sees once the researcher has ended the study."""
    st.success("**This study is complete.** Thank you for your interest; no more answers are being collected.")


def unavailable_notice() -> None:
    """What an evaluator sees while the database cannot be reached (a restart, a failover), with a way to try
    again that is easy to find on a phone (a reload works too)."""
    st.error("The survey cannot reach its database just now. Your earlier answers are saved; an answer you "
               "gave just now may not be, so you may see that question again. Please wait a moment, then try "
               "again.")
    st.button("Try again", icon=":material/refresh:", key="_unavailable_retry")  # a click reruns the page


def unknown_session_notice() -> None:
    """A friendly message for a missing, malformed or unknown token, with a way to start."""
    st.error("We could not find your session. The link may be incomplete or out of date.")
    st.page_link(PAGES["consent"], label="Start the study", icon=":material/arrow_forward:", query_params={})


def abandoned_notice(session: Session) -> None:
    """For a session given up after nothing was recorded for a long time: start again (nothing is lost). A
    participant from a recruiting platform starts again with their ids (one participant, one session still
    holds: the abandoned session no longer counts); an invited one from their personal link."""
    st.info("This session has expired: nothing was recorded for it for a long time, so its place went to "
            "someone else. You can start the study again.", icon=":material/schedule:")
    if session.meta.get("invited") is True:
        st.markdown("Please open your personal invitation link again to start.")
        return
    again = {name: str(session.meta[name.lower()]) for name in EXTERNAL_ID_PARAMS if session.meta.get(name.lower())}
    st.page_link(PAGES["consent"], label="Start the study", icon=":material/arrow_forward:", query_params=again)


@dataclass
class Context:
    """What a question page needs: the study, the store, the session, its current step and its plan."""

    loaded: LoadedStudy
    store: Store
    session: Session
    step: Step
    questions: list[Question]


def enter(page: str, block: str | None = None) -> Context:
    """Guard of every screen after consent (``survey`` or ``done``): valid session, study not ended, right
    screen for the step.

    ``block`` (a task id) is given by a rerun of the question fragment: when the session no longer stands
    in that task (its last question was answered, or the study is done), the whole app reruns instead, and
    that run draws the page-level parts (the next task's instructions and layout) or switches to the done
    screen. (A switch straight from the fragment would save that run, but a fragment run does not run
    ``st.navigation``, and AppTest then cannot resolve the page.)
    """
    loaded, store = load()
    try:
        state, session, progress = store.snapshot(token())  # one read transaction per page run
    except Unavailable as exc:  # the database server is restarting or unreachable: expected, one line in the log
        log.warning("page %s: %s", page, exc)
        unavailable_notice()
        st.stop()
    if state == "ended":
        ended_notice()
        st.stop()
    if session is None:
        unknown_session_notice()
        st.stop()
    if session.status == "abandoned":  # nothing was recorded for it for a long time (Store.abandon_idle)...
        revived = store.revive_abandoned(session.session_id)  # ... unless an answer came after all: it goes on
        if revived is None:
            abandoned_notice(session)
            st.stop()
        session = revived
    step, questions = step_of(loaded, store, session, progress)
    if block is not None and (screen(step) != page or step.task is None or step.task.id != block
                              or pause_due(loaded.study, step, _dismissed_pause(session))):
        st.rerun(scope="app")
    if screen(step) != page:
        go(step, session.session_id)
    return Context(loaded, store, session, step, questions)


@contextmanager
def calm_errors(page: str) -> Iterator[None]:
    """Run a page (or a fragment of one) so that an evaluator never sees a traceback: an unreachable database
    shows its notice, anything unexpected a calm message; the details go to the server log.

    Streamlit's own control flow (``st.stop``, ``st.rerun``, ``st.switch_page``) passes through: it is not an
    ``Exception``.
    """
    try:
        yield
    except Unavailable as exc:  # the database server is restarting or unreachable: nothing is lost, a retry works
        log.warning("page %s: %s", page, exc)
        unavailable_notice()
    except Exception:  # never a traceback on an evaluator's screen
        log.exception("unexpected error on page %s", page)
        st.error("Something went wrong on our side. Your answers so far are saved: please reload the page to "
                 "continue where you left off.")


def question(ctx: Context) -> None:
    """Draw the current question with its kind's renderer (``pages/tasks/<kind>.py``) inside a fragment.

    A click inside it (an answer, a picked item, a score) reruns only the fragment: its callbacks run first
    (the answer is stored), then the fragment reads the session's progress again and draws the next question
    of the same task, progress bar included. When the task's block is over, or the session belongs on
    another screen, the fragment asks for a full run instead (see :func:`enter`).
    """
    assert ctx.step.task is not None
    _question_fragment(ctx.step.task.id, [ctx])


@st.fragment
def _question_fragment(block: str, first: list[Context]) -> None:
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
                    flash("warning", feedback_text(pending))
                offer_skip = pending.skippable
        renderer(ctx.step.kind)(ctx)
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


# ----------------------------------------------------------------------------- rendering


def text_card(label: str, text: str) -> None:
    """A bordered card with our label and untrusted text rendered as plain text (no markdown, no HTML).

    The card stretches to the height of its row, so cards side by side are equally tall.
    """
    with st.container(border=True, height="stretch"):
        st.markdown(f"**{label}**")
        st.text(text)


def key_class(key: str) -> str:
    """The CSS class Streamlit's frontend gives the element with widget or container key ``key``: "st-key-" and
    the key with every character outside ``[a-zA-Z0-9_-]`` replaced by "-" (a task id may hold a ".")."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def review_cards(question: Question, noun: str = "Review", *, topic: str | None = None, style: str = "") -> None:
    """The question's texts as equally tall bordered cards "Review A", "Review B", ... side by side (one
    under another on a narrow screen), drawn as one element, with a caption line ``topic`` above them if
    given; ``style`` is more CSS sent with it (e.g. the layout of the widget under the cards): ours only,
    never built from untrusted text.

    One ``st.html`` instead of columns holding a label and an ``st.text`` each: ten elements become one, and
    each element counts when a question is answered (README "Performance"). The texts are untrusted: each
    is HTML-escaped (so it reaches the page as text, never as markup; Streamlit's DOMPurify pass on
    ``st.html`` is a second guard) and shown with its line breaks and spaces, as ``st.text`` shows it.
    """
    st.html(cards_html([f"{noun} {label}" for label in question.labels], question.texts, topic, style))


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


def review_columns(question: Question, noun: str = "Review") -> list[Any]:
    """The question's texts as cards side by side, each in a column of its own (stacked on narrow screens),
    so a widget drawn ``with`` a column sits under its card, outside the border (on a phone too). Returns
    the columns; see :func:`widgets_under_cards`."""
    columns = st.columns(len(question.texts), gap="small")
    for column, label, text in zip(columns, question.labels, question.texts, strict=True):
        with column:
            text_card(f"{noun} {label}", text)
    return columns


def item_card(question: Question, label: str = "Input") -> None:
    """An items question's title and input, above its outputs, as plain text in a card headed ``label`` (the
    task's ``input_label``, default "Input")."""
    if question.title is None and question.input is None:
        return
    with st.container(border=True, key="item-input"):
        st.markdown(f"**{label}**")  # the researcher's (config), like the task's question
        if question.title is not None:
            with st.container(key="item-title"):  # bold by our CSS: the title itself stays plain text
                st.text(question.title)
        if question.input is not None:
            st.text(question.input)
    st.html("<style>.st-key-item-title [data-testid='stText'] {font-weight: 600;}</style>")


def item_question_header(ctx: Context, question_text: str) -> None:
    """The head of a question of the items kinds (compare, score, rank, realfake): task, "Question i of n"
    and overall progress, the task's question, the topic (texts from the review pools) and the input."""
    question = ctx.step.question
    assert question is not None
    progress_header(ctx.step)
    st.subheader(question_text, anchor=False)
    topic = topic_line(ctx, question)
    if topic is not None:
        st.caption(topic)
    item_card(question, getattr(ctx.step.task, "input_label", "Input"))


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


def _align_choice_css(key: str, n: int, extra_row: bool = False) -> str:
    """CSS laying the radio options of widget ``key`` out as ``n`` equal columns, each under its card; with
    ``extra_row``, the option after the n (e.g. "No preference") gets a row of its own under them.

    Plain CSS scoped to the widget's key class (``st-key-<key>``); the key carries no source names.
    """
    last = f" .{key_class(key)} [role='radiogroup'] > label:nth-child({n + 1}) {{grid-column: 1 / -1;}}" \
        if extra_row else ""
    return (f".{key_class(key)} [role='radiogroup'] {{display: grid; "
            f"grid-template-columns: repeat({n}, minmax(0, 1fr)); column-gap: 1rem;}}{last}")


def choice_form(question: Question, key: str, label: str, noun: str, on_submit: Callable[[], None], *,
                tie: str | None = None, topic: str | None = None, missing: str | None = None) -> None:
    """The cards and, in the same form right under them, one option per card (labelled like its card,
    nothing preselected; with ``tie``, one more option of that text, stored as ``"tie"``), then "Next",
    which saves in ``on_submit`` (a callback reading ``st.session_state[key]``).

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
                     style=_align_choice_css(key, len(question.labels), extra_row=bool(tie))
                     + (clear_mark_css(key) if marked else ""))
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

    def submit(button: str) -> None:
        value = st.session_state.get(key, 0)
        safe_save(lambda: record_slider(ctx.store, ctx.session, question, int(value), button, elapsed_ms(clock)))

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


def progress_header(step: Step, what: str = "Question") -> None:
    """Task and question numbers plus an overall progress bar, as one element: the task's line (grey) above
    the bar's own text (each element counts when a question is answered, README "Performance")."""
    assert step.task is not None
    fraction, text = progress_label(step, what)
    st.progress(fraction, text=f":gray[Task {step.task_number} of {step.n_tasks} · {bracket_safe(step.task.title)}]"
                               f"  \n{text}")


def bracket_safe(text: str) -> str:
    """``text`` (the researcher's, e.g. a task title) ready to stand inside a markdown directive such as
    ``:gray[...]``: one line, its backslashes and square brackets escaped, so it cannot close the directive
    early or leave it open (other markdown in it stays markdown, as in any caption)."""
    return re.sub(r"([\\\[\]])", r"\\\1", " ".join(text.splitlines()))


def _dismissed_pause(session: Session) -> int | None:
    """The judgment count at which this browser session last clicked "Continue" on a break screen."""
    return st.session_state.get("_pause_dismissed", {}).get(session.session_id)


def pause_gate(ctx: Context) -> None:
    """The "take a short break" screen after every ``[study.session] pause_every`` judgments (see
    :func:`evalkit.survey.pause_due`), until the evaluator clicks "Continue". The count comes from the stored
    answers; the click is kept in this browser session, so a reload at that moment shows the break again."""
    if not pause_due(ctx.loaded.study, ctx.step, _dismissed_pause(ctx.session)):
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


def flash(kind: str, message: str) -> None:
    """Queue a message for the next run (callbacks cannot render)."""
    st.session_state["_flash"] = (kind, message)


def show_flash() -> None:
    """Render and clear the queued message, if any."""
    item = st.session_state.pop("_flash", None)
    if item:
        kind, message = item
        {"error": st.error, "warning": st.warning, "info": st.info, "success": st.success}[kind](message)


def feedback_text(feedback: CheckFeedback) -> str:
    """What a wrong answer to a check question with feedback shows, next to its button."""
    then = ("Change your answer and try again, or skip this practice question below." if feedback.skippable
            else "Please change your answer and try again.")
    return f"**Not quite.** {feedback.feedback} {then}"


def safe_save(save: Callable[[], Any]) -> None:
    """Run a save from a callback: evaluator mistakes become a message, never a traceback."""
    try:
        save()
    except CheckFeedback as exc:  # a wrong try at a check question with feedback: stored as a try, shown here
        flash("warning", feedback_text(exc))
    except SurveyError as exc:  # an answer missing or incomplete: what is missing is yellow (README "Messages")
        flash("warning", str(exc))
    except AnswerConflict:
        flash("info", "This question had already been answered, so your first answer was kept.")
    except Unavailable as exc:  # expected during a database restart: one line in the log, the same message
        log.warning("saving an answer failed: %s", exc)
        flash("error", "Your answer could not be saved. Please try again in a moment.")
    except Exception:  # logged; the evaluator gets a calm message and can retry
        log.exception("saving an answer failed")
        flash("error", "Your answer could not be saved. Please try again in a moment.")


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


MARK_KEY = "why-mark"  # the class prefix of every "what is missing" mark (see missing_mark / reveal_first_mark)


def missing_mark(message: str, key: str) -> None:
    """A "what is missing" mark right under its widget (``key``: unique on the page, e.g. the widget's own key).

    Yellow (``st.warning``), like every "what is missing" message; failures are red (README "Messages"). Drawn
    in a keyed container, so :func:`reveal_first_mark` can find the first one on the page and
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


def hide_slider_ticks(key: str) -> str:
    """CSS hiding Streamlit's own "min ... max" row, which it shows under a slider on hover or focus, for the
    slider ``key``: the page draws its own row of ends (one row, not two)."""
    return f".{key_class(key)} [data-testid='stSliderTickBar'] {{display: none;}}"


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


# ----------------------------------------------------------------------------- login throttle (results page)

_sleep = time.sleep  # tests replace these to observe the waits without waiting
_clock = time.monotonic


@st.cache_resource
def login_limiter() -> LoginLimiter:
    """One limit on password guesses for every browser session of this process (see evalkit.login_limit):
    5 guesses at once, then one every 2 s overall; nobody waits more than 1.5 s (else: try again shortly)."""
    return LoginLimiter(burst=5, interval=2.0, max_wait=1.5, clock=lambda: _clock(), sleep=lambda s: _sleep(s))
