"""Real browser: the ``examples/crowd`` study (a background form, a tutorial, two silent attention checks, pass /
fail codes, k = 3 judgments per item from the shared queue, and the redirect back to the platform) completed
twice in Chromium against ``streamlit run``: once answering the checks right (pass code, at 1280 px) and once
wrong (fail code, at 390 px). The database is checked after each: the form's answers, every question answered
once, the check columns, every try of the tutorial, the queue's claims (the items shown are the ones claimed,
never one twice for an evaluator), the code in the session row, and the automatic redirect carrying the code.
Screenshots: ``test-output/screens/crowd-*.png``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from evalkit.balance import arrival_of
from evalkit.config import open_study
from evalkit.queue import parse_unit
from evalkit.sampling import Question, plan
from evalkit.store import open_store
from tests.e2e.conftest import RESULTS_PASSWORD, docs_shot
from tests.e2e.steps import problems, token_of, wait_for_app_run
from tests.helpers import ROOT

SCREENS = ROOT / "test-output" / "screens"
PLATFORM = "http://127.0.0.1:9"  # never reached: the browser's requests to it are answered by the test


def crowd_copy(tmp: Path) -> Path:
    dest = tmp / "crowd"
    shutil.copytree(ROOT / "examples" / "crowd", dest, ignore=shutil.ignore_patterns("data"))
    config = dest / "config.toml"
    text = config.read_text(encoding="utf-8")
    text = text.replace('datasets = "../../datasets"', f'datasets = "{ROOT / "datasets"}"')
    text = text.replace("https://app.prolific.com/submissions/complete?cc={code}", PLATFORM + "/complete?cc={code}")
    text = text.replace("redirect_seconds = 5", "redirect_seconds = 3")
    config.write_text(text, encoding="utf-8")
    return config


def shot(page: Any, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"crowd-{name}.png"), full_page=True)


def answer(page: Any, q: Question, system: str | None) -> None:
    """Choose the reply of ``system`` (a check question's, whose order the plan knows), or Reply A."""
    label = "A" if system is None else q.labels[q.sources.index(system)]
    page.get_by_test_id("stRadio").get_by_text(f"Reply {label}", exact=True).click()  # the task's output_label
    page.get_by_role("button", name="Next", exact=True).click()
    wait_for_app_run(page)


def plan_of(config: Path, database: Path, token: str) -> list[Question]:
    """The plan of the session behind ``token`` (its seed and arrival from the database)."""
    loaded = open_study(config, database=database)
    with open_store(database) as store:
        session = store.get_session(token)
    return plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))


def begin_as(page: Any, url: str, pid: str) -> str:
    """Open the study as Prolific participant ``pid``, agree, start, and open the background form; the token."""
    page.goto(f"{url}/?PROLIFIC_PID={pid}&STUDY_ID=crowd1&SESSION_ID=se-{pid}")
    wait_for_app_run(page)
    docs_shot(page, "consent", width=1280)
    page.get_by_text("I agree to take part").click()
    page.get_by_role("button", name="Start the study").click()
    wait_for_app_run(page)
    token = token_of(page.url)
    page.get_by_role("button", name="Begin").click()  # the background form's instructions
    wait_for_app_run(page)
    return token


