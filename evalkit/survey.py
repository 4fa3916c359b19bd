"""The evaluator's flow, independent of any UI: where a session stands and how answers are stored.

Pages call these functions and render the result; nothing here imports
Streamlit. Progress always comes from the store (the source of truth), the
plan from :func:`evalkit.sampling.plan`, so a refresh, a second tab or a
restarted server resume at the first unanswered question.

Floor: app services (``.importlinter``). May import the planner's vocabulary (:mod:`evalkit.question`), the study
(config, checks), the task kinds and the core; never the queue (which imports this module), the analysis or the
command line.
"""

from __future__ import annotations

import hmac
import json
import math
import re
import time
import urllib.parse
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from .checks import completion_code, outcome_of, session_outcome
from .config import DONE_PLACEHOLDERS, Study, Task
from .question import Question
from .store import Participant, Progress, Session, Store
from .tasks import kind_of
from .tasks.base import SurveyError
from .tasks.rating import dot_graph, finish_rating, missing_scores, record_item_rating
from .tasks.responses import SLIDER_BUTTONS, record_choice, record_slider
from .text import markdown_literal

__all__ = [
    "EXTERNAL_ID_PARAMS",
    "LIMITS",
    "SLIDER_BUTTONS",
    "Step",
    "SurveyError",
    "completion_link",
    "current_step",
    "done_text",
    "dot_graph",
    "finish_rating",
    "finish_session",
    "judged",
    "limit_reached",
    "missing_scores",
    "on_session_end",
    "outcome_of",
    "participant_resume",
    "pause_due",
    "pause_text",
    "progress_label",
    "record_choice",
    "record_item_rating",
    "record_slider",
    "redirect_script",
    "session_step",
    "sweep_abandoned",
]

#: Crowdsourcing query parameters captured on the consent page (Prolific's names).
EXTERNAL_ID_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


@dataclass(frozen=True)
class Step:
    """The screen a session should see now.

    ``index`` is the question index within the task (for a rating block: the
    index the next rating gets). ``answered`` / ``total`` give overall progress:
    a rating block counts its ``min_items`` plus one step for finishing it, so
    the study reaches ``total`` only when nothing is left to do. ``judged``: the
    judgments made so far (see :func:`judged`); ``limit``: on a ``done`` step,
    ``"time"`` or ``"questions"`` when a ``[study.session]`` limit ended the
    session before its last step (see :func:`session_step`), else None.
    """

    kind: str  # the task's kind, or "done"
    task: Task | None
    task_number: int
    n_tasks: int
    index: int
    question: Question | None
    n_questions: int
    answered: int
    total: int
    rated: Mapping[int, str]
    judged: int = 0
    limit: str | None = None


#: Why a ``[study.session]`` limit ended a session (stored as ``meta["limit"]`` when it completes).
LIMITS = ("time", "questions")


def judged(questions: Sequence[Question], progress: Progress) -> int:
    """The judgments a session has made: its stored answers (attention checks included) and rated items,
    without the practice (tutorial) questions; forms store no answers or ratings, so they never count."""
    tutorial = {(q.task, q.index) for q in questions if q.check is not None and q.check.type == "tutorial"}
    answers = sum(1 for task, done in progress.answered.items() for i in done if (task, i) not in tutorial)
    return answers + sum(len(rated) for rated in progress.rated.values())


def current_step(study: Study, questions: Sequence[Question], progress: Progress) -> Step:
    """The first open step of the first unfinished task, or ``done``; each task's kind counts its own steps.

    No ``[study.session]`` limit is applied here: :func:`session_step` does that."""
    by_task: dict[str, list[Question]] = {}
    for q in questions:
        by_task.setdefault(q.task, []).append(q)
    total = answered = 0
    for task in study.tasks:
        steps, done = kind_of(task.kind).progress(task, by_task.get(task.id, []), progress)
        total, answered = total + steps, answered + done
    n_tasks = len(study.tasks)
    made = judged(questions, progress)
    for number, task in enumerate(study.tasks, start=1):
        found = kind_of(task.kind).next_question(task, by_task.get(task.id, []), progress)
        if found is not None:
            index, question, n_questions, rated = found
            return Step(task.kind, task, number, n_tasks, index, question, n_questions, answered, total, rated, made)
    return Step("done", None, n_tasks, n_tasks, 0, None, 0, answered, total, {}, made)


def _started(session: Session) -> datetime:
    started = datetime.fromisoformat(session.started_at)
    return started if started.tzinfo is not None else started.replace(tzinfo=UTC)


def limit_reached(study: Study, session: Session, made: int, now: datetime) -> str | None:
    """Which ``[study.session]`` limit this session has reached at ``now`` (an aware datetime): ``"time"`` once
    ``max_minutes`` have passed since it started, ``"questions"`` once it has made ``questions`` judgments
    (``made``, see :func:`judged`), else None. Time is checked first."""
    limits = study.session
    if limits.max_minutes is not None and now - _started(session) >= timedelta(minutes=limits.max_minutes):
        return "time"
    if limits.questions is not None and made >= limits.questions:
        return "questions"
    return None


