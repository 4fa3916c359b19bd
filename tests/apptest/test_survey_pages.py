"""AppTest tests of every evaluator screen and branch: consent, triplets, pairwise, rating, done, states."""

from __future__ import annotations

import html
import re

import pytest

import evalkit.survey
from evalkit.sampling import plan
from evalkit.survey import current_step, record_choice, record_item_rating
from tests.apptest.conftest import (
    Harness,
    button,
    card_texts,
    cards,
    has_button,
    leaves,
    page_protos,
    progress_lines,
    texts,
)
from tests.helpers import ROOT, SOURCES, XSS

# ----------------------------------------------------------------------------- helpers


def start(h: Harness, name: str = "Ada", **query: str):
    """Agree and start from the consent page; returns the AppTest, now on the first task."""
    at = h.app(**query)
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input(name)
    at.button[0].click().run()
    assert not at.exception
    return at


def begin(at):
    """Click "Begin" on a task's instructions screen."""
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def session_of(h: Harness, at):
    return h.store.get_session(at.query_params["s"])


def questions(h: Harness, session):
    loaded = h.loaded
    return plan(loaded.study, loaded.pools, session.seed)


def answer_all_choice_questions(h: Harness, session, task: str | None = None) -> None:
    store = h.store
    for q in questions(h, session):
        if task is None or q.task == task:
            if q.kind == "pairwise" and h.loaded.study.task(q.task).response == "slider":
                evalkit.survey.record_slider(store, session, q, 10, "accept", 100)
            else:
                record_choice(store, session, q, "A", 100)


# ----------------------------------------------------------------------------- consent


def test_consent_screen_shows_study_and_creates_nothing_yet(harness: Harness) -> None:
    at = harness.app()
    assert not at.exception
    assert at.title[0].value == "Token study"
    shown = texts(at)
    assert "take part" in shown and "About 3 minutes" in shown
    assert at.checkbox(key="consent_agree").value is False
    assert harness.store.sessions() == []


def test_consent_refused_creates_no_session(harness: Harness) -> None:
    at = harness.app()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()  # "Start the study" without ticking the box
    assert not at.exception
    assert "tick the box" in at.warning[0].value and not at.error  # what is missing: yellow
    assert "s" not in at.query_params
    assert harness.store.sessions() == []


def test_declining_shows_a_goodbye_and_stores_nothing(harness: Harness) -> None:
    at = harness.app()
    decline = button(at, "I do not want to take part")
    decline.click().run()
    assert "not to take part" in texts(at)
    assert harness.store.sessions() == []


def test_missing_name_is_refused(harness: Harness) -> None:
    at = harness.app()
    at.checkbox(key="consent_agree").check()
    at.button[0].click().run()
    assert "enter your name" in at.warning[0].value
    assert harness.store.sessions() == []


def test_agreeing_creates_the_session_and_puts_the_token_in_the_url(harness: Harness) -> None:
    at = start(harness, name="  Ada Lovelace ")
    [session] = harness.store.sessions()
    assert at.query_params["s"] == session.session_id
    assert session.evaluator_name == "Ada Lovelace" and session.study_version == harness.loaded.version
    assert at.header[0].value == "Spot the human"  # the first task's instructions
    assert "Pick the one a person wrote." in texts(at)


def test_double_click_on_start_creates_one_session(harness: Harness) -> None:
    at = harness.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    button = at.button[0]
    button.click().run()
    button.click().run()  # the second click of a double click, from the same rendered page
    assert not at.exception
    assert len(harness.store.sessions()) == 1


def test_prolific_parameters_make_the_name_optional_and_resume(harness: Harness) -> None:
    query = {"PROLIFIC_PID": "pid-123", "STUDY_ID": "st-9", "SESSION_ID": "se-1"}
    at = harness.app(**query)
    assert "name is optional" in texts(at)
    at.checkbox(key="consent_agree").check()
    at.button[0].click().run()
    assert not at.exception
    [session] = harness.store.sessions()
    assert session.external_id == "pid-123" and session.evaluator_name == ""
    assert session.meta == {"prolific_pid": "pid-123", "study_id": "st-9", "session_id": "se-1", "arrival": 0}
    # the same participant opens the study link again (new tab, no token): same session, no new one
    again = harness.app(**query)
    assert not again.exception
    assert again.query_params["s"] == session.session_id
    assert len(harness.store.sessions()) == 1


