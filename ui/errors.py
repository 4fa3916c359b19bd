"""Calm errors and messages: the notices that stand instead of a screen (the study is ended, the database cannot
be reached, the session is unknown or expired), the guard that turns an unexpected error into a calm message
(:func:`calm_errors`), and the messages a save callback queues for the next run (:func:`flash`,
:func:`safe_save`).

May import: Streamlit, ``evalkit``'s public names and ``ui.navigation``; never ``pages``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from evalkit.checks import CheckFeedback, pending_feedback
from evalkit.question import Question
from evalkit.store import AnswerConflict, Session, Store, Unavailable
from evalkit.survey import EXTERNAL_ID_PARAMS, SurveyError
from evalkit.text import markdown_literal

from .navigation import PAGES

log = logging.getLogger("evalkit.app")


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


def flash(kind: str, message: str, plain: str | None = None) -> None:
    """Queue a message for the next run (callbacks cannot render): ``message`` in Markdown, ``plain`` the same words
    as plain text (for a custom component, which shows text, never Markdown); default ``message``."""
    st.session_state["_flash"] = (kind, message, message if plain is None else plain)


def show_flash() -> None:
    """Render and clear the queued message, if any."""
    item = st.session_state.pop("_flash", None)
    if item:
        kind, message = item[0], item[1]
        {"error": st.error, "warning": st.warning, "info": st.info, "success": st.success}[kind](message)


def take_flash() -> tuple[str, str] | None:
    """Clear the queued message and return it as (kind, plain text), for a widget that shows it itself (the span
    widget, right above its "Next"); None when there is none."""
    item = st.session_state.pop("_flash", None)
    return (item[0], item[2] if len(item) > 2 else item[1]) if item else None


def feedback_text(feedback: CheckFeedback) -> str:
    """What a wrong answer to a check question with feedback shows, next to its button."""
    then = ("Change your answer and try again, or skip this practice question below." if feedback.skippable
            else "Please change your answer and try again.")
    lines = "".join(f"\n- {label + ': ' if label else ''}{markdown_literal(line)}" for label, line in feedback.problems)
    return f"**Not quite.** {feedback.feedback} {then}{lines}"


def feedback_plain(feedback: CheckFeedback) -> str:
    """:func:`feedback_text` as plain text, one line per problem (for a widget that sets text, never Markdown)."""
    then = ("Change your answer and try again, or skip this practice question below." if feedback.skippable
            else "Please change your answer and try again.")
    lines = "".join(f"\n• {label + ': ' if label else ''}{line}" for label, line in feedback.problems)
    return f"Not quite. {feedback.feedback} {then}{lines}"


def practice_problems(store: Store, session: Session, question: Question) -> list[list[str]]:
    """A check question's pending feedback (its last try wrong: from the stored tries, so it survives a reload),
    split for the score and span widgets: the lines about one output, per output in display order (shown under its
    card or heading); the
    queued message (the feedback, as the save or the survey screen queued it) keeps the rest, the feedback and
    the lines about the whole question. Empty lists when there is no such feedback."""
    out: list[list[str]] = [[] for _ in question.texts]
    pending = pending_feedback(store, session, question) if question.check is not None else None
    if pending is None or not any(label in question.labels for label, _ in pending.problems):
        return out
    for label, line in pending.problems:
        if label in question.labels:
            out[question.labels.index(label)].append(line)
    rest = CheckFeedback(pending.feedback, skippable=pending.skippable,
                         problems=tuple(p for p in pending.problems if p[0] not in question.labels))
    queued = take_flash()
    if queued is not None and queued[1] != feedback_plain(pending):
        flash(*queued)  # another message (e.g. a refusal): put back as it was (its words are plain text)
    elif queued is not None:
        flash("warning", feedback_text(rest), feedback_plain(rest))
    return out


def safe_save(save: Callable[[], Any]) -> None:
    """Run a save from a callback: evaluator mistakes become a message, never a traceback."""
    try:
        save()
    except CheckFeedback as exc:  # a wrong try at a check question with feedback: stored as a try, shown here
        flash("warning", feedback_text(exc), feedback_plain(exc))
    except SurveyError as exc:  # an answer missing or incomplete: yellow (docs: evaluator-screens.md "Messages")
        flash("warning", str(exc))
    except AnswerConflict:
        flash("info", "This question had already been answered, so your first answer was kept.")
    except Unavailable as exc:  # expected during a database restart: one line in the log, the same message
        log.warning("saving an answer failed: %s", exc)
        flash("error", "Your answer could not be saved. Please try again in a moment.")
    except Exception:  # logged; the evaluator gets a calm message and can retry
        log.exception("saving an answer failed")
        flash("error", "Your answer could not be saved. Please try again in a moment.")
