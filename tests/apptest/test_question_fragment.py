"""The question is a fragment: a click inside a task's block reruns only the question, the end of a block
reruns the page. Clicks are sent as a browser sends them (the fragment's id with the click, see
tests/apptest/fragments.py); ``runs`` counts the survey page's runs (``ui.enter`` without a block) and the
fragment's reruns (``ui.enter`` with one)."""

from __future__ import annotations

import time
from collections import Counter

import pytest

import ui
from evalkit.store import Unavailable
from tests.apptest.conftest import Harness, button, has_button, texts
from tests.apptest.fragments import fragment_ids, fragment_run
from tests.apptest.test_survey_pages import begin, fill_rating, marked, session_of, start, to_pairwise, to_rating


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts of the survey's runs: ``page`` (the whole page), ``fragment`` (the question alone) and ``done``."""
    counts: Counter = Counter()
    real = ui.enter

    def counted(page: str, block: str | None = None) -> ui.Context:
        counts["done" if page == "done" else "page" if block is None else "fragment"] += 1
        return real(page, block)

    monkeypatch.setattr(ui, "enter", counted)
    return counts


def answer(at, task: str, index: int, label: str = "A"):
    """Choose ``label`` and click "Next" inside the fragment."""
    at.radio(key=f"{task}-{index}-choice").set_value(label)
    button(at, "Next").click()
    fragment_run(at)
    assert not at.exception
    return at


def progress_text(at) -> str:
    return at.get("progress")[0].proto.text


def test_an_answer_inside_a_block_reruns_only_the_question(harness: Harness, runs: Counter) -> None:
    at = begin(start(harness))
    assert len(fragment_ids(at)) == 1  # the question is drawn by one fragment
    runs.clear()
    answer(at, "turing", 0, "B")
    assert runs == {"fragment": 1}  # the page itself did not run
    assert [(a.question_index, a.response) for a in harness.store.answers()] == [(0, "B")]
    assert at.radio(key="turing-1-choice").value is None  # the next question, drawn by the fragment
    assert progress_text(at).startswith("Question 2 of 3")  # the progress bar is part of it
    assert at.caption[0].value.startswith("Task 1 of 3")
    answer(at, "turing", 1)
    assert runs == {"fragment": 2} and progress_text(at).startswith("Question 3 of 3")
    assert [a.question_index for a in harness.store.answers()] == [0, 1]


def test_the_last_answer_of_a_block_reruns_the_page_onto_the_next_task(harness: Harness, runs: Counter) -> None:
    at = begin(start(harness))
    answer(at, "turing", 0)
    answer(at, "turing", 1)
    runs.clear()
    answer(at, "turing", 2)
    assert runs == {"fragment": 1, "page": 1}  # the fragment saw the block end and asked for the whole page
    assert at.header[0].value == "More natural" and has_button(at, "Begin")  # the next task's instructions
    assert not at.radio
    begin(at)
    assert at.radio(key="natural-0-choice").value is None and progress_text(at).startswith("Question 1 of 2")