# ----------------------------------------------------------------------------- triplets


def test_triplet_question_renders_and_requires_a_choice(harness: Harness) -> None:
    at = begin(start(harness))
    session = session_of(harness, at)
    q = questions(harness, session)[0]
    assert at.subheader[0].value == "Which review was written by a real person?"
    assert cards(at) == [(f"Review {label}", text) for label, text in zip("ABC", q.texts, strict=True)]
    # all the cards are one element (each element counts when a question is answered), no st.text
    assert len([h for h in at.get("html") if "evalkit-card" in h.proto.body]) == 1 and len(at.text) == 0
    assert "Question 1 of 3" in at.get("progress")[0].proto.text
    radio = at.radio(key="turing-0-choice")
    assert radio.value is None and radio.options == ["Review A", "Review B", "Review C"]
    at.button[0].click().run()  # "Next" without a choice
    assert not at.exception
    assert "choose one of the reviews" in at.warning[0].value and not at.error
    assert harness.store.answers() == []


def test_triplet_answer_is_stored_with_its_source_and_the_next_question_follows(harness: Harness) -> None:
    at = begin(start(harness))
    session = session_of(harness, at)
    q0, q1 = questions(harness, session)[:2]
    at.radio(key="turing-0-choice").set_value("B")
    at.button[0].click().run()
    assert not at.exception
    [answer] = harness.store.answers()
    assert (answer.task, answer.question_index, answer.response) == ("turing", 0, "B")
    assert answer.review_source == q0.sources[1] and answer.sources == q0.sources
    assert answer.item_ids == q0.review_ids and answer.domain == q0.domain
    assert answer.time_spent_ms is not None and answer.time_spent_ms >= 0
    assert card_texts(at) == list(q1.texts)
    assert "Question 2 of 3" in at.get("progress")[0].proto.text


def test_double_submit_stores_one_answer_and_does_not_answer_the_next_question(harness: Harness) -> None:
    at = begin(start(harness))
    at.radio(key="turing-0-choice").set_value("C")
    next_button = at.button[0]
    next_button.click().run()
    next_button.click().run()  # the second click of a double click
    assert not at.exception
    answers = harness.store.answers()
    assert [(a.task, a.question_index, a.response) for a in answers] == [("turing", 0, "C")]
    assert at.radio(key="turing-1-choice").value is None


def test_refresh_or_new_tab_resumes_at_the_first_unanswered_question(harness: Harness) -> None:
    at = begin(start(harness))
    token = at.query_params["s"]
    at.radio(key="turing-0-choice").set_value("A")
    at.button[0].click().run()
    session = harness.store.get_session(token)
    q1 = questions(harness, session)[1]
    again = harness.app(s=token)  # a refresh: new script session, same URL
    assert not again.exception
    assert again.query_params["s"] == token
    assert card_texts(again) == list(q1.texts)
    assert "Question 2 of 3" in again.get("progress")[0].proto.text


@pytest.mark.parametrize("bad", ["0" * 32, "not-a-token", "'; DROP TABLE sessions; --", ""])
def test_unknown_or_malformed_token_shows_a_friendly_message(harness: Harness, bad: str) -> None:
    for page in ("pages/survey.py", "pages/done.py"):
        at = harness.app(s=bad)
        if bad:
            assert not at.exception
            assert "could not find your session" in texts(at)
            assert at.page_link[0].proto.label == "Start the study"
        at.switch_page(page).run()
        assert not at.exception
        assert "could not find your session" in texts(at)