def session_step(study: Study, session: Session, questions: Sequence[Question], progress: Progress,
                 now: datetime | None = None) -> Step:
    """:func:`current_step` with the ``[study.session]`` limits applied: when a limit is reached while steps are
    still open, the remaining steps are skipped and the step is ``done`` with ``limit`` set (what was answered
    before stays stored: the answer just given is saved by its callback before this runs). A session that was
    completed by a limit stays there. ``now`` (default: the current time) is injectable for tests."""
    step = current_step(study, questions, progress)
    stored = session.meta.get("limit") if session.completed_at else None
    if step.kind == "done":
        return replace(step, limit=stored if stored in LIMITS else None)
    limit = stored if stored in LIMITS else limit_reached(study, session, step.judged, now or datetime.now(UTC))
    if limit is None:
        return step
    return Step("done", None, step.n_tasks, step.n_tasks, 0, None, 0, step.answered, step.total, {}, step.judged,
                limit)


def pause_due(study: Study, step: Step, dismissed: int | None) -> bool:
    """Whether to show the "take a short break" screen now: after every ``pause_every`` judgments (see
    :func:`judged`), while a question is next (not on the done screen, not before a form), unless the
    evaluator already dismissed the break at this count (``dismissed``: the count they last clicked
    "Continue" at, kept by the page). The count comes from the stored answers, so a reload keeps it."""
    every = study.session.pause_every
    if not every or step.kind in ("done", "form") or step.judged == 0:
        return False
    return step.judged % every == 0 and dismissed != step.judged


def pause_text(study: Study, step: Step) -> str:
    """The break screen's text (markdown): how far the evaluator is, that the answers are saved, and, with a
    time limit, that the break counts towards it."""
    limits = study.session
    noun = "question" if step.judged == 1 else "questions"
    of = (f" of at most {limits.questions}" if limits.questions is not None else "")
    lines = [f"You have answered **{step.judged}{of} {noun}** so far, and all your answers are saved.",
             "Look away from the screen for a moment, stretch, and continue when you are ready."]
    if limits.max_minutes is not None:
        lines.append(f"(The study ends after {limits.max_minutes} minutes at most, breaks included.)")
    return "\n\n".join(lines)


def progress_label(step: Step, what: str = "Question") -> tuple[float, str]:
    """The overall fraction done (1.0 only on the ``done`` step) and the progress bar's text.

    For a rating block the text says how many items are still required, or
    that the next one is optional once ``min_items`` are rated. The percentage
    is rounded down, so "100%" appears only when nothing is left.
    """
    fraction = step.answered / step.total if step.total else 1.0
    fraction = 1.0 if step.kind == "done" else min(fraction, 1.0)
    if step.task is None:
        label = "Finished"
    else:
        label = kind_of(step.kind).step_label(step.task, step.index, step.n_questions, len(step.rated), what)
    percent = 100 if step.kind == "done" else min(math.floor(100 * fraction), 99)
    return fraction, f"{label} · {percent}% of the study done"


ResumeDecision = Literal["start", "resume", "refuse"]


def participant_resume(earlier: Session | None, external: Mapping[str, str]) -> ResumeDecision:
    """What to do when a link without a session token carries a participant id (``PROLIFIC_PID``).

    A participant id is not a secret (it shows up in exports, messages, screenshots), so it alone never
    hands a session to a browser: ``resume`` only when the link's Prolific ``SESSION_ID`` equals the one
    stored when that session started (Prolific puts the same ``SESSION_ID`` in the link every time the
    participant opens this study from their dashboard). ``start`` when no session has this participant
    id; ``refuse`` otherwise (one participant, one session): the page tells them to use their own link.
    """
    if earlier is None:
        return "start"
    given = external.get("SESSION_ID", "")
    stored = str(earlier.meta.get("session_id", ""))
    if given and stored and hmac.compare_digest(given.encode(), stored.encode()):
        return "resume"
    return "refuse"


def completion_link(study: Study, code: str) -> str | None:
    """The configured completion URL with ``{code}`` filled in (URL-encoded), or None."""
    if not study.completion_url:
        return None
    return study.completion_url.replace("{code}", urllib.parse.quote(code, safe=""))


