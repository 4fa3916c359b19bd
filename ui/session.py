"""The evaluator's session and step: the session token in the URL, where a session stands (its step and its
plan), the screen each step belongs on, and the guard every screen after consent runs first (:func:`enter`,
which gives a :class:`Context`).

May import: Streamlit, ``evalkit``'s public names, ``ui.navigation``, ``ui.errors`` and ``ui.resources``; never
``pages``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import streamlit as st

from evalkit.balance import arrival_of
from evalkit.config import LoadedStudy
from evalkit.queue import resolve_step
from evalkit.sampling import PlanError, Question
from evalkit.store import Progress, Session, Store, Unavailable
from evalkit.survey import Step, pause_due

from .errors import abandoned_notice, ended_notice, unavailable_notice, unknown_session_notice
from .navigation import PAGES, TOKEN_PARAM
from .resources import cached_plan, load

log = logging.getLogger("evalkit.app")


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


def step_of(loaded: LoadedStudy, store: Store, session: Session,
            progress: Progress | None = None) -> tuple[Step, list[Question]]:
    """Where this session stands now (read from the database unless given) and its plan.

    The plan is kept in the browser session too: a lookup in ``st.cache_resource`` (hashing its arguments)
    costs about 0.2 ms, a noticeable part of answering a question."""
    arrival = arrival_of(session.meta)
    key = (loaded.version, session.seed, arrival, session.participant_id)
    held = st.session_state.get("_plan")
    if held is not None and held[0] == key:
        questions = held[1]
    else:
        try:
            questions = cached_plan(loaded.version, session.seed, arrival, loaded, session.participant_id)
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
                        hold=lambda step: pause_due(loaded.study, step, dismissed_pause(session))), questions


def dismissed_pause(session: Session) -> int | None:
    """The judgment count at which this browser session last clicked "Continue" on a break screen."""
    return st.session_state.get("_pause_dismissed", {}).get(session.session_id)


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
                              or pause_due(loaded.study, step, dismissed_pause(session))):
        st.rerun(scope="app")
    if screen(step) != page:
        go(step, session.session_id)
    return Context(loaded, store, session, step, questions)
