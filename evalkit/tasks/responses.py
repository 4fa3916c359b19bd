"""How a question drawn from the review pools is answered: a choice among its texts (triplet, pairwise),
or the HELP slider (pairwise). Each function validates the answer on the server, looks the chosen text's
source up server-side, and stores the answer exactly once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import Answer, Session, Store
from .base import SurveyError

if TYPE_CHECKING:
    from ..sampling import Question

__all__ = ["SLIDER_BUTTONS", "record_choice", "record_slider"]

SLIDER_BUTTONS = ("accept", "reject")


def _common(question: Question) -> dict:
    return {"kind": question.kind, "slot": question.slot, "domain": question.domain,
            "sources": list(question.sources), "item_ids": list(question.review_ids), "matched": question.matched}


def _sides(question: Question) -> dict:
    if question.kind != "pairwise":
        return {}
    return {"left_source": question.sources[0], "right_source": question.sources[1]}


def record_choice(store: Store, session: Session, question: Question, label: str | None,
                  time_spent_ms: int | None) -> Answer:
    """Store a triplet or forced-choice pairwise answer: the chosen display label (A, B, C...).

    The chosen text's source is looked up here, server-side, and stored as
    ``review_source``; for pairs the left/right sources are stored too.
    """
    if label is None or label not in question.labels:
        raise SurveyError("Please choose one of the reviews before continuing.")
    return store.record_answer(
        session.session_id, question.task, question.index, label, review_source=question.source_of(label),
        time_spent_ms=time_spent_ms, **_common(question), **_sides(question))


def record_slider(store: Store, session: Session, question: Question, value: int, button: str,
                  time_spent_ms: int | None) -> Answer:
    """Store a HELP-protocol slider answer for a pair.

    ``value`` runs from -100 (left text entirely better) to +100 (right text
    entirely better). ``button`` is ``accept`` (both texts are suitable) or
    ``reject`` (both are unsuitable); at 0 they make a positive or a negative
    draw. ``response`` is the signed value; ``detail`` holds the button and the
    outcome (``left`` / ``right`` / ``positive_draw`` / ``negative_draw``);
    ``review_source`` is the preferred text's source (None for a draw).
    """
    if question.kind != "pairwise":
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
    return store.record_answer(
        session.session_id, question.task, question.index, str(value), review_source=preferred,
        time_spent_ms=time_spent_ms, detail={"button": button, "outcome": outcome},
        **_common(question), **_sides(question))
