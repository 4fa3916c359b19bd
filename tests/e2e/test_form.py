"""Real browser: an evaluator fills the background form of tests/fixtures/form_study before its judgment task
(first with mistakes: every one is marked under its field and nothing is stored), answers the two compare
questions and the closing form; the database then holds the form per field, and the results page's Forms tab
summarises it. Screenshots (form empty, with errors, filled; the results' Forms tab) at 1280 and 390 px go to
test-output/screens/.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalkit.store import open_store
from tests.e2e.conftest import RESULTS_PASSWORD
from tests.e2e.steps import choose, start_session, wait_for_app_run
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

CONFIG = ROOT / "tests" / "fixtures" / "form_study" / "config.toml"
SCREENS = ROOT / "test-output" / "screens"


def shot(page: Any, name: str) -> None:
    """The whole screen at 1280 px and at 390 px (a phone)."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_for_app_run(page)
        height = page.get_by_test_id("stMainBlockContainer").evaluate("e => e.scrollHeight")
        page.set_viewport_size({"width": width, "height": max(600, height + 120)})
        wait_for_app_run(page)
        page.screenshot(path=str(SCREENS / f"form-{name}-{width}.png"))
    page.set_viewport_size({"width": 1280, "height": 1000})
    wait_for_app_run(page)


def errors(page: Any) -> list[str]:
    """The "what is missing" messages shown (yellow), without an icon's name."""
    return [text.split("\n")[-1] for text in page.get_by_test_id("stAlertContentWarning").all_inner_texts()]


def test_a_background_form_before_the_judgment_task(start_app, browser, tmp_path) -> None:
    from playwright.sync_api import expect

    database = tmp_path / "form.sqlite"
    url = start_app(CONFIG, database, "form-study")
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    token = start_session(page, url, "Form filler")
    expect(page.get_by_role("heading", name="About you")).to_be_visible()
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    expect(page.get_by_text("Form · 0% of the study done")).to_be_visible()
    shot(page, "empty")

    page.get_by_role("button", name="Continue").click()  # nothing filled in: every required field is marked
    wait_for_app_run(page)
    assert errors(page) == ["Please answer this question.", "Please choose one option.",
                            "Please choose at least one option.", "Please choose a level.",
                            "4 answers need your attention: they are marked above. Nothing has been saved yet."]
    shot(page, "errors")
    # each mark sits right under its own field: between it and the next field
    language = page.get_by_test_id("stTextInput").bounding_box()
    mark = page.get_by_test_id("stAlertContentWarning").first.bounding_box()
    age = page.get_by_test_id("stNumberInput").bounding_box()
    assert language["y"] + language["height"] <= mark["y"] < age["y"], (language, mark, age)

    page.get_by_label("What is your native language?").fill("Deutsch")
    page.get_by_label("What is your native language?").press("Tab")
    wait_for_app_run(page)
    age_input = page.get_by_label("How old are you? (optional)")
    age_input.fill("150")
    age_input.press("Enter")
    wait_for_app_run(page)
    choose(page, "Fluent")
    wait_for_app_run(page)
    page.get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name="Travel sites").click()
    wait_for_app_run(page)
    page.keyboard.press("Escape")
    page.get_by_test_id("stRadio").get_by_text("4 · Mostly", exact=True).click()
    wait_for_app_run(page)
    assert errors(page) == ["Please enter a whole number from 18 to 99; 150 is outside that range.",
                            "1 answer needs your attention: it is marked above. Nothing has been saved yet."]
    page.get_by_role("button", name="Continue").click()  # still invalid: nothing stored, the values stay
    wait_for_app_run(page)
    assert len(errors(page)) == 2 and page.get_by_label("What is your native language?").input_value() == "Deutsch"
    with open_store(database) as store:
        assert store.form_answers() == []
    age_input.fill("34")
    age_input.press("Enter")
    wait_for_app_run(page)
    assert errors(page) == []
    shot(page, "filled")
    page.get_by_role("button", name="Continue").click()
    wait_for_app_run(page)

    expect(page.get_by_text("Task 2 of 3 · Compare two replies")).to_be_visible()
    with open_store(database) as store:
        assert {r.field: r.value for r in store.form_answers(token, "background")} == {
            "native_language": "Deutsch", "age": "34", "english": "Fluent",
            "platforms": json.dumps(["Travel sites"]), "trust": "4"}
        assert store.answers() == []  # the judgment task comes after the form
    for number in (1, 2):
        expect(page.get_by_text(f"Question {number} of 2")).to_be_visible()
        choose(page, "Response A")
        page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(page)
    expect(page.get_by_text("Task 3 of 3 · Before you go")).to_be_visible()
    page.get_by_test_id("stRadio").get_by_text("2", exact=True).click()
    wait_for_app_run(page)
    page.get_by_role("button", name="Continue").click()
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    with open_store(database) as store:
        [session] = store.sessions()
        assert session.status == "completed" and len(store.answers()) == 2
        assert {r.field: r.value for r in store.form_answers(token, "feedback")} == {"difficulty": "2",
                                                                                      "comment": None}
        assert store.progress(token).finished == {"background", "feedback"}

    page.goto(f"{url}/results")
    page.get_by_test_id("stTextInputField").wait_for()
    page.get_by_test_id("stTextInputField").fill(RESULTS_PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    wait_for_app_run(page)
    page.get_by_role("tab", name="Forms").click()
    wait_for_app_run(page)
    expect(page.get_by_text("About you · form · 1 submitted")).to_be_visible()
    page.get_by_text("Show the 1 text").first.click()
    wait_for_app_run(page)
    shot(page, "results")
    context.close()
