"""Issue 13, section 5, "Why can't I continue?": on every screen, a click with an input missing says, right next to
the widget and naming it by its label, what is missing; nothing is stored; with the input given, the answer is
stored once.

(Covered elsewhere: the background form's fields in test_form.py, an invitation link with a wrong key in
test_invited.py, the rating screen's missing scores in test_survey_pages.py. The instructions' "Begin" and the done
screen ask for nothing; the HELP slider's 0 is an answer, a draw.)
"""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.sampling import plan
from evalkit.survey import record_choice
from tests.apptest.conftest import Harness, button, leaves
from tests.apptest.test_item_kinds import LIKERT, SLIDER, only_answer, study, submit_scores, task_toml, widget
from tests.apptest.test_item_kinds import start as start_items
from tests.apptest.test_results_page import fake_clock, fill, results_app, unlock

MESSAGES = ("error", "warning")


def drawn(at) -> list[tuple[str, Any]]:
    """Every leaf element of the page in the order drawn: (type, key of a widget / label of a button / value)."""
    return leaves(at, button_labels=True)


def message_after(at, widget: tuple[str, str]) -> str:
    """The error or warning drawn right after ``widget`` (only captions and markup between), i.e. next to it."""
    elements = drawn(at)
    for kind, value in elements[elements.index(widget) + 1:]:
        if kind in MESSAGES:
            return str(value)
        assert kind in ("caption", "markdown", "html", ""), f"nothing right after {widget}: {kind} {value} first"
    raise AssertionError(f"no message after {widget}")


def message_before(at, widget: tuple[str, str]) -> str:
    """The error or warning drawn right before ``widget`` (a message right above a button)."""
    elements = drawn(at)
    for kind, value in reversed(elements[:elements.index(widget)]):
        if kind in MESSAGES:
            return str(value)
        assert kind in ("caption", "markdown", "html", ""), f"nothing right before {widget}: {kind} {value} first"
    raise AssertionError(f"no message before {widget}")


def marks(at) -> list[str]:
    """The warnings on the page that an evaluator sees (the marks under widgets, not the invisible stand-ins)."""
    return [str(value) for kind, value in drawn(at) if kind == "warning"]


# ----------------------------------------------------------------------------- consent


def test_consent_marks_the_unticked_box_and_the_empty_name_each_under_its_widget(harness: Harness) -> None:
    at = harness.app()
    button(at, "Start the study").click().run()  # neither given
    assert not at.exception and harness.store.sessions() == []
    assert "tick the box “I agree to take part”" in message_after(at, ("checkbox", "consent_agree"))
    assert "“Your name”" in message_after(at, ("text_input", "consent_name"))
    assert any("consent_name" in h.proto.body and "placeholder-shown" in h.proto.body for h in at.get("html"))
    at.checkbox(key="consent_agree").check()
    button(at, "Start the study").click().run()  # ticked: only the name is marked now
    assert harness.store.sessions() == [] and len(at.warning) == 1 and not at.error  # missing: yellow
    assert "enter your name in “Your name”" in message_after(at, ("text_input", "consent_name"))
    at.text_input(key="consent_name").input("  ")
    button(at, "Start the study").click().run()  # spaces are no name
    assert harness.store.sessions() == [] and len(at.warning) == 1
    # ... and its mark stays in sight: the rule that hides it once the box holds text is not drawn for spaces
    assert not any("consent_name" in h.proto.body and "placeholder-shown" in h.proto.body for h in at.get("html"))
    at.text_input(key="consent_name").input("Ada")
    button(at, "Start the study").click().run()
    assert not at.exception and at.header[0].value == "Spot the human"
    [session] = harness.store.sessions()
    assert session.evaluator_name == "Ada"


def test_consent_with_a_participant_id_asks_only_for_the_box(harness: Harness) -> None:
    at = harness.app(PROLIFIC_PID="pid-why-1", STUDY_ID="st", SESSION_ID="se")
    button(at, "Start the study").click().run()
    assert harness.store.sessions() == [] and len(at.warning) == 1  # the name is optional here
    assert "tick the box" in message_after(at, ("checkbox", "consent_agree"))
    at.checkbox(key="consent_agree").check()
    button(at, "Start the study").click().run()
    assert [s.external_id for s in harness.store.sessions()] == ["pid-why-1"]


# ----------------------------------------------------------------------------- triplet and pairwise (the pools)