def test_an_abandoned_session_says_it_expired_and_its_link_starts_afresh(harness: Harness) -> None:
    """A session with nothing recorded long after its start is abandoned (Store.abandon_idle, issue 25): its token
    shows the expired notice on the question and done screens, and the consent page offers a new start."""
    from datetime import UTC, datetime, timedelta

    at = start(harness)
    token = at.query_params["s"]
    assert harness.store.abandon_idle(60, now=datetime.now(UTC) + timedelta(hours=1)) == [token]
    for page in ("pages/survey.py", "pages/done.py"):
        at.switch_page(page).run()
        assert not at.exception
        assert "This session has expired" in texts(at) and at.page_link[0].proto.label == "Start the study"
    fresh = harness.app(s=token)  # the link again: the consent form, not the old session
    assert not fresh.exception and fresh.checkbox(key="consent_agree") is not None
    assert "s" not in fresh.query_params


def test_a_question_left_open_past_the_idle_time_is_still_answered_and_the_session_goes_on(
        harness: Harness) -> None:
    """The sweep abandons a session whose evaluator left its first question open for longer than abandon_minutes
    (nothing recorded yet); their click still stores the answer, and the page revives the session: the next
    question, the session active and counted again."""
    from datetime import UTC, datetime, timedelta

    at = begin(start(harness))
    token = at.query_params["s"]
    assert harness.store.abandon_idle(60, now=datetime.now(UTC) + timedelta(hours=1)) == [token]
    at.radio(key="turing-0-choice").set_value("B")
    at.button[0].click().run()
    assert not at.exception and "This session has expired" not in texts(at)
    assert "Question 2 of 3" in at.get("progress")[0].proto.text
    assert harness.store.get_session(token).status == "active" and len(harness.store.answers(token)) == 1


def test_the_expired_notice_starts_a_platform_participant_again_with_their_ids(harness: Harness) -> None:
    from datetime import UTC, datetime, timedelta

    at = start(harness, PROLIFIC_PID="pid-7", STUDY_ID="st-1", SESSION_ID="se-1")
    token = at.query_params["s"]
    assert harness.store.abandon_idle(60, now=datetime.now(UTC) + timedelta(hours=1)) == [token]
    at.switch_page("pages/survey.py").run()
    link = at.page_link[0].proto
    assert "This session has expired" in texts(at) and link.label == "Start the study"
    assert link.query_string == "PROLIFIC_PID=pid-7&STUDY_ID=st-1&SESSION_ID=se-1"


def test_no_source_label_or_review_id_reaches_the_browser(harness: Harness) -> None:
    at = begin(start(harness))
    seen = []
    session = session_of(harness, at)
    plan_ids = [k for q in questions(harness, session) for k in q.review_ids]
    while True:
        sent = page_protos(at) + repr(dict(at.query_params))
        seen.append(sent)
        radios = [r for r in at.radio if r.key and r.key.endswith("-choice")]
        if not radios:
            break
        radios[0].set_value("A")
        button(at, "Next").click().run()
        if has_button(at, "Begin"):
            seen.append(page_protos(at))
            begin(at)
    assert len(seen) >= 5
    for sent in seen:
        for token in SOURCES.values():
            assert token not in sent
        for review_id in plan_ids:
            assert review_id.split("/")[-1] not in sent
    assert len(harness.store.answers()) == 5


def test_untrusted_text_is_sent_as_plain_text(harness: Harness) -> None:
    at = begin(start(harness))
    session = session_of(harness, at)
    payload_questions = [q for q in questions(harness, session) if any(t.startswith(XSS) for t in q.texts)]
    assert payload_questions, "the token study puts the payload in every alpha question"
    while not any(t.startswith(XSS) for t in card_texts(at)):
        at.radio[0].set_value("A")
        at.button[0].click().run()
    assert any(card_texts(at) == list(q.texts) for q in payload_questions)  # read back whole, as text
    [body] = [h.proto for h in at.get("html") if "evalkit-card" in h.proto.body]
    assert html.escape(XSS) in body.body and not body.unsafe_allow_javascript  # sent escaped: text, never markup
    assert "<script>" not in body.body and "<img" not in body.body
    for md in at.markdown:  # no element renders the payload as markdown or HTML
        assert "<script>" not in md.value and "127.0.0.1:9" not in md.value