def run_evaluator(browser: Any, url: str, config: Path, database: Path, *, pid: str, width: int,
                  checks_right: bool) -> tuple[str, list[str]]:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 900})
    visited: list[str] = []

    def platform(route: Any) -> None:
        visited.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific</h1>")

    context.route(PLATFORM + "/**", platform)
    page = context.new_page()
    tag = "pass" if checks_right else "fail"
    try:
        token = begin_as(page, url, pid)
        expect(page.get_by_role("heading", name="About you")).to_be_visible()  # the background form first
        page.get_by_label("What is your native language?").fill(f"Language of {pid}")
        page.get_by_label("What is your native language?").press("Tab")
        wait_for_app_run(page)
        page.get_by_test_id("stRadio").get_by_text("Fluent", exact=True).click()
        wait_for_app_run(page)
        shot(page, f"form-{width}")
        page.get_by_role("button", name="Continue").click()
        wait_for_app_run(page)
        expect(page.get_by_role("heading", name="Compare two replies")).to_be_visible()
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        questions = plan_of(config, database, token)
        tutorial = questions[0]
        assert tutorial.check is not None and tutorial.check.type == "tutorial"
        expect(page.get_by_text("Practice question: this one is not counted.")).to_be_visible()
        answer(page, tutorial, "bad")  # a wrong practice answer: the feedback, and the question stays
        expect(page.get_by_text("Not quite.")).to_be_visible()
        assert "advertises the spa" in " ".join(problems(page))
        expect(page.get_by_text(f"Question 1 of {len(questions)}")).to_be_visible()
        shot(page, f"tutorial-feedback-{width}")
        docs_shot(page, "practice-question", width=1280)
        answer(page, tutorial, "good")
        for q in questions[1:]:
            expect(page.get_by_text(f"Question {q.index + 1} of {len(questions)}")).to_be_visible()
            assert problems(page) == [] and page.get_by_text("Practice question: this one is not counted.").count() == 0
            html = page.content()
            for secret in ("gold01", "gold02", "tutorial1", "attention", "C1A2B3", "C9FAIL"):
                assert secret not in html, secret
            if q.check is not None:
                shot(page, f"attention-check-{width}")
                answer(page, q, "good" if checks_right else "bad")
                assert problems(page) == []  # silent
            else:  # a question whose review and pair were claimed from the shared queue
                answer(page, q, None)
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
        code = "C1A2B3" if checks_right else "C9FAIL"
        expect(page.get_by_text(code, exact=True)).to_be_visible()
        expect(page.get_by_role("link", name="Return to the recruiting platform")).to_have_attribute(
            "href", f"{PLATFORM}/complete?cc={code}")
        shot(page, f"done-{tag}-{width}")
        docs_shot(page, "done", width=1280, height=480)
        page.wait_for_url(f"{PLATFORM}/complete?cc={code}", timeout=15_000)  # the automatic redirect
        return token, visited
    finally:
        context.close()


def check_database(database: Path, token: str, *, passed: bool) -> None:
    with open_store(database) as store:
        session = store.get_session(token)
        assert session.status == "completed" and session.completion_code == ("C1A2B3" if passed else "C9FAIL")
        assert {r.field: r.value for r in store.form_answers(token, "background")} == {
            "native_language": f"Language of {session.external_id}", "english": "Fluent", "age": None}
        answers = store.answers(token)
        assert sorted(a.question_index for a in answers) == list(range(7))  # each question once
        checks = {a.question_index: (a.check, a.check_passed) for a in answers if a.check}
        assert sorted(checks.values(), key=str) == sorted(
            [("tutorial", False), ("attention", passed), ("attention", passed)], key=str)
        tries = store.check_tries(token)
        tutorial = [t for t in tries if t["question_index"] == 0]
        assert [(t["attempt"], t["correct"]) for t in tutorial] == [(1, 0), (2, 1)]  # every try stored
        assert len(tries) == 4  # and one for each attention check
        queued = [a for a in answers if not a.check]  # the four questions dealt from the shared queue
        assert len({a.item_ids + tuple(sorted(a.sources)) for a in queued}) == 4  # never one unit twice
        claims = store.progress(token).claims.get("replies", {})
        if passed:  # each kept its claim: the item and systems shown are the claimed unit's
            assert sorted(claims) == sorted(a.question_index for a in queued)
            for a in queued:
                item, systems = parse_unit(claims[a.question_index])
                assert a.item_ids == (item,) and sorted(a.sources) == sorted(systems)
        else:  # a failed evaluator's claims went back to the queue when they finished (the answers stay)
            assert claims == {}
        status = store.queue_status("replies", 3)
        assert status.live == 0 and status.units == 24


def test_crowd_study_pass_and_fail(start_app, browser, tmp_path) -> None:
    config = crowd_copy(tmp_path)
    database = tmp_path / "crowd.sqlite"
    url = start_app(config, database, "crowd")
    token, visited = run_evaluator(browser, url, config, database, pid="PASS1", width=1280, checks_right=True)
    check_database(database, token, passed=True)
    assert visited == [f"{PLATFORM}/complete?cc=C1A2B3"]
    token, visited = run_evaluator(browser, url, config, database, pid="FAIL1", width=390, checks_right=False)
    check_database(database, token, passed=False)
    assert visited == [f"{PLATFORM}/complete?cc=C9FAIL"]
    with open_store(database) as store:  # least-judged first: two evaluators of 4 questions, 8 distinct units;
        # the one who failed the checks gave their 4 back (their answers stay stored), so 4 judgments count
        assert len({a.item_ids + a.sources for a in store.answers(task="replies") if not a.check}) == 8
        status = store.queue_status("replies", 3)
        assert status.judged == 4 and status.judgments == {0: 20, 1: 4, 2: 0, 3: 0}
    results_page(browser, url)