def finish_session(store: Store, study: Study, session_id: str, limit: str | None = None,
                   questions: Sequence[Question] | None = None, participant: Participant | None = None) -> Session:
    """Complete a session (idempotent) with the code its outcome earns (:func:`evalkit.checks.session_outcome`,
    :func:`evalkit.checks.completion_code`): ``completion_code_pass`` when it passed, ``completion_code_fail``
    when it failed its attention checks or ended without the work its plan asked for, ``completion_code_full``
    (or no code) when it could not get work because the queue was full, a per-session code when the study has
    no code for that outcome. The first completion decides and is stored (``sessions.completion_code``, and
    ``meta["outcome"]``, one of :data:`evalkit.checks.OUTCOMES`); later visits get the same code.

    ``questions`` (the session's plan; the done page always gives it): with it, the pass code also needs every
    attention check of the plan answered and at least one judgment. ``limit`` (``"time"`` / ``"questions"``,
    from :func:`session_step`): a ``[study.session]`` limit ended the session early. The evaluator is not at
    fault, so the checks it did not reach are not asked for, and ``meta["limit"]`` records why it ended, in the
    same transaction. Then :func:`on_session_end` runs. ``participant``: whose own codes apply (default: the
    invited participant the session was started by, as stored)."""
    if limit is not None and limit not in LIMITS:
        raise ValueError(f"limit must be one of {LIMITS} or None, got {limit!r}")
    progress = store.progress(session_id) if questions is not None else None
    outcome = session_outcome(store.answers(session_id), study.max_failed_checks, questions, progress, limit)
    meta: dict[str, str] = {"limit": limit} if limit else {}
    if questions is not None:
        meta["outcome"] = outcome.status
    if participant is None:  # (given: a moved campaign's user, finished before anyone is invited here)
        earlier = store.get_session(session_id)
        invited = earlier.participant_id if earlier is not None else None
        participant = store.participant(invited) if invited else None
    session = store.complete_session(session_id, completion_code(study, outcome, participant), meta=meta or None)
    on_session_end(store, session, failed=(outcome_of(session) or outcome.status) == "failed")
    return session


#: how often one process looks for abandoned sessions (:func:`sweep_abandoned`), in seconds
ABANDON_SWEEP_SECONDS = 60.0
_last_sweep: weakref.WeakKeyDictionary[Store, float] = weakref.WeakKeyDictionary()


def sweep_abandoned(store: Store, study: Study, *, now: float | None = None) -> list[str]:
    """Mark sessions with nothing recorded ``[study.session] abandon_minutes`` after their start as abandoned
    (:meth:`Store.abandon_idle`): at most once a minute per store in this process (the consent page calls it on
    every visit; when there is nothing to do, the look-up is one read). Returns the tokens abandoned."""
    minutes = study.session.abandon_minutes
    at = time.monotonic() if now is None else now
    if not minutes or at - _last_sweep.get(store, -math.inf) < ABANDON_SWEEP_SECONDS:
        return []
    _last_sweep[store] = at
    return store.abandon_idle(minutes * 60)


def on_session_end(store: Store, session: Session, *, failed: bool = False) -> None:
    """Run whenever a session reaches the done screen (completed normally or ended by a limit; on every visit,
    so what it does is idempotent). ``session.meta.get("limit")`` says whether a limit ended it.

    Gives the session's unanswered claims in k-per-item queues back at once (``judgments_per_item``; a session
    ended by a limit may hold one) instead of after the task's ``claim_minutes``. A session that ``failed`` its
    attention checks gives its answered claims back too: its answers stay stored (and are left out of the
    statistics by default), and its units go back to the queue, so each still gets k judgments from
    evaluators who passed."""
    store.release_claims(session.session_id, answered=failed)


def done_text(limit: object, outcome: str = "", *, message: str = "", code: str = "", participant: str = "") -> str:
    """The done screen's text (Markdown): the usual thanks, or, when a ``[study.session]`` limit ended the session
    (``limit`` from its meta), that the limit was reached and the answers are saved; for a session that could
    not get work (``outcome`` ``"full"``), that the study filled up and to return it.

    ``message`` (``[study] done_message``, the researcher's Markdown) replaces the usual thanks, and follows the
    line about a limit; a full study's text stays as it is. Its placeholders (:data:`evalkit.config.DONE_PLACEHOLDERS`:
    ``${TOKEN}`` / ``{code}``, ``${USER_ID}`` / ``{participant}``) become ``code`` and ``participant``, escaped so
    that they show as typed (never as Markdown), in one pass (a value holding a placeholder stays as it is)."""
    if outcome == "full":
        return ("Thank you for your time. Every text in this study already has all the judgments it needs, so "
                "there is nothing left for you to do.")
    if message:
        values = {"code": markdown_literal(code), "participant": markdown_literal(participant)}
        filled = _PLACEHOLDER.sub(lambda m: values[DONE_PLACEHOLDERS[m.group(0)]], message)
        return filled if limit not in ("time", "questions") else f"{done_text(limit)}\n\n{filled}"
    if limit == "time":
        return ("Thanks - you reached the time limit of this study, so it ends here; your answers are saved. "
                "You can close this page.")
    if limit == "questions":
        return ("Thanks - you have answered all the questions this study asks of one person; your answers are "
                "saved. You can close this page.")
    return "You have finished the study and all your answers are saved. You can close this page."


#: one of ``[study] done_message``'s placeholders
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in DONE_PLACEHOLDERS))


def redirect_script(link: str, seconds: int) -> str:
    """A small script that opens ``link`` in the whole window after ``seconds`` (the done screen's automatic
    return to the platform). The link is written as a JSON string with ``<`` escaped, so it cannot end the
    script."""
    target = json.dumps(link).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<span class="evalkit-redirect"></span><script>setTimeout(() => {{ window.top.location.assign({target}); '
            f"}}, {int(seconds) * 1000});</script>")
