"""How a question is answered by a choice: a choice among its texts (triplet, pairwise, compare), with
"no preference" (compare), or the HELP slider (pairwise, compare). Each function validates the answer on
the server, looks the chosen text's source up server-side, and stores the answer exactly once.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..missing import either
from ..question import Question, question_columns
from .base import SurveyError
from .check_answers import record_check
from .media_log import with_media

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..store import Answer, Session, Store

__all__ = ["SLIDER_BUTTONS", "SLIDER_LABELS", "TIE", "TIE_LABEL", "card_noun", "choice_missing", "in_sentence",
           "plural", "question_columns", "record_choice", "record_slider", "save_answer"]

SLIDER_BUTTONS = ("accept", "reject")
#: The HELP slider's buttons as the page labels them. The HELP protocol: at 0 (no preference) "accept" records a
#: positive draw (both texts suitable) and "reject" a negative one (both unsuitable); away from 0 the slider says
#: which text is better and the button is stored with it.
SLIDER_LABELS = {"accept": "Accept: both are suitable", "reject": "Reject: both are unsuitable"}


#: The stored response of "no preference" (a compare task with ``response = "choice-tie"``).
TIE = "tie"
#: ... and how that option is labelled on the page.
TIE_LABEL = "No preference"


def card_noun(question: Question) -> str:
    """What the page calls each text of a question by default: "Review" (triplet, pairwise), else "Response" (a
    task over an items file names its own with ``output_label``)."""
    return "Review" if question.kind in ("triplet", "pairwise") else "Response"


def in_sentence(label: str) -> str:
    """A card label inside a sentence: "Response" -> "response", "LLM answer" stays as it is (an acronym)."""
    return label[:1].lower() + label[1:] if label[1:2].islower() or len(label) == 1 else label


def plural(label: str) -> str:
    """The plural of a card label ("Response" -> "Responses", "Reply" -> "Replies", "Summary" -> "Summaries",
    "News text" -> "News texts"): English's regular endings, which every label of the examples follows."""
    if label.endswith("y") and label[-2:-1].lower() not in tuple("aeiou"):
        return label[:-1] + "ies"
    if label.endswith(("s", "x", "z", "ch", "sh")):
        return label + "es"
    return label + "s"


def save_answer(store: Store, session: Session, question: Question, response: str, *,
                review_source: str | None, time_spent_ms: int | None, detail: dict | None = None,
                spans: Sequence[Mapping[str, Any]] = ()) -> Answer:
    """Store a validated answer exactly once, with the question's columns (:func:`question_columns`). A tutorial
    or attention-check question goes through :func:`evalkit.checks.record_check`, which decides on the server
    whether it was right (and may raise :class:`~evalkit.checks.CheckFeedback` instead of storing it). ``spans``:
    the answer's rows of the ``spans`` table (kind ``spans``), stored in the answer's transaction."""
    if question.check is not None:
        return record_check(store, session, question, response, review_source=review_source,
                            time_spent_ms=time_spent_ms, detail=dict(detail or {}), columns=question_columns(question),
                            spans=spans)
    return store.record_answer(session.session_id, question.task, question.index, response,
                               review_source=review_source, time_spent_ms=time_spent_ms, detail=detail,
                               spans=spans, **question_columns(question))


def choice_missing(question: Question, *, ties: bool = False, noun: str | None = None) -> str:
    """The message of a click with no option chosen, naming the options as the page labels them ("Please
    choose one of the responses (Response A or Response B) before continuing."); ``noun``: the cards' label
    (a task's ``output_label``), default :func:`card_noun`."""
    noun = noun or card_noun(question)
    options = [f"{noun} {label}" for label in question.labels] + ([TIE_LABEL] if ties else [])
    return f"Please choose one of the {in_sentence(plural(noun))} ({either(options)}) before continuing."


def record_choice(store: Store, session: Session, question: Question, label: str | None,
                  time_spent_ms: int | None, *, ties: bool = False, noun: str | None = None, media: Any = None,
                  full_play: bool = False, input_label: str = "Input") -> Answer:
    """Store a choice among a question's texts: the chosen display label (A, B, C...), or ``"tie"`` when
    ``ties`` allows "no preference".

    The chosen text's source is looked up here, server-side, and stored as
    ``review_source`` (None for a tie); for pairs the left/right sources are stored too. ``media``: the play log
    of the question's clips as the page sent it (``detail["media"]``, :mod:`evalkit.tasks.media_log`); with
    ``full_play`` (``require_full_play``) the answer is refused until each clip was played to the end.
    """
    if ties and label == TIE:
        return save_answer(store, session, question, TIE, review_source=None, time_spent_ms=time_spent_ms,
                           detail=with_media(question, None, media, full_play=full_play, noun=noun or "Response",
                                             input_label=input_label))
    if label is None or label not in question.labels:
        raise SurveyError(choice_missing(question, ties=ties, noun=noun))
    return save_answer(store, session, question, label, review_source=question.source_of(label),
                       time_spent_ms=time_spent_ms,
                       detail=with_media(question, None, media, full_play=full_play, noun=noun or card_noun(question),
                                         input_label=input_label))


def record_slider(store: Store, session: Session, question: Question, value: int, button: str,
                  time_spent_ms: int | None, *, media: Any = None, full_play: bool = False, noun: str = "Response",
                  input_label: str = "Input") -> Answer:
    """Store a HELP-protocol slider answer for a pair.

    ``value`` runs from -100 (left text entirely better) to +100 (right text
    entirely better). ``button`` is ``accept`` (both texts are suitable) or
    ``reject`` (both are unsuitable); at 0 they make a positive or a negative
    draw. ``response`` is the signed value; ``detail`` holds the button and the
    outcome (``left`` / ``right`` / ``positive_draw`` / ``negative_draw``);
    ``review_source`` is the preferred text's source (None for a draw). ``media``, ``full_play``: as for
    :func:`record_choice`.
    """
    if len(question.sources) != 2:
        raise SurveyError("The slider is only for pairs.")
    if button not in SLIDER_BUTTONS:
        raise SurveyError(f"Unknown button {button!r}.")
    if isinstance(value, bool) or not isinstance(value, int) or not -100 <= value <= 100:
        raise SurveyError("The slider value must be a whole number from -100 to 100.")
    if value < 0:
        outcome, preferred = "left", question.sources[0]
    elif value > 0:
        outcome, preferred = "right", question.sources[1]
    else:
        outcome, preferred = ("positive_draw" if button == "accept" else "negative_draw"), None
    detail = with_media(question, {"button": button, "outcome": outcome}, media, full_play=full_play, noun=noun,
                        input_label=input_label)
    return save_answer(store, session, question, str(value), review_source=preferred, time_spent_ms=time_spent_ms,
                       detail=detail)
