"""Fatigue limits ([study.session]): the config keys, the judgment count, the time and question limits, the pause
screen's decision, and how a session ended by a limit is completed and shown (no Streamlit)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from evalkit.analysis import ended_by_limit, quality_signals
from evalkit.config import ConfigError, SessionLimits, load_study, open_study
from evalkit.sampling import plan
from evalkit.store import Progress, Session, Store, open_store
from evalkit.survey import (
    current_step,
    done_text,
    finish_session,
    judged,
    limit_reached,
    pause_due,
    pause_text,
    record_choice,
    session_step,
    sweep_abandoned,
)
from tests.apptest.test_checks_app import crowd
from tests.helpers import make_token_study

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def with_limits(config: Path, text: str) -> Path:
    """The config with a ``[study.session]`` table holding ``text`` (at the end: TOML allows it there)."""
    config.write_text(config.read_text(encoding="utf-8") + f"\n[study.session]\n{text}\n", encoding="utf-8")
    return config


def session(started: datetime = START, *, meta: dict | None = None, completed: bool = False) -> Session:
    return Session("a" * 32, "Ada", "", 1, "v1", started.isoformat(timespec="milliseconds"),
                   START.isoformat() if completed else None, "", "completed" if completed else "active",
                   "CODE" if completed else None, meta or {})


def progress(answered: dict | None = None, rated: dict | None = None, finished: set | None = None) -> Progress:
    return Progress(answered=answered or {}, rated=rated or {}, finished=finished or set())


# ----------------------------------------------------------------------------- config


def test_the_keys_are_optional_and_read(tmp_path: Path) -> None:
    config = make_token_study(tmp_path)
    assert load_study(config).session == SessionLimits(None, None, None)
    with_limits(config, "max_minutes = 30\nquestions = 40\npause_every = 10")
    assert load_study(config).session == SessionLimits(max_minutes=30, questions=40, pause_every=10)


@pytest.mark.parametrize(("text", "needle"), [
    ("max_minutes = 0", "[study.session]: key 'max_minutes': must be at least 1, got 0"),
    ("questions = -3", "[study.session]: key 'questions': must be at least 1, got -3"),
    ("pause_every = 2.5", "[study.session]: key 'pause_every': must be an integer, got a number 2.5"),
    ("questions = \"40\"", "[study.session]: key 'questions': must be an integer, got a string '40'"),
    ("max_minutes = true", "[study.session]: key 'max_minutes': must be an integer, got a boolean True"),
    ("pause_evry = 10", "key 'pause_evry': is not a known setting (did you mean 'pause_every'?)"),
    ("max_questions = 10", "key 'max_questions': is not a known setting"),
    ("abandon_minutes = -1", "[study.session]: key 'abandon_minutes': must be at least 0, got -1"),
])
def test_bad_values_name_the_key(tmp_path: Path, text: str, needle: str) -> None:
    config = with_limits(make_token_study(tmp_path), text)
    with pytest.raises(ConfigError) as err:
        load_study(config)
    assert needle in str(err.value) and str(err.value).startswith("config.toml: ")


def test_abandon_minutes_default_and_the_throttled_sweep(tmp_path: Path) -> None:
    """``[study.session] abandon_minutes`` (default 60, 0 = never); the consent page's sweep asks the store at most
    once a minute per store."""
    from tests.test_store_contract import raw

    assert load_study(make_token_study(tmp_path / "a")).session.abandon_minutes == 60
    study = load_study(with_limits(make_token_study(tmp_path / "b"), "abandon_minutes = 1"))
    assert study.session.abandon_minutes == 1
    never = load_study(with_limits(make_token_study(tmp_path / "c"), "abandon_minutes = 0"))
    db = str(tmp_path / "db.sqlite")
    an_hour_ago = (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with open_store(db) as store:
        first, second = (store.create_session(study_version="v") for _ in range(2))
        raw(db, f"UPDATE sessions SET started_at = '{an_hour_ago}' WHERE session_id = '{first.session_id}'")
        assert sweep_abandoned(store, never, now=0.0) == []  # 0: never
        assert sweep_abandoned(store, study, now=1000.0) == [first.session_id]
        raw(db, f"UPDATE sessions SET started_at = '{an_hour_ago}' WHERE session_id = '{second.session_id}'")
        assert sweep_abandoned(store, study, now=1030.0) == []  # within a minute of the last sweep: not asked
        assert sweep_abandoned(store, study, now=1061.0) == [second.session_id]


def test_a_session_key_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    config = make_token_study(tmp_path)
    config.write_text(config.read_text().replace("[study]", "[study]\nsession = 30", 1))
    with pytest.raises(ConfigError, match=r"\[study.session\]: must be a table, got an integer"):
        load_study(config)


# ----------------------------------------------------------------------------- counting and limits


@pytest.fixture(scope="module")
def crowd_study(tmp_path_factory: pytest.TempPathFactory):
    """The crowd example (a practice question, 3 questions, 2 attention checks) with limits, and one plan."""
    config = crowd(tmp_path_factory.mktemp("crowd"))
    loaded = open_study(with_limits(config, "questions = 3\npause_every = 2\nmax_minutes = 30"))
    return loaded.study, plan(loaded.study, loaded.pools, 7, loaded.item_sets)


def test_judged_counts_answers_and_checks_but_not_practice_questions(crowd_study) -> None:
    _study, questions = crowd_study
    kinds = [q.check.type if q.check else "" for q in questions]
    assert kinds.count("tutorial") == 1 and kinds.count("attention") == 2 and len(questions) == 6
    tutorial = next(q for q in questions if q.check and q.check.type == "tutorial")
    attention = next(q for q in questions if q.check and q.check.type == "attention")
    assert judged(questions, progress({"replies": {tutorial.index}})) == 0
    assert judged(questions, progress({"replies": {tutorial.index, attention.index}})) == 1
    assert judged(questions, progress({"replies": {q.index for q in questions}})) == 5
    # rated items count one each; a form stores no answers, so nothing else counts
    assert judged([], progress({}, {"novelty": {0: "p0", 1: "p1"}}, {"about"})) == 2


def test_time_limit_with_an_injected_clock(crowd_study) -> None:
    study, _ = crowd_study
    s = session()
    assert limit_reached(study, s, 0, START + timedelta(minutes=29, seconds=59)) is None
    assert limit_reached(study, s, 0, START + timedelta(minutes=30)) == "time"
    assert limit_reached(study, s, 5, START + timedelta(hours=3)) == "time"  # time is named first
    # a stored time without an offset is UTC
    naive = session(START.replace(tzinfo=None))
    assert limit_reached(study, naive, 0, START + timedelta(minutes=31)) == "time"


def test_question_limit(crowd_study) -> None:
    study, _ = crowd_study
    s, now = session(), START + timedelta(minutes=1)
    assert [limit_reached(study, s, n, now) for n in (0, 2, 3, 4)] == [None, None, "questions", "questions"]
    unlimited = dataclasses.replace(study, session=SessionLimits())
    assert limit_reached(unlimited, s, 1000, START + timedelta(days=30)) is None


def test_session_step_skips_the_rest_once_a_limit_is_reached(crowd_study) -> None:
    study, questions = crowd_study
    counted = [q for q in questions if not (q.check and q.check.type == "tutorial")]
    tutorial = [q.index for q in questions if q.check and q.check.type == "tutorial"]
    early = START + timedelta(minutes=5)
    two = progress({"replies": {*tutorial, counted[0].index, counted[1].index}})
    step = session_step(study, session(), questions, two, early)
    assert step.kind == "compare" and step.judged == 2 and step.limit is None
    three = progress({"replies": {*tutorial, *(q.index for q in counted[:3])}})
    step = session_step(study, session(), questions, three, early)
    assert (step.kind, step.limit, step.task, step.question) == ("done", "questions", None, None)
    assert step.judged == 3 and step.answered < step.total  # the progress says what was skipped
    # time: ends at the next question, whatever was answered
    step = session_step(study, session(), questions, two, START + timedelta(minutes=30))
    assert (step.kind, step.limit) == ("done", "time")
    # a session whose steps are all done ended normally, even past the limits
    everything = progress({"replies": {q.index for q in questions}})
    step = session_step(study, session(), questions, everything, START + timedelta(days=1))
    assert (step.kind, step.limit) == ("done", None)
    # a session completed by a limit stays done with it (also if the config's limits changed since)
    stored = session(meta={"limit": "time"}, completed=True)
    assert session_step(study, stored, questions, progress(), early).limit == "time"
    assert current_step(study, questions, progress()).kind == "compare"  # current_step applies no limit


def test_pause_is_due_after_every_n_judgments_and_not_twice(crowd_study) -> None:
    study, questions = crowd_study
    counted = [q for q in questions if not (q.check and q.check.type == "tutorial")]
    tutorial = {q.index for q in questions if q.check and q.check.type == "tutorial"}
    now = START + timedelta(minutes=1)

    def step_after(n: int):
        return session_step(study, session(), questions, progress({"replies": tutorial | {q.index for q in
                                                                                          counted[:n]}}), now)

    assert [pause_due(study, step_after(n), None) for n in (0, 1, 2)] == [False, False, True]
    assert not pause_due(study, step_after(2), 2)  # dismissed at this count
    assert pause_due(study, step_after(2), 0)  # dismissed at another count: due again
    assert not pause_due(study, step_after(3), None)  # the question limit ended it: the done screen, no pause
    no_pause = dataclasses.replace(study, session=SessionLimits())
    assert not pause_due(no_pause, step_after(2), None)


def test_no_pause_before_a_form_or_after_the_last_question(tmp_path: Path) -> None:
    from evalkit.survey import Step

    loaded = open_study(with_limits(make_token_study(tmp_path), "pause_every = 1"))
    study = loaded.study
    base = Step("triplet", study.tasks[0], 1, 3, 1, None, 3, 1, 7, {}, judged=1)
    assert pause_due(study, base, None)
    assert not pause_due(study, Step("form", study.tasks[0], 1, 3, 0, None, 1, 1, 7, {}, judged=1), None)
    assert not pause_due(study, Step("done", None, 3, 3, 0, None, 0, 7, 7, {}, judged=1), None)


def test_pause_and_done_texts(crowd_study) -> None:
    study, questions = crowd_study
    step = session_step(study, session(), questions, progress({"replies": {1, 2}}), START)
    text = pause_text(study, step)
    assert f"You have answered **{step.judged} of at most 3 question" in text and "saved" in text
    assert "30 minutes at most, breaks included" in text
    assert "time limit" in done_text("time") and "saved" in done_text("time")
    assert "all the questions" in done_text("questions")
    assert done_text(None) == done_text("bogus") == ("You have finished the study and all your answers are saved. "
                                                     "You can close this page.")


# ----------------------------------------------------------------------------- completing a session ended by a limit


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def test_finish_session_records_the_limit_once_and_gives_the_pass_code(store: Store, crowd_study) -> None:
    study, questions = crowd_study
    s = store.create_session(study_version="v1", seed=7, meta={"prolific_pid": "p1"})
    right = next(q for q in questions if q.check and q.check.type == "attention")
    record_choice(store, s, right, right.labels[right.sources.index(right.check.want)], 100)
    done = finish_session(store, study, s.session_id, "questions")
    assert done.completion_code == "C1A2B3" and done.meta == {"prolific_pid": "p1", "limit": "questions", "arrival": 0}
    again = finish_session(store, study, s.session_id, "time")  # the first completion decides
    assert again.completion_code == "C1A2B3" and again.meta["limit"] == "questions"
    assert json.loads(store.table("sessions")[0]["meta"])["limit"] == "questions"
    with pytest.raises(ValueError, match="limit must be one of"):
        finish_session(store, study, s.session_id, "tired")


def test_a_limit_does_not_turn_failed_checks_into_a_pass(store: Store, crowd_study) -> None:
    study, questions = crowd_study
    s = store.create_session(study_version="v1", seed=7)
    check = next(q for q in questions if q.check and q.check.type == "attention")
    wrong = next(src for src in check.sources if src != check.check.want)
    record_choice(store, s, check, check.labels[check.sources.index(wrong)], 100)
    assert finish_session(store, study, s.session_id, "time").completion_code == "C9FAIL"
    normal = store.create_session(study_version="v1", seed=8)
    assert "limit" not in finish_session(store, study, normal.session_id).meta


def test_the_evaluator_table_says_which_limit_ended_a_session() -> None:
    sessions = pd.DataFrame({
        "session_id": ["s1", "s2", "s3", "s4"], "evaluator_name": ["a", "b", "c", "d"], "external_id": ["", "", "", ""],
        "status": ["completed"] * 4, "started_at": ["2026-01-01T00:00:00"] * 4,
        "completed_at": ["2026-01-01T00:10:00"] * 4,
        "meta": ['{"limit": "time"}', '{"prolific_pid": "x"}', None, '{"limit": "questions", "note": "limit"}']})
    assert list(ended_by_limit(sessions)) == ["time", "", "", "questions"]
    assert list(ended_by_limit(sessions.assign(meta=['{"limit": 3}', "not json \"limit\"", "", ""]))) == [""] * 4
    ev = pd.DataFrame({c: pd.Series(dtype=t) for c, t in [
        ("id", int), ("session_id", str), ("task", str), ("kind", str), ("response", str), ("review_source", str),
        ("time_spent_ms", float), ("slot", int)]})
    ratings = pd.DataFrame({c: pd.Series(dtype=t) for c, t in [
        ("session_id", str), ("task", str), ("question_index", int), ("item_id", str), ("time_spent_ms", float)]})
    q = quality_signals(sessions, ev, ratings)
    assert list(q["ended_by"]) == ["time", "", "", "questions"]
