"""AppTest tests of the fatigue limits ([study.session]) on the ``examples/crowd`` study (a practice question,
three questions and two attention checks): the session ends after ``questions`` judgments and after
``max_minutes``, with the answer just given stored and a kind done screen; the break screen after every
``pause_every`` judgments and its "Continue"; a bad key is a set-up error naming it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import evalkit.store.sessions
import evalkit.survey
from tests.apptest.conftest import Harness, button, has_button, texts
from tests.apptest.test_checks_app import choose, crowd, pick, questions, start


def limited(tmp: Path, text: str) -> Path:
    """A copy of the crowd example with ``[study.session]`` holding ``text``."""
    config = crowd(tmp)
    config.write_text(config.read_text(encoding="utf-8") + f"\n[study.session]\n{text}\n", encoding="utf-8")
    return config


def counted(q) -> bool:
    return not (q.check is not None and q.check.type == "tutorial")


def test_the_session_ends_after_the_question_limit_with_the_pass_code(make_harness, tmp_path) -> None:
    h: Harness = make_harness(config=limited(tmp_path, "questions = 3"))
    at = start(h)
    qs = questions(h, at)
    assert not counted(qs[0]) and sum(map(counted, qs)) == 5  # the practice question does not count
    made = 0
    for q in qs:
        assert at.title == [] or at.title[0].value != "Thank you!"
        choose(at, q, pick(q, checks_right=True))
        made += counted(q)
        if made == 3:
            break
    # the third judgment was stored, then the rest was skipped
    answers = h.store.answers()
    assert len(answers) == 4 and sum(a.check != "tutorial" for a in answers) == 3
    assert at.title[0].value == "Thank you!", texts(at)
    assert "you have answered all the questions this study asks of one person; your answers are saved" in texts(at)
    session = h.store.get_session(at.query_params["s"])
    assert session.completed_at and session.meta["limit"] == "questions"
    assert session.completion_code == "C1A2B3" == at.code[0].value  # not at fault: the pass code
    again = h.app(s=at.query_params["s"])  # a reload stays on the done screen with the same code and text
    assert again.code[0].value == "C1A2B3" and "all the questions" in texts(again)


def test_a_session_started_longer_ago_than_max_minutes_ends_at_its_next_question(make_harness, tmp_path,
                                                                                monkeypatch) -> None:
    h: Harness = make_harness(config=limited(tmp_path, "max_minutes = 30"))
    past = (datetime.now(UTC) - timedelta(minutes=31)).isoformat(timespec="milliseconds")
    with monkeypatch.context() as patch:  # a session whose clock started 31 minutes ago, made by the store
        patch.setattr(evalkit.store.sessions, "now_iso", lambda: past)
        old = h.store.create_session(study_version=h.loaded.version, seed=3)
    assert old.started_at == past
    at = h.app(s=old.session_id)
    assert not at.exception
    assert at.title[0].value == "Thank you!" and "you reached the time limit of this study" in texts(at)
    assert "your answers are saved" in texts(at)
    done = h.store.get_session(old.session_id)
    # it made no judgment before its time ran out: no pass code (issue 25: open the study, wait, collect the code)
    assert done.meta == {"limit": "time", "arrival": 0, "outcome": "incomplete"} and done.completion_code == "C9FAIL"
    # a session that has just started is not touched by the limit
    fresh = start(h, "pid-new")
    assert has_button(fresh, "Next") and "Thank you!" not in texts(fresh)


def test_the_answer_given_when_the_time_runs_out_is_stored_first(make_harness, tmp_path, monkeypatch) -> None:
    h: Harness = make_harness(config=limited(tmp_path, "max_minutes = 30"))
    at = start(h)
    qs = questions(h, at)
    choose(at, qs[0], "good")  # the practice question
    assert "Thank you!" not in texts(at)

    class Later(datetime):
        @classmethod
        def now(cls, tz=None):  # 31 minutes from now, as the survey's clock sees it
            return datetime.now(tz) + timedelta(minutes=31)

    monkeypatch.setattr(evalkit.survey, "datetime", Later)
    choose(at, qs[1], pick(qs[1], checks_right=True))
    assert [a.question_index for a in h.store.answers()] == [qs[0].index, qs[1].index]  # stored, then the end
    assert at.title[0].value == "Thank you!" and "time limit" in texts(at)
    assert h.store.get_session(at.query_params["s"]).meta["limit"] == "time"


def test_a_break_after_every_n_judgments_and_continue_goes_on(make_harness, tmp_path) -> None:
    h: Harness = make_harness(config=limited(tmp_path, "pause_every = 2"))
    at = start(h)
    qs = questions(h, at)
    made, breaks = 0, []
    for k, q in enumerate(qs):
        assert "Take a short break" not in texts(at)
        choose(at, q, pick(q, checks_right=True))
        made += counted(q)
        if k == len(qs) - 1:
            break
        if made % 2 == 0 and counted(q):
            breaks.append(made)
            assert at.header[0].value == "Take a short break", texts(at)
            assert f"You have answered **{made} questions** so far" in "\n".join(m.value for m in at.markdown)
            assert not has_button(at, "Next") and len(h.store.answers()) == k + 1
            if made == 2:  # a reload at that moment shows the break again (the count comes from the store)
                reloaded = h.app(s=at.query_params["s"])
                assert reloaded.header[0].value == "Take a short break"
            button(at, "Continue").click().run()
            assert not at.exception and "Take a short break" not in texts(at)
            assert has_button(at, "Next")  # the next question
    assert breaks == [2, 4]  # 5 judgments: after the 2nd and the 4th, none after the last
    assert at.title[0].value == "Thank you!" and "You have finished the study" in texts(at)
    assert "limit" not in h.store.get_session(at.query_params["s"]).meta


@pytest.mark.parametrize(("text", "needle"), [
    ("questions = 0", "[study.session]: key 'questions': must be at least 1, got 0"),
    ("pause_evry = 5", "[study.session]: key 'pause_evry': is not a known setting (did you mean 'pause_every'?)"),
])
def test_a_bad_session_key_is_a_set_up_error_naming_it(make_harness, tmp_path, text: str, needle: str) -> None:
    h: Harness = make_harness(config=limited(tmp_path, text))
    at = h.app()
    assert not at.exception and "not set up correctly" in at.error[0].value
    assert needle in at.code[0].value


def test_the_evaluator_table_shows_which_limit_ended_a_session(make_harness, tmp_path, monkeypatch) -> None:
    from tests.apptest.test_results_page import results_app, unlock

    monkeypatch.delenv("EVALKIT_RESULTS_PASSWORD", raising=False)
    h: Harness = make_harness(config=limited(tmp_path, "questions = 1"))
    at = start(h)
    for q in questions(h, at):
        choose(at, q, pick(q, checks_right=True))
        if counted(q):
            break
    assert at.code[0].value == "C1A2B3"
    results = unlock(results_app(h))
    [evaluators] = [d.value for d in results.dataframe if "Ended by limit" in d.value.columns]
    assert list(evaluators["Ended by limit"]) == ["questions"]