# ----------------------------------------------------------------------------- pairwise


def to_pairwise(h: Harness):
    """A session whose triplets are answered, on the first pairwise question (a new tab)."""
    at = begin(start(h))
    session = session_of(h, at)
    answer_all_choice_questions(h, session, "turing")
    return begin(h.app(s=session.session_id)), session


def test_pairwise_choice_stores_left_and_right_sources(harness: Harness) -> None:
    at, session = to_pairwise(harness)
    q = next(q for q in questions(harness, session) if q.task == "natural")
    assert at.subheader[0].value == "Which sounds more natural and realistic?"
    assert at.radio(key="natural-0-choice").options == ["Review A", "Review B"]
    at.button[0].click().run()
    assert "choose one" in at.warning[0].value
    at.radio(key="natural-0-choice").set_value("B")
    at.button[0].click().run()
    [answer] = harness.store.answers(task="natural")
    assert answer.response == "B" and answer.review_source == q.sources[1]
    assert (answer.left_source, answer.right_source) == q.sources


def test_pairwise_slider_accept_and_reject(make_harness) -> None:
    h = make_harness(response="slider")
    at, session = to_pairwise(h)
    q0, q1 = [q for q in questions(h, session) if q.task == "natural"]
    slider = at.slider(key="natural-0-slider")
    assert (slider.min, slider.max, slider.value) == (-100, 100, 0)
    labels = [b.label for b in at.button]
    assert "Accept: both are suitable" in labels and "Reject: both are unsuitable" in labels
    accept = button(at, "Accept: both are suitable")
    accept.click().run()  # slider left at 0: a positive draw
    assert not at.exception
    first = h.store.answers(task="natural")[0]
    assert first.response == "0" and first.detail == {"button": "accept", "outcome": "positive_draw"}
    assert first.review_source is None and (first.left_source, first.right_source) == q0.sources
    at.slider(key="natural-1-slider").set_value(-40)
    reject = button(at, "Reject: both are unsuitable")
    reject.click().run()
    second = h.store.answers(task="natural")[1]
    assert second.response == "-40" and second.detail == {"button": "reject", "outcome": "left"}
    assert second.review_source == q1.sources[0]
    assert not at.exception and at.header[0].value == "Rate an assessment"


def test_slider_draw_at_zero_with_reject_is_a_negative_draw(make_harness) -> None:
    h = make_harness(response="slider")
    at, _ = to_pairwise(h)
    reject = button(at, "Reject: both are unsuitable")
    reject.click().run()
    assert h.store.answers(task="natural")[0].detail == {"button": "reject", "outcome": "negative_draw"}


# ----------------------------------------------------------------------------- rating and done


def to_rating(h: Harness):
    at = start(h)
    session = session_of(h, at)
    answer_all_choice_questions(h, session)
    at = h.app(s=session.session_id)
    assert at.header[0].value == "Rate an assessment"
    return begin(at), session


def fill_rating(at, index: int, scores: dict[str, int]) -> None:
    for metric, score in scores.items():
        at.radio(key=f"novelty-{index}-{metric}").set_value(score)