def test_a_missing_choice_and_a_failed_save_show_their_message_in_the_question(harness: Harness, runs: Counter,
                                                                              monkeypatch) -> None:
    at = begin(start(harness))
    runs.clear()
    button(at, "Next").click()  # no choice
    fragment_run(at)
    assert "choose one of the reviews" in at.error[0].value
    assert at.radio(key="turing-0-choice") is not None and harness.store.answers() == []

    def disk_full(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("ui.record_choice", disk_full)
    answer(at, "turing", 0)
    assert "could not be saved" in at.error[0].value and "disk full" not in texts(at)
    assert at.radio(key="turing-0-choice") is not None and harness.store.answers() == []
    assert runs == {"fragment": 2}


def test_a_double_click_inside_the_fragment_stores_one_answer(harness: Harness) -> None:
    at = begin(start(harness))
    at.radio(key="turing-0-choice").set_value("C")
    next_button = button(at, "Next")
    next_button.click()
    fragment_run(at)
    next_button.click()  # the second click of a double click, from the question it was rendered with
    fragment_run(at)
    assert not at.exception
    assert [(a.question_index, a.response) for a in harness.store.answers()] == [(0, "C")]
    assert at.radio(key="turing-1-choice").value is None


def test_time_is_measured_from_the_question_drawn_by_the_fragment(harness: Harness) -> None:
    at = begin(start(harness))
    time.sleep(0.3)  # the evaluator reads the first question
    answer(at, "turing", 0)  # the fragment draws question 2: its clock starts now
    answer(at, "turing", 1)  # answered at once
    first, second = sorted(harness.store.answers(), key=lambda a: a.question_index)
    assert first.time_spent_ms >= 300
    assert second.time_spent_ms < 300


def test_pairwise_slider_answers_inside_the_fragment(make_harness, runs: Counter) -> None:
    h = make_harness(response="slider")
    at, _ = to_pairwise(h)
    runs.clear()
    button(at, "Accept: both are acceptable").click()
    fragment_run(at)
    assert runs == {"fragment": 1} and not at.exception
    assert at.slider(key="natural-1-slider").value == 0 and progress_text(at).startswith("Question 2 of 2")
    at.slider(key="natural-1-slider").set_value(-40)
    button(at, "Reject: neither is acceptable").click()
    fragment_run(at)
    assert [(a.response, a.detail["outcome"]) for a in h.store.answers(task="natural")] == [
        ("0", "positive_draw"), ("-40", "left")]
    assert at.header[0].value == "Rate an assessment" and runs["page"] == 1


def test_rating_inside_the_fragment_then_done(harness: Harness, runs: Counter) -> None:
    at, session = to_rating(harness)
    runs.clear()
    at.selectbox(key="novelty-0-item").select("paper1")
    fragment_run(at)
    assert "Summary of Beta Paper on Text." in [t.value for t in at.text]
    fill_rating(at, 0, {"specificity": 2})
    fragment_run(at)
    button(at, "Save and finish").click()
    fragment_run(at)  # two scores missing: marked where they are, nothing stored
    assert len(marked(at)) == 2 and harness.store.ratings() == []
    fill_rating(at, 0, {"familiarity": 4, "factuality": 5})
    fragment_run(at)
    assert marked(at) == [] and not at.error
    assert runs == {"fragment": 4}
    button(at, "Save and finish").click()
    fragment_run(at)  # the study is over: the page reruns and goes on to the completion screen
    assert not at.exception and at.title[0].value == "Thank you!"
    assert runs == {"fragment": 5, "page": 1, "done": 1}
    assert harness.store.get_session(session.session_id).status == "completed"
    assert {(r.metric, r.score) for r in harness.store.ratings() if r.score} == {
        ("familiarity", 4), ("specificity", 2), ("factuality", 5)}


def test_an_unreachable_database_during_a_fragment_rerun_shows_the_notice(harness: Harness, monkeypatch) -> None:
    at = begin(start(harness))
    store_class = type(harness.store)
    real = store_class.snapshot

    def down(self, *args, **kwargs):
        raise Unavailable("server closed the connection")

    monkeypatch.setattr(store_class, "snapshot", down)
    answer(at, "turing", 0)
    assert "cannot reach its database" in at.warning[0].value and not at.exception
    assert has_button(at, "Try again")
    monkeypatch.setattr(store_class, "snapshot", real)
    button(at, "Try again").click()
    fragment_run(at)  # the retry reruns the question, which reads the database again
    assert at.radio(key="turing-1-choice").value is None
    assert [a.question_index for a in harness.store.answers()] == [0]


def test_an_unexpected_error_in_the_fragment_shows_a_calm_message(harness: Harness, monkeypatch) -> None:
    at = begin(start(harness))

    def broken(*args, **kwargs):
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr("ui.resolve_step", broken)
    answer(at, "turing", 0)
    assert "Something went wrong on our side" in at.error[0].value
    assert "boom" not in texts(at)


def test_a_study_ended_during_a_block_shows_complete(harness: Harness) -> None:
    at = begin(start(harness))
    harness.store.set_survey_state("ended", actor="test")
    at.radio(key="turing-0-choice").set_value("A")
    button(at, "Next").click()
    fragment_run(at)
    assert not at.exception
    assert "This study is complete" in texts(at) and not at.radio
    assert session_of(harness, at).status == "active"


def scroll_scripts(at) -> list[str]:
    """The scripts that bring a new question into view, among what the last run sent."""
    return [h.proto.body for h in at.get("html") if "question-scroll" in h.proto.body]


def test_only_a_new_question_drawn_by_the_fragment_is_brought_into_view(harness: Harness) -> None:
    at = begin(start(harness))
    assert scroll_scripts(at) == []  # a whole-page run: the page starts at its top anyway
    button(at, "Next").click()
    fragment_run(at)  # a message on the same question: the view stays where the evaluator looks
    assert "choose one of the reviews" in at.error[0].value and scroll_scripts(at) == []
    answer(at, "turing", 0)
    [first] = scroll_scripts(at)
    assert "scrollIntoView" in first and "<script>" in first
    answer(at, "turing", 1)
    [second] = scroll_scripts(at)
    assert second != first  # new HTML each time: the browser runs a script again only when its HTML changed
