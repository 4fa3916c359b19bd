"""The app on PostgreSQL (AppTest, a real server): the whole study through a server restart, a click while
the database is down, the ``database_url`` secret, and set-up messages without the password."""

from __future__ import annotations

import pytest

from evalkit.store import open_store
from evalkit.store.postgres import PostgresStore
from tests.apptest.conftest import Harness, button, texts
from tests.apptest.test_results_page import capture_downloads, fill, results_app, unlock
from tests.apptest.test_survey_pages import begin, fill_rating, questions, session_of, start
from tests.pg import PASSWORD
from tests.test_copy_and_urls import cli


def answer_current(at, task: str, index: int, choice: str = "B"):
    """Choose ``choice`` on the question ``task``/``index`` on screen and click Next."""
    at.radio(key=f"{task}-{index}-choice").set_value(choice)
    at.button[0].click().run()
    assert not at.exception
    return at


def test_the_whole_study_on_postgresql_through_a_server_restart(make_harness, pg_server, pg_url) -> None:
    h: Harness = make_harness(database=pg_url)
    at = begin(start(h))
    session = session_of(h, at)
    plan = questions(h, session)
    turing = [q for q in plan if q.task == "turing"]
    natural = [q for q in plan if q.task == "natural"]
    at = answer_current(at, "turing", 0)
    pg_server.restart()  # every connection of the app's pool drops; the app is not restarted
    for q in turing[1:]:
        at = answer_current(at, "turing", q.index)
    at = begin(at)
    for q in natural:
        at = answer_current(at, "natural", q.index, "A")
    pg_server.terminate(pg_url.rsplit("/", 1)[1])  # pg_terminate_backend, as a managed host does to idle ones
    at = begin(at)
    at.selectbox(key="novelty-0-item").select("paper1").run()
    fill_rating(at, 0, {"familiarity": 4, "specificity": 2, "factuality": 5})
    button(at, "Save and finish").click().run()
    assert not at.exception and at.title[0].value == "Thank you!"
    done = h.store.get_session(session.session_id)
    assert done.status == "completed" and at.code[0].value == done.completion_code
    answers = h.store.answers(session.session_id)
    assert sorted((a.task, a.question_index) for a in answers) == sorted((q.task, q.index) for q in plan)
    assert len(h.store.ratings(session.session_id)) == 3


def test_a_click_while_the_database_is_down_says_so_and_the_next_click_works(
        make_harness, pg_server, pg_url, monkeypatch) -> None:
    monkeypatch.setitem(PostgresStore.__init__.__kwdefaults__, "pool_timeout", 1.0)  # fail fast in the test
    h: Harness = make_harness(database=pg_url)
    at = begin(start(h))
    at.radio(key="turing-0-choice").set_value("C")
    pg_server.stop()
    try:
        at.button[0].click().run()
        assert not at.exception
        shown = texts(at)
        assert "could not be saved" in shown or "cannot reach its database" in shown, shown
        assert PASSWORD not in shown and "Traceback" not in shown
    finally:
        pg_server.start()
    if "cannot reach its database" not in shown:  # the save failed, the page's own read did not (yet)
        at.run()
        assert "cannot reach its database" in texts(at) or at.radio(key="turing-0-choice") is not None
    if "cannot reach its database" in texts(at):
        button(at, "Try again").click().run()  # the button under the message: the page comes back
    assert not at.exception
    assert at.radio(key="turing-0-choice") is not None  # the same question, nothing lost
    at = answer_current(at, "turing", 0, "C")
    assert [(a.question_index, a.response) for a in h.store.answers()] == [(0, "C")]


def test_the_database_url_secret_is_used_and_evalkit_database_wins(make_harness, pg_url, monkeypatch,
                                                                   tmp_path) -> None:
    h: Harness = make_harness()
    monkeypatch.delenv("EVALKIT_DATABASE")
    at = h.app(secrets={"database_url": pg_url})
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Secret")
    at.button[0].click().run()
    assert not at.exception
    with open_store(pg_url) as store:
        assert [s.evaluator_name for s in store.sessions()] == ["Secret"]
    assert not h.database.exists()  # nothing went to the configured SQLite file
    sqlite_path = tmp_path / "override.sqlite"
    monkeypatch.setenv("EVALKIT_DATABASE", str(sqlite_path))
    at = h.app(secrets={"database_url": pg_url})
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Env")
    at.button[0].click().run()
    with open_store(sqlite_path) as store:
        assert [s.evaluator_name for s in store.sessions()] == ["Env"]


@pytest.mark.parametrize("problem", ["password", "server"])
def test_set_up_errors_on_postgresql_never_show_the_password(make_harness, pg_url, monkeypatch, problem) -> None:
    url = (pg_url.replace(PASSWORD, "Wr0ng-pass") if problem == "password"
           else f"postgresql://evalkit:{PASSWORD}@127.0.0.1:1/evalkit")
    h: Harness = make_harness()
    monkeypatch.setenv("EVALKIT_DATABASE", url)
    at = h.app()
    assert not at.exception
    shown = texts(at)
    if problem == "password":  # the server answered: a set-up mistake
        assert "The study is not set up correctly" in shown and "password authentication failed" in shown
        assert "postgresql://evalkit:***@127.0.0.1" in shown
    else:  # no server answered: maybe it is restarting; a retry tries again. No server details for evaluators
        assert "cannot reach its database just now" in shown and "127.0.0.1" not in shown
    assert PASSWORD not in shown and "Wr0ng-pass" not in shown


def test_the_results_page_on_postgresql_shows_the_numbers_report_prints(make_harness, pg_url, monkeypatch) -> None:
    monkeypatch.delenv("EVALKIT_RESULTS_PASSWORD", raising=False)
    h = make_harness(database=pg_url)
    fill(h, 5)
    generators = capture_downloads(monkeypatch)
    at = unlock(results_app(h))
    assert not at.exception
    assert "postgresql://evalkit:***@127.0.0.1" in " ".join(c.value for c in at.caption)
    page_csv = generators["results.csv"]()
    assert page_csv == cli("report", "--db", pg_url, "--format", "csv").stdout
    assert generators["results.tex"]() == cli("report", "--db", pg_url, "--format", "latex").stdout