def test_rating_flow_select_view_rate_and_finish(harness: Harness) -> None:
    at, session = to_rating(harness)
    select = at.selectbox(key="novelty-0-item")
    assert select.value is None and len(select.options) == 3
    select.select("paper1").run()
    assert not at.exception
    assert "Summary of Beta Paper on Text." in [t.value for t in at.text]
    assert any("3 / 5" in t.value for t in at.text)
    dot = at.get("graphviz_chart")[0].proto.spec
    assert dot.startswith("digraph") and "->" in dot and "Beta Paper on Text" in dot
    radio = at.radio(key="novelty-0-specificity")
    assert radio.options[0] == "1 · Generic" and radio.value is None
    assert at.radio(key="novelty-0-familiarity").options[4] == "5 · Know it in depth"
    finish = button(at, "Save and finish")
    finish.click().run()
    assert "3 questions have no score yet" in at.warning[-1].value
    assert harness.store.ratings() == []
    fill_rating(at, 0, {"familiarity": 4, "specificity": 2, "factuality": 5})
    at.text_area(key="novelty-0-comment").input("Clear enough.")
    finish = button(at, "Save and finish")
    finish.click().run()
    assert not at.exception
    rows = {(r.item_id, r.metric): (r.score, r.comment) for r in harness.store.ratings()}
    assert rows == {("paper1", "familiarity"): (4, ""), ("paper1", "specificity"): (2, ""),
                    ("paper1", "factuality"): (5, ""), ("paper1", "comment"): (None, "Clear enough.")}
    # the completion screen
    assert at.title[0].value == "Thank you!"
    done = harness.store.get_session(session.session_id)
    assert done.status == "completed" and at.code[0].value == done.completion_code
    assert at.link_button[0].proto.url == f"https://example.org/done?cc={done.completion_code}"


MARK = "Please choose a score for this question."


def marked(at) -> list[str]:
    """The rating questions marked as missing: the question text shown right before each mark (a warning)."""
    drawn = [(kind, value) for kind, value in leaves(at) if kind in ("markdown", "warning")]
    return [drawn[k - 1][1] for k, (kind, value) in enumerate(drawn) if kind == "warning" and value == MARK]


def test_rating_validation_marks_missing_questions_and_clears_when_answered(harness: Harness) -> None:
    at, _ = to_rating(harness)
    at.selectbox(key="novelty-0-item").select("paper1").run()
    assert marked(at) == [] and not at.warning  # nothing is marked before a save was tried
    fill_rating(at, 0, {"specificity": 2})
    button(at, "Save and finish").click().run()
    assert not at.exception and harness.store.ratings() == []
    assert marked(at) == ["**Familiarity.** How familiar are you with this paper?",
                          "**Factuality.** How accurate is it?"]
    assert not at.error  # what is missing is yellow, like the marks
    error = at.warning[-1]
    assert error.value == "2 questions have no score yet: they are marked above."
    assert "Specificity" not in error.value  # no list of every criterion
    at.radio(key="novelty-0-familiarity").set_value(5).run()  # answering clears its mark at once
    assert marked(at) == ["**Factuality.** How accurate is it?"]
    assert at.warning[-1].value.startswith("1 question has no score yet")
    at.radio(key="novelty-0-factuality").set_value(1).run()
    assert marked(at) == [] and not at.warning  # all answered: the message is gone before saving
    assert at.radio(key="novelty-0-specificity").value == 2  # earlier answers kept across the reruns
    button(at, "Save and finish").click().run()
    assert not at.exception and at.title[0].value == "Thank you!"
    assert {(r.metric, r.score) for r in harness.store.ratings() if r.score} == {
        ("familiarity", 5), ("specificity", 2), ("factuality", 1)}


def test_progress_is_below_100_until_the_rating_block_is_finished(harness: Harness) -> None:
    at, _ = to_rating(harness)
    assert progress_lines(at) == ("Task 3 of 3 · Rate an assessment", "Paper 1 of at least 1 · 71% of the study done")
    at.selectbox(key="novelty-0-item").select("paper0").run()
    fill_rating(at, 0, {"familiarity": 3, "specificity": 3, "factuality": 3})
    button(at, "Save and rate another paper").click().run()
    text = progress_lines(at)[1]
    assert text.startswith("Paper 2 (optional: the 1 required is done)") and "100%" not in text
    assert at.get("progress")[0].proto.value < 100


def test_rate_another_then_done_button(harness: Harness) -> None:
    at, session = to_rating(harness)
    at.selectbox(key="novelty-0-item").select("paper0").run()
    fill_rating(at, 0, {"familiarity": 3, "specificity": 3, "factuality": 3})
    another = button(at, "Save and rate another paper")
    another.click().run()
    assert not at.exception
    select = at.selectbox(key="novelty-1-item")
    assert select.value is None and "paper0" not in select.options and len(select.options) == 2
    assert "rated 1 paper" in texts(at)
    done = button(at, "I am done rating papers")
    done.click().run()
    assert at.title[0].value == "Thank you!"
    assert harness.store.get_session(session.session_id).status == "completed"