def _start(h: Harness):
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    button(at, "Start the study").click().run()
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def test_triplet_choice_missing_names_the_three_reviews(harness: Harness) -> None:
    at = _start(harness)
    button(at, "Next").click().run()
    assert harness.store.answers() == []
    message = message_after(at, ("radio", "turing-0-choice"))  # right under the options, above "Next"
    assert message == "Please choose one of the reviews (Review A, Review B or Review C) before continuing."
    at.radio(key="turing-0-choice").set_value("B")
    button(at, "Next").click().run()
    [answer] = harness.store.answers()
    assert (answer.task, answer.question_index, answer.response) == ("turing", 0, "B")


def test_pairwise_choice_missing_names_both_reviews(harness: Harness) -> None:
    at = _start(harness)
    session = harness.store.get_session(at.query_params["s"])
    loaded = harness.loaded
    for q in plan(loaded.study, loaded.pools, session.seed):
        if q.task == "turing":
            record_choice(harness.store, session, q, "A", 100)
    at = harness.app(s=session.session_id)
    button(at, "Begin").click().run()
    button(at, "Next").click().run()
    assert [a.task for a in harness.store.answers()] == ["turing"] * 3
    assert message_after(at, ("radio", "natural-0-choice")) == (
        "Please choose one of the reviews (Review A or Review B) before continuing.")
    at.radio(key="natural-0-choice").set_value("A")
    button(at, "Next").click().run()
    assert [a.response for a in harness.store.answers(task="natural")] == ["A"]


# ----------------------------------------------------------------------------- the items kinds


@pytest.mark.parametrize(("response", "options"), [
    ("choice", "Response A or Response B"), ("choice-tie", "Response A, Response B or No preference")])
def test_compare_choice_missing_names_the_options(make_harness, tmp_path, response: str, options: str) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", response=response, questions=1)))
    at = start_items(h)
    button(at, "Next").click().run()
    assert h.store.answers() == []
    assert message_after(at, ("radio", "block-0-choice")) == (
        f"Please choose one of the responses ({options}) before continuing.")
    at.radio(key="block-0-choice").set_value("B")
    button(at, "Next").click().run()
    assert only_answer(h).response == "B"


def test_score_marks_name_each_scale_and_output(make_harness, tmp_path) -> None:
    """The score widget marks a missing score under its widget in the browser, with evalkit's words (sent with it);
    an incomplete answer that reaches the server anyway is refused, marked and summed up in yellow."""
    h = make_harness(config=study(tmp_path, task_toml("score", questions=1, outputs_per_question=2,
                                                      scales=[SLIDER, LIKERT])))
    at = start_items(h)
    data = widget(at)
    assert data["marks"]["overall-0"] == (
        "The slider 'Overall quality' for response A has not been moved yet: please drag it to your score (where it "
        "starts is not an answer).")
    assert data["marks"]["fluency-1"] == "Please choose a level for 'Fluency' for response B."
    submit_scores(at, {"overall": [None, 70], "fluency": [2, None]})  # A's slider untouched, B's level not chosen
    assert h.store.answers() == [] and not at.error
    assert widget(at)["serverMarks"] == {k: data["marks"][k] for k in ("overall-0", "fluency-1")}
    assert [w.value for w in at.warning] == [
        "2 scores are still missing (Overall quality for response A; Fluency for response B): they are marked "
        "above. Nothing has been saved yet."]
    submit_scores(at, {"overall": [55, 70], "fluency": [2, 4]})
    assert only_answer(h).detail == {"scores": {"overall": [55, 70], "fluency": [2, 4]}}


def test_rank_marks_each_place_box_missing_or_shared(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("rank", response="ranking", questions=1)))
    at = start_items(h)
    at.selectbox(key="block-0-place-B").set_value(1)
    button(at, "Next").click().run()
    assert h.store.answers() == []
    assert "“Place of response A”" in message_after(at, ("selectbox", "block-0-place-A"))
    assert "“Place of response C”" in message_after(at, ("selectbox", "block-0-place-C"))
    assert len(marks(at)) == 3  # A's, C's and the line above "Next": B has its place (only an invisible stand-in)
    assert message_before(at, ("button", "Next")) == (
        "Please give responses A and C a place in the ranking (1st to 3rd).")
    at.selectbox(key="block-0-place-A").set_value(1)
    at.selectbox(key="block-0-place-C").set_value(3)
    button(at, "Next").click().run()  # A and B share the first place
    assert h.store.answers() == []
    assert message_after(at, ("selectbox", "block-0-place-A")) == (
        "Response B is 1st (best) too: each response needs its own place.")
    assert message_after(at, ("selectbox", "block-0-place-B")) == (
        "Response A is 1st (best) too: each response needs its own place.")
    assert len(marks(at)) == 3  # A's, B's and the line above "Next"
    at.selectbox(key="block-0-place-A").set_value(2)
    button(at, "Next").click().run()
    assert only_answer(h).response == "B>A>C"


