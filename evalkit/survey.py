"""The evaluator's flow, independent of any UI: where a session stands and how answers are stored.

Pages call these functions and render the result; nothing here imports
Streamlit. Progress always comes from the store (the source of truth), the
plan from :func:`evalkit.sampling.plan`, so a refresh, a second tab or a
restarted server resume at the first unanswered question.
"""

from __future__ import annotations

import hmac
import json
import math
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .checks import completion_code, session_outcome
from .config import Study, Task
from .sampling import Question
from .store import Progress, Session, Store
from .tasks import kind_of
from .tasks.base import SurveyError
from .tasks.rating import dot_graph, finish_rating, missing_scores, record_item_rating
from .tasks.responses import SLIDER_BUTTONS, record_choice, record_slider

__all__ = [
    "EXTERNAL_ID_PARAMS",
    "SLIDER_BUTTONS",
    "Step",
    "SurveyError",
    "completion_link",
    "current_step",
    "dot_graph",
    "finish_rating",
    "finish_session",
    "missing_scores",
    "participant_resume",
    "progress_label",
    "record_choice",
    "record_item_rating",
    "record_slider",
    "redirect_script",
]

#: Crowdsourcing query parameters captured on the consent page (Prolific's names).
EXTERNAL_ID_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


@dataclass(frozen=True)
class Step:
    """The screen a session should see now.

    ``index`` is the question index within the task (for a rating block: the
    index the next rating gets). ``answered`` / ``total`` give overall progress:
    a rating block counts its ``min_items`` plus one step for finishing it, so
    the study reaches ``total`` only when nothing is left to do.
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


def current_step(study: Study, questions: Sequence[Question], progress: Progress) -> Step:
    """The first open step of the first unfinished task, or ``done``; each task's kind counts its own steps."""
    by_task: dict[str, list[Question]] = {}
    for q in questions:
        by_task.setdefault(q.task, []).append(q)
    total = answered = 0
    for task in study.tasks:
        steps, done = kind_of(task.kind).progress(task, by_task.get(task.id, []), progress)
        total, answered = total + steps, answered + done
    n_tasks = len(study.tasks)
    for number, task in enumerate(study.tasks, start=1):
        found = kind_of(task.kind).next_question(task, by_task.get(task.id, []), progress)
        if found is not None:
            index, question, n_questions, rated = found
            return Step(task.kind, task, number, n_tasks, index, question, n_questions, answered, total, rated)
    return Step("done", None, n_tasks, n_tasks, 0, None, 0, answered, total, {})


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


def finish_session(store: Store, study: Study, session_id: str) -> Session:
    """Complete a session (idempotent) with the code its outcome earns: ``completion_code_pass`` when it passed
    its attention checks (:func:`evalkit.checks.session_outcome`), ``completion_code_fail`` when it failed, a
    per-session code when the study has no code for that outcome. The first completion decides and is stored
    (``sessions.completion_code``); later visits get the same code."""
    outcome = session_outcome(store.answers(session_id), study.max_failed_checks)
    session = store.complete_session(session_id, completion_code(study, outcome))
    store.release_claims(session_id)  # judgments_per_item: an unanswered claim goes back to the queue at once
    return session


def redirect_script(link: str, seconds: int) -> str:
    """A small script that opens ``link`` in the whole window after ``seconds`` (the done screen's automatic
    return to the platform). The link is written as a JSON string with ``<`` escaped, so it cannot end the
    script."""
    target = json.dumps(link).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<span class="evalkit-redirect"></span><script>setTimeout(() => {{ window.top.location.assign({target}); '
            f"}}, {int(seconds) * 1000});</script>")