def test_minimum_number_of_items_is_enforced(make_harness) -> None:
    h = make_harness(min_items=2)
    at, session = to_rating(h)
    at.selectbox(key="novelty-0-item").select("paper2").run()
    finish = button(at, "Save and finish")
    assert finish.disabled  # one rating cannot finish a block that needs two
    with pytest.raises(evalkit.survey.SurveyError, match="rate 2 more papers"):
        evalkit.survey.finish_rating(h.store, session, h.loaded.study.task("novelty"))
    fill_rating(at, 0, {"familiarity": 3, "specificity": 3, "factuality": 3})
    button(at, "Save and rate another paper").click().run()
    assert "Please rate at least 2" in texts(at)
    assert not has_button(at, "I am done rating papers")


def test_double_submit_of_a_rating_stores_it_once(harness: Harness) -> None:
    at, _ = to_rating(harness)
    at.selectbox(key="novelty-0-item").select("paper0").run()
    fill_rating(at, 0, {"familiarity": 3, "specificity": 4, "factuality": 2})
    another = button(at, "Save and rate another paper")
    another.click().run()
    another.click().run()
    assert not at.exception
    assert len(harness.store.ratings()) == 3
    assert at.selectbox(key="novelty-1-item").value is None


def test_done_page_is_only_reached_when_finished(harness: Harness) -> None:
    at = start(harness)
    token = at.query_params["s"]
    at.switch_page("pages/done.py").run()
    assert not at.exception
    assert at.header[0].value == "Spot the human"  # sent back to where the session stands
    assert harness.store.get_session(token).status == "active"


def test_completion_code_is_stable_and_without_url_no_link(tmp_path, make_harness) -> None:
    from tests.helpers import copy_demo

    h = make_harness(config=copy_demo(tmp_path / "demo"))
    at = start(h)
    session = session_of(h, at)
    answer_all_choice_questions(h, session)
    loaded = h.loaded
    task = loaded.study.task("novelty")
    item = loaded.items["novelty"][0]
    scores = {m.id: 3 for m in [task.familiarity, *task.metrics]}
    record_item_rating(h.store, session, task, 0, item.id, scores, "", 5, loaded.items["novelty"])
    evalkit.survey.finish_rating(h.store, session, task)
    first = h.app(s=session.session_id)
    second = h.app(s=session.session_id)
    assert first.title[0].value == "Thank you!" and not first.link_button
    assert first.code[0].value == second.code[0].value
    assert re.fullmatch(r"[A-Z2-9]{10}", first.code[0].value)


# ----------------------------------------------------------------------------- study states and errors


def test_paused_study_blocks_new_evaluators_but_not_those_inside(harness: Harness) -> None:
    at = begin(start(harness))
    token = at.query_params["s"]
    harness.store.set_survey_state("paused", actor="test")
    new = harness.app()
    assert "paused" in texts(new) and not new.checkbox and not new.exception
    inside = begin(harness.app(s=token))  # an evaluator already inside may go on
    assert inside.radio(key="turing-0-choice").value is None
    harness.store.set_survey_state("open", actor="test")
    assert harness.app().checkbox(key="consent_agree") is not None


def test_pausing_between_render_and_click_refuses_to_start(harness: Harness) -> None:
    at = harness.app()
    harness.store.set_survey_state("paused", actor="test")
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    assert harness.store.sessions() == []
    assert "paused" in texts(at)


def test_ended_study_shows_complete_to_everyone(harness: Harness) -> None:
    at = start(harness)
    token = at.query_params["s"]
    harness.store.set_survey_state("ended", actor="test")
    for query in ({}, {"s": token}):
        shown = harness.app(**query)
        assert not shown.exception
        assert "This study is complete" in texts(shown)
        assert not shown.radio and not shown.checkbox
    at.switch_page("pages/survey.py").run()
    assert "This study is complete" in texts(at)