def results_page(browser: Any, url: str) -> None:
    """The researcher's view: the failed evaluator is left out by default, and the evaluator table shows each
    evaluator's checks (screenshots at 1280 and 390 px)."""
    from playwright.sync_api import expect

    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 1400})
        page = context.new_page()
        try:
            page.goto(f"{url}/results")
            wait_for_app_run(page)
            page.get_by_test_id("stTextInputField").fill(RESULTS_PASSWORD)
            page.get_by_role("button", name="Unlock").click()
            wait_for_app_run(page)
            counted = page.get_by_test_id("stMetric").filter(has_text="Evaluators counted")
            expect(counted.get_by_test_id("stMetricValue")).to_have_text("1", timeout=20_000)  # FAIL1 left out
            shot(page, f"results-overview-{width}")
            docs_shot(page, "results-overview", width=1280)
            page.get_by_role("tab", name="Evaluators").click()
            wait_for_app_run(page)
            expect(page.get_by_text("Leave out failed evaluators")).to_be_visible()
            shot(page, f"results-evaluators-{width}")
        finally:
            context.close()


def test_a_participant_who_waits_on_the_form_until_the_study_fills_gets_no_pass_code(start_app, browser,
                                                                                        tmp_path) -> None:
    """Issue 25: open the study early, wait on the background form while others take every judgment, continue.
    The practice question (and any attention check planned before the first queued question) may still be shown;
    then the study is full: no pass code, no redirect, a request to return the study, the outcome stored."""
    from playwright.sync_api import expect

    config = crowd_copy(tmp_path)
    database = tmp_path / "crowd.sqlite"
    url = start_app(config, database, "crowd-full")
    context = browser.new_context(viewport={"width": 390, "height": 900})
    visited: list[str] = []
    context.route(PLATFORM + "/**", lambda route: visited.append(route.request.url) or route.fulfill(
        status=200, content_type="text/html", body="<h1>Prolific</h1>"))
    page = context.new_page()
    try:
        token = begin_as(page, url, "WAIT1")  # the background form, left open while others work
        with open_store(database) as store:  # 18 evaluators' worth of claims: every unit has k = 3 (live claims)
            for n in range(3):
                other = store.create_session(study_version="other", evaluator_name=f"other{n}")
                taken = 0
                while store.claim("replies", other.session_id, taken, k=3, expire_seconds=1800) is not None:
                    taken += 1
                assert taken == 24
            assert store.queue_status("replies", 3).full
        page.get_by_label("What is your native language?").fill("Dutch")
        page.get_by_label("What is your native language?").press("Tab")
        wait_for_app_run(page)
        page.get_by_test_id("stRadio").get_by_text("Native", exact=True).click()
        wait_for_app_run(page)
        page.get_by_role("button", name="Continue").click()
        wait_for_app_run(page)
        if page.get_by_role("button", name="Begin").count():  # the task's instructions
            page.get_by_role("button", name="Begin").click()
            wait_for_app_run(page)
        questions = plan_of(config, database, token)
        for q in questions:  # the checks before the first queued question, if any; never a queued one
            if q.check is None:
                break
            answer(page, q, "good")
        expect(page.get_by_role("heading", name="This study is full")).to_be_visible()
        expect(page.get_by_text("Please return this study")).to_be_visible()
        html = page.content()
        assert "C1A2B3" not in html and "C9FAIL" not in html
        assert page.get_by_test_id("stCode").count() == 0
        shot(page, "full-390")
        page.set_viewport_size({"width": 1280, "height": 900})
        shot(page, "full-1280")
        page.wait_for_timeout(4000)  # longer than redirect_seconds: no redirect
        assert visited == [] and token_of(page.url) == token
    finally:
        context.close()
    with open_store(database) as store:
        done = store.get_session(token)
        assert done.completed_at and done.completion_code is None and done.meta["outcome"] == "full"
        assert [a for a in store.answers(token) if not a.check] == []  # no judgment was made
