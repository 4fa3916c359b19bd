"""Unit tests of "what is missing" (issue 13, section 5): each decision names the widget by its label; bad and
borderline input (spaces, booleans, out-of-range places) included. The screens are in tests/apptest/test_why.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.missing import AGREE_LABEL, confirm_problem, consent_problems, either, login_problem
from evalkit.sampling import Question
from evalkit.tasks.rank import place_problems
from evalkit.tasks.rating import RatingTask, disabled_buttons_note, finish_allowed
from evalkit.tasks.realfake import RealFakeTask, realfake_missing
from evalkit.tasks.responses import choice_missing
from evalkit.tasks.score import Scale, missing_mark, missing_summary


def question(kind: str, n: int) -> Question:
    return Question(task="t", kind=kind, index=0, slot=0, domain="alpha" if kind in ("triplet", "pairwise") else "",
                    review_ids=tuple(f"r{k}" for k in range(n)), sources=tuple(f"s{k}" for k in range(n)),
                    texts=tuple(f"text {k}" for k in range(n)), matched=False)


def test_either() -> None:
    assert either(["A"]) == "A" and either(("A", "B")) == "A or B" and either(["A", "B", "C"]) == "A, B or C"


@pytest.mark.parametrize(("agreed", "name", "required", "marked"), [
    (False, None, True, {"agree", "name"}),
    (False, "Ada", True, {"agree"}),
    (True, "   ", True, {"name"}),  # spaces are no name
    (True, None, False, set()),  # a participant id or an invitation: the name is optional
    (False, "", False, {"agree"}),
    (True, " Ada ", True, set()),
])
def test_consent_problems(agreed: bool, name: str | None, required: bool, marked: set[str]) -> None:
    problems = consent_problems(agreed, name, required)
    assert set(problems) == marked
    if "agree" in problems:
        assert "I agree to take part" in problems["agree"] and "I agree to take part" in AGREE_LABEL
    if "name" in problems:
        assert "“Your name”" in problems["name"]


def test_login_and_confirm_problems() -> None:
    assert login_problem("") and login_problem(None) and login_problem("  ")
    assert login_problem("secret") is None and login_problem(" secret") is None
    assert confirm_problem(True, "Box", "Go") is None
    assert confirm_problem(False, "I want to end the study for everyone", "End the study") == (
        "Nothing was done: tick “I want to end the study for everyone” first, then click “End the study” again.")


def test_choice_missing_names_the_options_as_the_page_labels_them() -> None:
    assert choice_missing(question("triplet", 3)) == (
        "Please choose one of the reviews (Review A, Review B or Review C) before continuing.")
    assert choice_missing(question("pairwise", 2)) == (
        "Please choose one of the reviews (Review A or Review B) before continuing.")
    assert choice_missing(question("compare", 2), ties=True) == (
        "Please choose one of the responses (Response A, Response B or No preference) before continuing.")


def test_place_problems_missing_shared_and_bad() -> None:
    labels = ("A", "B", "C")
    assert place_problems(labels, {"A": 1, "B": 2, "C": 3}) == {}
    assert place_problems(labels, {"B": 2}) == {
        "A": "Please choose a place for response A in “Place of response A”.",
        "C": "Please choose a place for response C in “Place of response C”."}
    assert place_problems(labels, {"A": 2, "B": 2, "C": 2}) == {
        x: f"Responses {' and '.join(y for y in labels if y != x)} are 2nd too: each response needs its own place."
        for x in labels}
    assert place_problems(labels, {"A": 3, "B": 3, "C": 1})["A"] == (
        "Response B is 3rd (worst) too: each response needs its own place.")
    assert set(place_problems(labels, {"A": 9, "B": 9, "C": 1})) == set()  # out of range: order_from_places says so


def test_realfake_missing_names_the_questions() -> None:
    task = RealFakeTask(id="t", title="T", instructions="", question="Q?", target="human",
                        confidence=("Guessing", "Sure"))
    both = realfake_missing(task, None, None)
    assert both is not None and "“Who wrote this text?”" in both and "“How sure are you?”" in both
    assert realfake_missing(task, "maybe", 1) == (
        "Please say whether the text was written by a person or generated (“Who wrote this text?”).")
    for bad in (None, 0, 3, True, "2"):
        assert realfake_missing(task, "real", bad) == (
            "Please say how sure you are (“How sure are you?”) before continuing.")
    assert realfake_missing(task, "generated", 2) is None
    no_confidence = RealFakeTask(id="t", title="T", instructions="", question="Q?", target="human", confidence=())
    assert realfake_missing(no_confidence, "real", None) is None


def test_score_marks_name_the_scale_and_the_output() -> None:
    slider = Scale(id="overall", label="Overall quality", type="slider")
    likert = Scale(id="fluency", label="Fluency", type="likert", anchors=("a", "b", "c"))
    one, two = question("score", 1), question("score", 2)
    assert missing_mark(one, 0, slider).startswith("The slider 'Overall quality' has not been moved yet")
    assert missing_mark(two, 1, slider).startswith("The slider 'Overall quality' for response B has not been moved")
    assert missing_mark(one, 0, likert) == "Please choose a level for 'Fluency'."
    assert missing_summary(one, [(0, likert)]) == (
        "1 score is still missing (Fluency): it is marked above. Nothing has been saved yet.")
    assert missing_summary(two, [(0, slider), (1, likert)]).startswith(
        "2 scores are still missing (Overall quality for response A; Fluency for response B): they are marked")


def test_rating_says_why_a_save_button_is_greyed_out() -> None:
    task = RatingTask(id="r", title="R", instructions="", items=Path("x.jsonl"), metrics=(), min_items=3)
    assert not finish_allowed(task, 0) and not finish_allowed(task, 1) and finish_allowed(task, 2)
    assert disabled_buttons_note(task, 0, 5) == (
        "“Save and finish” becomes available once you have rated 3 papers: this is paper 1, so please rate 2 more "
        "after it.")
    assert disabled_buttons_note(task, 2, 5) is None
    assert disabled_buttons_note(task, 2, 1) == (
        "“Save and rate another paper” is not available: this is the last paper in the list.")
    both = disabled_buttons_note(task, 0, 1)
    assert both is not None and "Save and finish" in both and "last paper" in both
