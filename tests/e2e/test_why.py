"""Issue 13, section 5, in Chromium: after "Next" with an input missing, the message is on screen where the
evaluator looks (at the button, which the page does not scroll away from) and each mark sits right under its
widget; nothing is stored until the input is given. A score question (an untouched slider and a Likert scale) and
a full ranking, at 1280 px and 390 px; viewport screenshots in ``test-output/screens/why-*.png``.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.store import open_store
from tests.apptest.test_item_kinds import LIKERT, SLIDER, study, task_toml
from tests.e2e.steps import move_slider, start_session, wait_for_app_run
from tests.helpers import ROOT

SCREENS = ROOT / "test-output" / "screens"
HEIGHTS = {1280: 800, 390: 844}  # a laptop and a phone


def _shot(page: Any, name: str, width: int) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"why-{name}-{width}.png"))  # the viewport: what the evaluator sees


def _place(page: Any, box: Any, name: str) -> None:
    """Choose place ``name`` in the place box ``box`` (its dropdown list opens under the box)."""
    option = page.get_by_role("option", name=name, exact=True)
    box.get_by_role("combobox").click()
    try:
        option.wait_for(timeout=3000)
    except Exception:  # a click while the page still settles (after a scroll) only focuses the box: open it
        page.keyboard.press("ArrowDown")
    option.click()
    wait_for_app_run(page)


def _below(upper: Any, lower: Any, within: float = 90) -> None:
    """``lower`` starts right under ``upper`` (within ``within`` px) and overlaps it horizontally."""
    a, b = upper.bounding_box(), lower.bounding_box()
    assert a is not None and b is not None
    gap = b["y"] - (a["y"] + a["height"])
    assert -2 <= gap <= within, (a, b)
    assert b["x"] < a["x"] + a["width"] and a["x"] < b["x"] + b["width"], (a, b)


@pytest.mark.parametrize("width", [1280, 390])
def test_missing_score_and_place_are_said_next_to_the_widget(start_app, browser, tmp_path, width: int) -> None:
    from playwright.sync_api import expect

    ranks = task_toml("rank", response="ranking", questions=1).replace('id = "block"', 'id = "ranks"')
    config = study(tmp_path, task_toml("score", questions=1, scales=[SLIDER, LIKERT]) + ranks, after=False)
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, f"why-{width}")
    context = browser.new_context(viewport={"width": width, "height": HEIGHTS[width]})
    try:
        page = context.new_page()
        start_session(page, url, "Why")
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)

        # score: "Next" (scrolled to, as an evaluator does) with the slider untouched and no level
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page)
        slider_mark = page.get_by_text("The slider 'Overall quality' has not been moved yet")
        expect(slider_mark).to_be_in_viewport()  # the first mark is on screen after the click, with its slider
        expect(page.get_by_role("slider")).to_be_in_viewport()
        _below(page.get_by_role("slider"), slider_mark, within=60)  # under it (and its "Not scored yet" line)
        _shot(page, "score-slider", width)
        _below(page.get_by_role("radiogroup"), page.get_by_text("Please choose a level for 'Fluency'."))
        summary = page.get_by_text("2 scores are still missing (Overall quality; Fluency)")
        _below(summary, page.get_by_role("button", name="Next", exact=True))  # and one line right above "Next"
        summary.scroll_into_view_if_needed()
        _shot(page, "score-summary", width)
        with open_store(database) as store:
            assert store.answers() == []
        move_slider(page, 0, 12)
        page.get_by_role("radiogroup").get_by_role("radio").nth(2).check(force=True)
        wait_for_app_run(page)
        expect(page.locator("[data-testid=evalkit-mark]:not([hidden])")).to_have_count(0)  # the widget's marks
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page)
        with open_store(database) as store:
            [answer] = store.answers()
            assert answer.detail == {"scores": {"overall": [62], "fluency": [3]}}

        # ranking: only response B has a place
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        boxes = page.get_by_test_id("stSelectbox")
        _place(page, boxes.nth(1), "1st (best)")
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page)
        real_marks = page.locator("[class*='st-key-why-mark-']")  # not the invisible stand-ins (ui.mark_spacer)
        first = real_marks.get_by_text("Please choose a place for response A in “Place of response A”.")
        expect(first).to_be_in_viewport()  # the first mark on screen after the click, with its place box
        expect(boxes.nth(0)).to_be_in_viewport()
        _below(boxes.nth(0), first)
        _shot(page, "rank", width)
        mark = real_marks.get_by_text("Please choose a place for response C in “Place of response C”.")
        _below(boxes.nth(2), mark)
        summary = page.get_by_text("Please give responses A and C a place in the ranking (1st to 3rd).")
        _below(summary, page.get_by_role("button", name="Next", exact=True))
        summary.scroll_into_view_if_needed()
        _shot(page, "rank-summary", width)
        with open_store(database) as store:
            assert [a.task for a in store.answers()] == ["block"]
        for k, place in ((0, "2nd"), (2, "3rd (worst)")):
            _place(page, boxes.nth(k), place)
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page)
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
        with open_store(database) as store:
            assert [a.response for a in store.answers(task="ranks")] == ["B>A>C"]
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_consent_and_results_login_say_what_is_missing(start_app, browser, tmp_path, width: int) -> None:
    from playwright.sync_api import expect

    from tests.e2e.conftest import RESULTS_PASSWORD
    from tests.helpers import make_token_study

    config = make_token_study(tmp_path / "study", min_items=2)
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, f"why-consent-{width}")
    context = browser.new_context(viewport={"width": width, "height": HEIGHTS[width]})
    try:
        page = context.new_page()
        page.goto(url)
        wait_for_app_run(page)
        page.get_by_role("button", name="Start the study").click()
        wait_for_app_run(page)
        agree = page.get_by_text("Please tick the box “I agree to take part” above to start the study.")
        name = page.get_by_text("Please enter your name in “Your name” to start the study.")
        expect(agree).to_be_in_viewport()
        expect(name).to_be_in_viewport()
        _below(page.get_by_test_id("stCheckbox"), agree)
        _below(page.get_by_role("textbox", name="Your name"), name)
        _shot(page, "consent", width)
        with open_store(database) as store:
            assert store.sessions() == []
        page.get_by_test_id("stCheckbox").get_by_text("I agree to take part").click()
        page.get_by_role("textbox", name="Your name").fill("Why")
        page.get_by_role("button", name="Start the study").click()
        wait_for_app_run(page)
        expect(page.get_by_role("button", name="Begin")).to_be_visible()
        with open_store(database) as store:
            assert len(store.sessions()) == 1

        page.goto(f"{url}/results")
        wait_for_app_run(page)
        page.get_by_role("button", name="Unlock").click()
        wait_for_app_run(page)
        empty = page.get_by_text("Please type the password in “Password” first")
        expect(empty).to_be_in_viewport()
        _below(page.get_by_test_id("stTextInput"), empty)
        _shot(page, "results-login", width)
        page.get_by_test_id("stTextInputField").fill(RESULTS_PASSWORD)
        page.get_by_role("button", name="Unlock").click()
        wait_for_app_run(page)
        expect(page.get_by_role("button", name="Lock this page")).to_be_visible()
    finally:
        context.close()