def test_unexpected_error_shows_a_calm_message_not_a_traceback(harness: Harness, monkeypatch) -> None:
    at = start(harness)
    token = at.query_params["s"]

    def broken(*args, **kwargs):
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr("ui.session.resolve_step", broken)
    again = harness.app(s=token)
    assert not again.exception
    assert "Something went wrong on our side" in again.error[0].value
    assert "boom" not in texts(again)


def test_failed_save_is_reported_and_nothing_is_lost(harness: Harness, monkeypatch) -> None:
    def disk_full(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("ui.answers.record_choice", disk_full)
    at = begin(start(harness))
    at.radio(key="turing-0-choice").set_value("A")
    at.button[0].click().run()
    assert not at.exception
    assert "could not be saved" in at.error[0].value, texts(at)
    assert at.radio(key="turing-0-choice") is not None  # still on the same question
    assert harness.store.answers() == []


def test_demo_study_first_screen(make_harness, tmp_path) -> None:
    h = make_harness(config=ROOT / "config.toml")
    at = h.app()
    assert at.title[0].value.startswith("Real or generated?")
    at = start(h)
    session = session_of(h, at)
    step = current_step(h.loaded.study, questions(h, session), h.store.progress(session.session_id))
    assert step.kind == "triplet" and step.index == 0


# ----------------------------------------------------------------------------- page config and choice layout


@pytest.fixture
def page_configs(monkeypatch) -> list[dict]:
    """Every st.set_page_config call of the runs that follow (layout, icon)."""
    import streamlit

    calls: list[dict] = []
    real = streamlit.set_page_config

    def record(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(streamlit, "set_page_config", record)
    return calls


def layouts(calls: list[dict]) -> list[str]:
    return [c["layout"] for c in calls if c.get("layout")]


def test_each_screen_sets_one_layout_from_the_start_and_a_local_icon(harness: Harness, page_configs) -> None:
    from pathlib import Path

    at = harness.app()  # consent: centred from the first message on, never wide first
    assert layouts(page_configs) and set(layouts(page_configs)) == {"centered"}
    icons = [c["page_icon"] for c in page_configs if c.get("page_icon")]
    assert icons and all(Path(i).is_file() and not i.startswith(":") for i in icons)  # no :material/ icon
    page_configs.clear()
    at = start(harness)  # the first task's instructions: centred
    assert layouts(page_configs)[-1] == "centered" and "wide" not in layouts(page_configs)[-1:]
    page_configs.clear()
    begin(at)  # the question: wide, set once
    assert layouts(page_configs) == ["wide"]
    page_configs.clear()
    at.switch_page("pages/results.py").run()  # the results page stays wide
    assert layouts(page_configs)[-1] == "wide"


def test_choice_sits_with_the_cards_aligned_one_option_per_card(harness: Harness) -> None:
    at = begin(start(harness))
    assert "Topic: Alpha" in texts(at) or "Topic: Beta" in texts(at)  # a display name, not the raw key
    radio = at.radio(key="turing-0-choice")
    assert radio.value is None and radio.options == ["Review A", "Review B", "Review C"]
    # the cards and the choice are in one form (no separate box), and the options are laid out as one
    # column per card, in the cards' order
    [form] = at.get("form")
    inside: list = []

    def walk(node) -> None:
        inside.append(node)
        children = getattr(node, "children", None) or {}
        for child in (children.values() if isinstance(children, dict) else children):
            walk(child)

    walk(form)
    [cards_element] = [n for n in inside if getattr(n, "type", "") == "html" and "evalkit-card" in n.proto.body]
    assert all(f"Review {label}</p>" in cards_element.proto.body for label in "ABC")
    assert [n.key for n in inside if getattr(n, "type", "") == "radio"] == ["turing-0-choice"]
    css = "\n".join(h.proto.body for h in at.get("html"))
    assert ".st-key-turing-0-choice" in css and "repeat(3," in css
