"""The demo study, unchanged, on ``EVALKIT_DATABASE=postgresql://...``: real `streamlit run` servers on a
PostgreSQL server the tests start (tests/pg.py), restarted under them.

- a real browser completes the study, the database server restarts, a second evaluator completes it without
  restarting Streamlit;
- websocket-protocol evaluators (bench/ws_client.py) answer through a database restart and a dropped-connection
  storm: everyone finishes, no answer is lost or doubled;
- two `streamlit run` processes share one database under load;
- what an evaluator sees when they click while the database is down (screenshots in test-output/e2e/).

Every check reads PostgreSQL itself: one row per (session, task, question_index), compared with each
session's plan.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from bench.ws_client import Evaluator
from evalkit.config import RatingTask, open_study
from evalkit.sampling import plan
from tests.e2e.conftest import OUT, StartApp
from tests.e2e.steps import choose, complete_study, problems, start_session, wait_for_app_run
from tests.helpers import ROOT
from tests.pg import PASSWORD, PgServer

pytestmark = pytest.mark.e2e

DEMO = ROOT / "config.toml"  # the demo study, as shipped; only its database is replaced
UNAVAILABLE_WARNING = "The survey cannot reach its database just now"
PERCENT = re.compile(r"(\d+)% of the study done")


# ----------------------------------------------------------------------------- checks


def check_stored_once(url: str, tokens: Iterable[str], *, only: bool = True) -> None:
    """Every session in ``tokens`` is completed and holds each planned answer exactly once, and exactly one
    rated item with each of its questions once. With ``only``, the database holds no other session;
    otherwise other sessions may exist but must hold nothing (a start whose confirmation was lost)."""
    import psycopg

    tokens = list(tokens)
    loaded = open_study(DEMO, database=url)
    [rating] = [t for t in loaded.study.tasks if isinstance(t, RatingTask)]
    with psycopg.connect(url) as conn:
        sessions = {s: (seed, status) for s, seed, status in conn.execute(
            "SELECT session_id, seed, status FROM sessions")}
        answers = Counter(conn.execute("SELECT session_id, task, question_index FROM evaluations").fetchall())
        ratings = Counter(conn.execute("SELECT session_id, task, question_index, metric FROM ratings").fetchall())
        finished = Counter(conn.execute("SELECT session_id, task FROM task_status").fetchall())
    assert len(set(tokens)) == len(tokens)
    assert set(tokens) <= set(sessions), set(tokens) - set(sessions)
    others = set(sessions) - set(tokens)
    if only:
        assert not others, f"sessions nobody started: {others}"
    holding = {key[0] for key in (*answers, *ratings, *finished)}
    assert not holding & others, f"answers in sessions no evaluator finished: {holding & others}"
    doubled = {key: n for key, n in (*answers.items(), *ratings.items(), *finished.items()) if n != 1}
    assert not doubled, f"stored more than once: {doubled}"
    for token in tokens:
        seed, status = sessions[token]
        assert status == "completed", (token, status)
        planned = sorted((q.task, q.index) for q in plan(loaded.study, loaded.pools, seed))
        stored = sorted((task, index) for s, task, index in answers if s == token)
        assert stored == planned, (token, stored, planned)
        scored = sorted((task, index, metric) for s, task, index, metric in ratings if s == token)
        assert scored == sorted((rating.id, 0, m.id) for m in rating.questions), (token, scored)


def never_asked_again(evaluator: Evaluator) -> None:
    """The evaluator's progress bar only ever moved forward: no answer the screen had moved past was asked
    again (which is how a confirmed answer lost by the database would show)."""
    shown = [t for k, t in enumerate(evaluator.progress) if k == 0 or t != evaluator.progress[k - 1]]
    percents = [int(PERCENT.search(t).group(1)) for t in shown]
    assert len(percents) >= 10 and percents == sorted(set(percents)), (evaluator.name, shown)


def answers_stored(url: str) -> int:
    """How many answers the database at ``url`` holds (0 before the app has created its tables)."""
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as conn:
        try:
            return conn.execute("SELECT count(*) FROM evaluations").fetchone()[0]
        except psycopg.errors.UndefinedTable:
            return 0


def answers_stored_or_none(url: str) -> int | None:
    """:func:`answers_stored`, or None when the database cannot be reached."""
    import psycopg

    try:
        return answers_stored(url)
    except psycopg.OperationalError:
        return None


def wait_for(condition: Callable[[], bool], crowd: Future, what: str, timeout: float = 240) -> None:
    """Poll ``condition`` until it holds; fail if the crowd ended first (its error is raised) or on timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        if crowd.done():
            crowd.result()
            pytest.fail(f"the evaluators finished before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(0.1)  # polling the database: it gives no signal


@contextlib.contextmanager
def running(evaluators: list[Evaluator]) -> Iterator[Future]:
    """Run every evaluator at once in a thread of its own (Playwright's sync API may hold this thread's
    event loop); yields the future of their session tokens."""
    async def everyone() -> list[str]:
        return list(await asyncio.gather(*(e.run() for e in evaluators)))

    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(asyncio.run, everyone())


def reload_while_unavailable(page, max_reloads: int = 15) -> int:
    """Reload the page, as the app's warning asks, until it no longer says the database cannot be reached
    (the connection pool reconnects with a growing delay after an outage); returns the number of reloads."""
    for reloads in range(1, max_reloads + 1):
        page.reload()
        wait_for_app_run(page, timeout=60_000)
        if not page.get_by_text(UNAVAILABLE_WARNING).count():
            return reloads
    pytest.fail(f"the app still could not reach its database after {max_reloads} reloads")


def secret_kept(*log_names: str) -> None:
    """The database password appears in no server log."""
    for name in log_names:
        text = (OUT / f"{name}.log").read_text()
        assert PASSWORD not in text, f"the database password is in {name}.log"


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[1]


# ----------------------------------------------------------------------------- tests


def test_a_browser_completes_the_demo_study_before_and_after_a_database_restart(
        pg_server: PgServer, pg_url: str, start_app: StartApp, browser) -> None:
    from playwright.sync_api import expect

    url = start_app(DEMO, pg_url, "server-pg-browser")
    first = browser.new_context(viewport={"width": 1280, "height": 1500})
    page = first.new_page()
    token1, code1 = complete_study(page, url, "Before Restart")

    pg_server.restart()  # every connection of the server's pool drops; Streamlit keeps running

    page.reload()  # the first evaluator's completion page still works, with the same code
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert page.get_by_test_id("stCode").inner_text().strip() == code1
    first.close()
    second = browser.new_context(viewport={"width": 1280, "height": 1500})
    token2, code2 = complete_study(second.new_page(), url, "After Restart")
    second.close()

    assert code1 != code2
    check_stored_once(pg_url, [token1, token2])
    secret_kept("server-pg-browser")


def test_evaluators_answering_through_a_database_restart(pg_server: PgServer, pg_url: str,
                                                         start_app: StartApp) -> None:
    """A restart, then every connection dropped, then an outage long enough for evaluators to be told: all
    of them finish, retrying (clicking again, reloading) as the messages ask; nothing lost or doubled."""
    url = start_app(DEMO, pg_url, "server-pg-restart")
    evaluators = [Evaluator(url, f"restart {k}", think=(0.3, 1.0), rng=random.Random(k)) for k in range(12)]
    total = 10 * len(evaluators)  # the demo study: 5 triplets + 5 pairs each
    with running(evaluators) as crowd:
        wait_for(lambda: answers_stored(pg_url) >= total // 4, crowd, "a quarter of the answers were stored")
        pg_server.restart()
        at_restart = answers_stored(pg_url)
        wait_for(lambda: answers_stored(pg_url) >= total // 3, crowd, "a third of the answers were stored")
        # every connection of the pool, possibly mid-use (polled: just after the restart the pool may hold
        # none for a second, clicks then going through direct connections)
        dropped = []
        wait_for(lambda: dropped.append(pg_server.terminate(database_name(pg_url))) or sum(dropped) > 0, crowd,
                 "the app held a connection to terminate")
        wait_for(lambda: answers_stored(pg_url) >= total // 2, crowd, "half of the answers were stored")
        pg_server.stop()
        try:
            at_outage = answers_stored_or_none(pg_url)
            wait_for(lambda: any(e.reloads for e in evaluators), crowd,
                     "an evaluator was told that the database cannot be reached", timeout=180)
        finally:
            pg_server.start()
        tokens = crowd.result(timeout=600)

    assert at_restart < total and at_outage is None, "the restart came after the last answer, or the stop failed"
    check_stored_once(pg_url, tokens, only=False)
    for e in evaluators:
        never_asked_again(e)
    shown = Counter(a.split(".")[0] for e in evaluators for a in e.alerts)
    print(f"\nmessages the evaluators saw: {dict(shown)}; reloads: {sum(e.reloads for e in evaluators)}")
    assert not [a for e in evaluators for a in e.alerts if "Something went wrong" in a]
    secret_kept("server-pg-restart")


def test_two_servers_share_one_database_under_load(pg_url: str, start_app: StartApp) -> None:
    urls = [start_app(DEMO, pg_url, f"server-pg-{k}") for k in (1, 2)]  # both create the schema on first use
    evaluators = [Evaluator(urls[k % 2], f"shared {k}", rng=random.Random(100 + k)) for k in range(16)]
    with running(evaluators) as crowd:
        tokens = crowd.result(timeout=600)

    check_stored_once(pg_url, tokens)
    for e in evaluators:
        never_asked_again(e)
        assert e.alerts == [] and e.reloads == 0, (e.name, e.alerts)
    secret_kept("server-pg-1", "server-pg-2")


def test_a_click_while_the_database_is_down(pg_server: PgServer, pg_url: str, start_app: StartApp,
                                            browser) -> None:
    """The evaluator gets a calm message (screenshots at 1280 and 390 px), and once the database is back a
    reload shows the same question, whose answer is then stored once."""
    import psycopg
    from playwright.sync_api import expect

    url = start_app(DEMO, pg_url, "server-pg-down")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    token = start_session(page, url, "Down Evaluator")
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 1 of 5")).to_be_visible()
    choose(page, "Review B")
    pg_server.stop()
    try:
        clicked = time.monotonic()
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page, timeout=60_000)  # the save, then the page, each wait for the pool's timeout
        expect(page.get_by_text(UNAVAILABLE_WARNING)).to_be_visible(timeout=60_000)
        print(f"\nthe warning came {time.monotonic() - clicked:.1f} s after the click")
        assert problems(page) == [page.get_by_test_id("stAlertContentError").inner_text()]  # a failure: red
        page.screenshot(path=str(OUT / "pg-down-desktop.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(OUT / "pg-down-phone.png"), full_page=True)
    finally:
        pg_server.start()

    back = time.monotonic()
    reloads = reload_while_unavailable(page)  # what the message asks for
    print(f"\nthe question was back after {reloads} reload(s), {time.monotonic() - back:.1f} s after the "
          "database server was")
    assert problems(page) == []
    page.get_by_role("button", name="Begin").click()  # a reload is a new browser session: the task's intro again
    wait_for_app_run(page)
    expect(page.get_by_text("Question 1 of 5")).to_be_visible()
    assert problems(page) == []
    page.screenshot(path=str(OUT / "pg-back-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    choose(page, "Review B")
    page.get_by_role("button", name="Next", exact=True).click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 2 of 5")).to_be_visible()
    page.screenshot(path=str(OUT / "pg-back-desktop.png"), full_page=True)
    context.close()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT task, question_index, response FROM evaluations WHERE session_id = %s",
                            (token,)).fetchall()
    assert rows == [("turing", 0, "B")]
    secret_kept("server-pg-down")