def test_best_of_n_missing_names_the_options(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("rank", questions=1)))
    at = start_items(h)
    button(at, "Next").click().run()
    assert h.store.answers() == []
    assert message_after(at, ("radio", "block-0-choice")) == (
        "Please choose the best response (Response A, Response B or Response C) before continuing.")
    at.radio(key="block-0-choice").set_value("C")
    button(at, "Next").click().run()
    assert only_answer(h).response == "C"


def test_realfake_names_the_unanswered_questions(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("realfake", target="sysAlphaX1", questions=1)))
    at = start_items(h)
    button(at, "Next").click().run()  # neither answered: each marked right under it
    assert h.store.answers() == []
    assert message_after(at, ("radio", "block-0-answer")) == (
        "Please say whether the text was written by a person or generated (“Who wrote this text?”).")
    assert message_after(at, ("radio", "block-0-confidence")) == (
        "Please say how sure you are (“How sure are you?”) before continuing.")
    assert len(marks(at)) == 2
    at.radio(key="block-0-answer").set_value("real")
    button(at, "Next").click().run()  # the answer without its confidence
    assert h.store.answers() == []
    assert message_after(at, ("radio", "block-0-confidence")) == (
        "Please say how sure you are (“How sure are you?”) before continuing.")
    at.radio(key="block-0-confidence").set_value(2)
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert answer.response == "real" and answer.detail == {"confidence": 2}


# ----------------------------------------------------------------------------- rating


def test_rating_says_why_save_and_finish_is_greyed_out(make_harness) -> None:
    h = make_harness(min_items=2)
    at = _start(h)
    session = h.store.get_session(at.query_params["s"])
    loaded = h.loaded
    for q in plan(loaded.study, loaded.pools, session.seed):
        record_choice(h.store, session, q, "A", 100)
    at = h.app(s=session.session_id)
    button(at, "Begin").click().run()
    at.selectbox(key="novelty-0-item").select("paper0").run()
    assert button(at, "Save and finish").disabled
    note = [c.value for c in at.caption if "Save and finish" in c.value]
    assert note == [":material/info: “Save and finish” becomes available once you have rated 2 papers: this is "
                    "paper 1, so please rate 1 more after it."]
    elements = drawn(at)  # the note right under the buttons
    assert elements.index(("caption", note[0])) == elements.index(("button", "Save and finish")) + 1
    button(at, "Save and rate another paper").click().run()  # no score yet: marked, nothing stored
    assert h.store.ratings() == [] and "3 questions have no score yet" in at.warning[-1].value
    for metric in ("familiarity", "specificity", "factuality"):
        at.radio(key=f"novelty-0-{metric}").set_value(3)
    button(at, "Save and rate another paper").click().run()
    assert len({r.item_id for r in h.store.ratings()}) == 1
    at.selectbox(key="novelty-1-item").select("paper1").run()
    assert not button(at, "Save and finish").disabled
    assert not [c for c in at.caption if "Save and finish" in c.value]


# ----------------------------------------------------------------------------- results page


def test_results_login_with_an_empty_box_says_so_and_costs_no_guess(harness: Harness, monkeypatch) -> None:
    fill(harness, 1)
    clock = fake_clock(monkeypatch)
    at = results_app(harness)
    for _ in range(8):  # more than the 5 free guesses: none of these is one
        button(at, "Unlock").click().run()
        assert not at.exception and not at.subheader
        assert message_after(at, ("text_input", "results_password_input")) == (
            "Please type the password in “Password” first: the box was empty, so nothing was checked.")
    unlock(at, "wrong")
    assert message_after(at, ("text_input", "results_password_input")).startswith("Wrong password")
    unlock(at, "pw")
    assert at.subheader and clock.waits == []  # two guesses so far: no wait


def test_admin_actions_say_which_box_to_tick(harness: Harness) -> None:
    ids = fill(harness, 2)
    at = unlock(results_app(harness))
    button(at, "End the study").click().run()
    assert harness.store.survey_state() == "open"
    assert "tick “I want to end the study for everyone” first" in message_after(at, ("button", "End the study"))
    at.selectbox(key="admin_session").select(ids[0]).run()
    button(at, "Delete permanently").click().run()
    assert harness.store.get_session(ids[0]) is not None
    assert "tick “Delete permanently: I understand this cannot be undone” first" in message_after(
        at, ("button", "Delete permanently"))
    at.checkbox(key=f"confirm_delete_{ids[0]}").check()
    button(at, "Delete permanently").click().run()
    assert harness.store.get_session(ids[0]) is None and harness.store.get_session(ids[1]) is not None
