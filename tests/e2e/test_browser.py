"""Real browser: Debian chromium + Playwright complete a whole study against `streamlit run`.

The study's source names are distinctive tokens (srcHumanQ7, ...) so that the
check "no source label in the page" can fail, and every human review of one
domain carries an XSS payload that must render as inert text. Screenshots of
every screen go to test-output/e2e/.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from tests.e2e.conftest import OUT, RESULTS_PASSWORD
from tests.e2e.steps import Screens, choose, move_slider, wait_for_app_run
from tests.helpers import SOURCES

pytestmark = pytest.mark.e2e


def test_a_new_evaluator_completes_the_whole_study(server, browser) -> None:
    from playwright.sync_api import expect

    url, config, database = server
    requests: list[str] = []
    dialogs: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 1500})
    context.on("request", lambda r: requests.append(r.url))  # every request of the session, every page
    # the main column's width on every animation frame: a layout jump would show up as a different width
    context.add_init_script("""
      window.__widths = [];
      const tick = () => {
        const main = document.querySelector('[data-testid=stMainBlockContainer]');
        if (main) window.__widths.push(Math.round(main.getBoundingClientRect().width));
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    """)
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    shots = Screens(page)

    # consent: centred from the first paint to the first click (never wide, then centred)
    page.goto(url)
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Token study")).to_be_visible()
    shots.capture("consent")
    page.get_by_text("I agree to take part").click()
    wait_for_app_run(page)
    widths = page.evaluate("() => window.__widths")
    assert widths and max(widths) <= 736, widths  # Streamlit's centred column; wide would be ~1120
    page.get_by_role("textbox", name="Your name").fill("Browser Evaluator")
    page.get_by_role("button", name="Start the study").click()
    wait_for_app_run(page)
    assert "s=" in page.url
    token = page.url.split("s=")[1].split("&")[0]
    shots.capture("task1-instructions")
    page.get_by_role("button", name="Begin").click()

    # triplets: a normal answer, a double-click, a refresh, a normal answer
    wait_for_app_run(page)
    expect(page.get_by_text("Question 1 of 3")).to_be_visible()
    shots.capture("triplet-1")
    # each option sits under its card, starting at the card's left edge; the cards are equally tall
    def card(label: str):
        label_line = page.locator(".evalkit-card-label").get_by_text(f"Review {label}", exact=True)
        return page.get_by_test_id("evalkit-card").filter(has=label_line)

    for label in "ABC":
        option = page.get_by_test_id("stRadio").get_by_text(f"Review {label}", exact=True)
        card_box, option_box = card(label).bounding_box(), option.bounding_box()
        assert card_box["x"] <= option_box["x"] <= card_box["x"] + 40, (label, card_box, option_box)
        assert option_box["y"] > card_box["y"] + card_box["height"]
    heights = {round(card(k).bounding_box()["height"]) for k in "ABC"}
    assert len(heights) == 1, heights
    choose(page, "Review A")
    page.get_by_role("button", name="Next").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 2 of 3")).to_be_visible()
    shots.capture("triplet-2")
    choose(page, "Review B")
    page.get_by_role("button", name="Next").dblclick()
    wait_for_app_run(page)
    page.wait_for_timeout(500)
    wait_for_app_run(page)
    expect(page.get_by_text("Question 3 of 3")).to_be_visible()
    with open_store(database) as store:  # the double click stored one answer and did not answer question 3
        assert sorted(a.question_index for a in store.answers(token, task="turing")) == [0, 1]
    page.reload()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 3 of 3")).to_be_visible()  # resumed at the first unanswered question
    assert token in page.url
    shots.capture("triplet-3-after-refresh")
    page.set_viewport_size({"width": 420, "height": 1500})
    shots.capture("triplet-3-narrow")
    boxes = [card(k).bounding_box() for k in "ABC"]  # on a phone the cards stand one under another
    assert len({round(b["x"]) for b in boxes}) == 1 and boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"], boxes
    assert all(b["width"] > 300 for b in boxes), boxes
    page.set_viewport_size({"width": 1280, "height": 1500})
    choose(page, "Review C")
    page.get_by_role("button", name="Next").click()

    # pairwise, HELP slider: accept at 0, then -40 and reject
    wait_for_app_run(page)
    shots.capture("task2-instructions")
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    shots.capture("pair-1")
    page.get_by_role("button", name="Accept: both are suitable").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 2 of 2")).to_be_visible()
    move_slider(page, 0, -40)
    shots.capture("pair-2")
    page.get_by_role("button", name="Reject: both are unsuitable").click()

    # rating
    wait_for_app_run(page)
    shots.capture("task3-instructions")
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    shots.capture("rating-choose")
    page.get_by_role("combobox").click()
    page.keyboard.type("Beta Paper")
    page.keyboard.press("Enter")
    wait_for_app_run(page)
    page.locator(".st-key-paper-graph [data-testid=stGraphVizChart] svg").wait_for(timeout=20_000)
    shots.capture("rating-item")
    # on a phone, the graph drawn for it (top to bottom, labels only): on the screen whole, its text legible
    page.set_viewport_size({"width": 390, "height": 1500})
    wait_for_app_run(page)
    svg = page.locator(".st-key-paper-graph-phone [data-testid=stGraphVizChart] svg")
    box = svg.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert not page.locator(".st-key-paper-graph").is_visible()  # the wide one is for wide screens only
    text_height = min(t.bounding_box()["height"] for t in svg.locator("text").all()[:5])
    assert text_height >= 9, text_height  # was about 5 px when the wide graph was shrunk to the column
    shots.capture("rating-item-narrow")
    page.set_viewport_size({"width": 1280, "height": 1500})
    wait_for_app_run(page)
    groups = page.get_by_role("radiogroup")
    assert groups.count() == 3  # familiarity + two metrics
    groups.nth(1).get_by_role("radio").nth(3).check(force=True)
    wait_for_app_run(page)
    page.get_by_role("button", name="Save and finish").click()
    wait_for_app_run(page)
    # the two unanswered questions are marked where they are; the message goes once they are answered
    marks = page.get_by_text("Please choose a score for this question.")
    expect(marks).to_have_count(2)
    expect(page.get_by_text("2 questions have no score yet")).to_be_visible()
    shots.capture("rating-validation")
    for k in (0, 2):
        page.get_by_role("radiogroup").nth(k).get_by_role("radio").nth(3).check(force=True)
        wait_for_app_run(page)
    expect(marks).to_have_count(0)
    expect(page.get_by_text("no score yet")).to_have_count(0)
    page.get_by_role("textbox", name="Comments (optional)").fill("Looks fine.")
    shots.capture("rating-filled")
    page.get_by_role("button", name="Save and finish").click()

    # completion
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    shots.capture("done")
    code = page.get_by_test_id("stCode").inner_text().strip()
    link = page.get_by_role("link", name="Return to the recruiting platform").get_attribute("href")
    assert link == f"https://example.org/done?cc={code}"
    context.close()

    # the XSS review was shown as text and loaded nothing
    shown = "".join(h for _, h, _ in shots.html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown  # the payload, as text
    assert "&lt;img src=x onerror=alert(2)&gt;" in shown and "onerror=alert(2)>" not in shown
    assert not [r for r in requests if "127.0.0.1:9/" in r or r.endswith("/x")]
    assert dialogs == []
    # nothing left this machine: no font, icon or favicon from a third party (fonts.gstatic.com, ...)
    assert requests and {urlsplit(r).hostname for r in requests if not r.startswith(("data:", "blob:"))} == {
        "127.0.0.1"}, sorted({r for r in requests if urlsplit(r).hostname != "127.0.0.1"})

    # the database: exactly one row per question, sources recorded server-side
    store = open_store(database)
    loaded = open_study(config, database=database)
    [session] = [s for s in store.sessions() if s.evaluator_name == "Browser Evaluator"]  # other tests share it
    assert session.session_id == token and session.status == "completed" and session.completion_code == code
    assert session.evaluator_name == "Browser Evaluator"
    assert session.user_agent == "", "the consent text says nothing else is collected: no user agent by default"
    answers = store.answers(session.session_id)
    questions = plan(loaded.study, loaded.pools, session.seed)
    assert sorted((a.task, a.question_index) for a in answers) == sorted((q.task, q.index) for q in questions)
    by_key = {(q.task, q.index): q for q in questions}
    for a in answers:
        q = by_key[(a.task, a.question_index)]
        assert a.sources == q.sources and a.item_ids == q.review_ids and a.time_spent_ms >= 0
    turing = sorted((a for a in answers if a.task == "turing"), key=lambda a: a.question_index)
    assert [a.response for a in turing] == ["A", "B", "C"]
    assert [a.review_source for a in turing] == [by_key[("turing", i)].source_of(lab)
                                                 for i, lab in enumerate("ABC")]
    natural = sorted((a for a in answers if a.task == "natural"), key=lambda a: a.question_index)
    assert [(a.response, a.detail["button"], a.detail["outcome"]) for a in natural] == [
        ("0", "accept", "positive_draw"), ("-40", "reject", "left")]
    assert all(a.left_source in SOURCES.values() and a.right_source in SOURCES.values() for a in natural)
    ratings = store.ratings(session.session_id)
    assert {(r.item_id, r.metric, r.score) for r in ratings if r.score is not None} == {
        ("paper1", "familiarity", 4), ("paper1", "specificity", 4), ("paper1", "factuality", 4)}
    assert [r.comment for r in ratings if r.metric == "comment"] == ["Looks fine."]
    store.close()


def main_width(page) -> str:
    """The CSS max-width of the page's main block: "none" in the wide layout, 736px in the centred one."""
    return page.get_by_test_id("stMainBlockContainer").evaluate("e => getComputedStyle(e).maxWidth")


def table_widths(page) -> list[tuple[int, int]]:
    """(scroll width, visible width) of every table drawn on the current tab (a collapsed expander's grid is
    not drawn); a table whose scroll width exceeds its visible width hides columns behind a scrollbar."""
    page.locator("[data-testid='stDataFrame'] .dvn-scroller").first.wait_for()
    page.wait_for_timeout(500)  # let every grid of the tab size its columns
    return page.evaluate("""() => [...document.querySelectorAll("[data-testid='stDataFrame'] .dvn-scroller")]
        .filter(s => s.offsetParent !== null && s.clientWidth > 0).map(s => [s.scrollWidth, s.clientWidth])""")


def all_fit(widths: list[tuple[int, int]]) -> bool:
    return all(scroll <= visible + 1 for scroll, visible in widths)


def test_results_page_login_live_update_and_csv_download(server, browser) -> None:
    import io

    import pandas as pd
    from playwright.sync_api import expect

    from evalkit.config import study_summary
    from evalkit.survey import record_choice, record_slider

    url, config, database = server
    loaded = open_study(config, database=database)
    with open_store(database) as store:  # three evaluators who finished the study (the test may run alone)
        store.register_study(loaded.version, study_summary(loaded.study))
        for k in range(3):
            done = store.create_session(study_version=loaded.version, evaluator_name=f"Finished Evaluator {k}")
            for i, q in enumerate(plan(loaded.study, loaded.pools, done.seed)):
                if q.kind == "pairwise":
                    record_slider(store, done, q, (-1) ** i * 20 * k, "accept", 3000 + 100 * i)
                elif q.labels:
                    record_choice(store, done, q, q.labels[(i + k) % len(q.labels)], 1500 + 700 * i)
            store.complete_session(done.session_id)
    # a researcher's laptop, in Berlin: the tables must fit at 1280 px and times show Berlin time
    context = browser.new_context(viewport={"width": 1280, "height": 1800}, accept_downloads=True,
                                  timezone_id="Europe/Berlin")
    page = context.new_page()
    page.goto(f"{url}/results")
    page.get_by_test_id("stTextInputField").wait_for()
    assert main_width(page) == "none"  # wide from the first render of the login form
    wait_for_app_run(page)
    password = page.get_by_test_id("stTextInputField")
    password.fill("not the password")
    page.get_by_role("button", name="Unlock").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Wrong password")).to_be_visible()
    assert "Evaluators counted" not in page.content()
    page.screenshot(path=str(OUT / "results-locked.png"))
    password.fill(RESULTS_PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    wait_for_app_run(page)

    def metric(label: str):
        return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")

    with open_store(database) as store:
        before = len(store.answers())
    expect(metric("Answers")).to_have_text(str(before), timeout=20_000)
    wait_for_app_run(page)
    assert main_width(page) == "none"  # and after login
    page.screenshot(path=str(OUT / "results-overview.png"))
    widths = table_widths(page)
    assert len(widths) >= 4 and all_fit(widths), widths  # every column of every table visible
    page.get_by_role("tab", name="Evaluators").click()
    wait_for_app_run(page)
    page.screenshot(path=str(OUT / "results-evaluators.png"))
    widths = table_widths(page)
    assert len(widths) == 1 and all_fit(widths), widths
    expect(page.get_by_text("Times in Europe/Berlin")).to_be_visible()
    page.get_by_role("tab", name="Overview").click()
    # with no new answers the watcher's ticks (every 3 s) render nothing again: the page keeps its time
    updated = page.get_by_test_id("stCaptionContainer").filter(has_text=re.compile(r"^Updated \d\d:\d\d:\d\d"))
    rendered = updated.inner_text()
    page.wait_for_timeout(7_000)
    assert updated.inner_text() == rendered

    # another evaluator answers, in another session and process: the page updates without a click
    with open_store(database) as store:
        other = store.create_session(study_version=loaded.version, evaluator_name="Live Evaluator")
        question = plan(loaded.study, loaded.pools, other.seed)[0]
        record_choice(store, other, question, "B", 4321)
    expect(metric("Answers")).to_have_text(str(before + 1), timeout=15_000)
    expect(updated).not_to_have_text(rendered)
    # The metric changes early in the rerun; the Exports tab's buttons arrive last. A click before the run
    # ends can carry the previous run's deferred file id, which the new run has just revoked: the download
    # then fails (this test's old flake). So wait for the run to end, then click.
    wait_for_app_run(page)
    page.screenshot(path=str(OUT / "results-after-live-update.png"))

    page.get_by_role("tab", name="Exports").click()
    wait_for_app_run(page)
    with page.expect_download(timeout=15_000) as info:
        page.get_by_role("button", name="Evaluations (CSV)").click()
    download = info.value
    expect(page.get_by_test_id("stDownloadButtonError")).to_have_count(0)
    assert download.suggested_filename == "evaluations.csv"
    frame = pd.read_csv(io.StringIO(Path(download.path()).read_text()))
    assert list(frame.columns[:3]) == ["evaluatorName", "sessionId", "task"]
    assert len(frame) == before + 1
    row = frame[frame["sessionId"] == other.session_id].iloc[0]
    assert row["response"] == "B" and row["reviewSource"] == question.source_of("B")
    assert row["timeSpentMs"] == 4321 and row["evaluatorName"] == "Live Evaluator"
    page.screenshot(path=str(OUT / "results-exports.png"))
    context.close()
