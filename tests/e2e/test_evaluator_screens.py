"""Real browser: "Evaluator screens, as a new user saw them", what only a browser shows. A "what is missing" mark
goes as soon as the answer is given (a choice in a form reruns nothing: the browser hides the mark), on the ready-made
studies cera, turing, best-of-3 and crowd and on the consent page of a study without a consent text; a hovered
slider shows one row of ends, not two; the browser tab shows the study's title. At 1280 px and 390 px, with
screenshots in test-output/e2e/evaluator-*.png. (GraphMind on a phone: tests/e2e/test_graphmind.py; the page logic:
tests/apptest/test_evaluator_screens.py.)
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.config import load_study
from evalkit.store import open_store
from tests.e2e.conftest import OUT, docs_shot
from tests.e2e.steps import choose, start_session, wait_for_app_run
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

EXAMPLES = ROOT / "examples"
WIDTHS = (1280, 390)
MARKS = "[class*='st-key-why-mark-']"  # ui.missing_mark's containers
#: the answered screens the documentation shows: (example, screen width) -> its name in docs/screenshots/
DOCS_SHOTS = {("cera", 1280): "triplet", ("turing", 1280): "realfake", ("crowd", 390): "compare-phone"}


def shot(page: Any, name: str) -> None:
    """The screen as the evaluator sees it (the viewport)."""
    page.screenshot(path=str(OUT / f"evaluator-{name}.png"))


def visible_marks(page: Any) -> Any:
    return page.locator(MARKS).filter(visible=True)


def next_click(page: Any) -> None:
    page.get_by_role("button", name="Next", exact=True).click()
    wait_for_app_run(page)


def to_first_question(page: Any, url: str, example: str) -> None:
    """From the consent page to the first question (crowd: a Prolific link and its background form first)."""
    if example != "crowd":
        start_session(page, url, "Evaluator")
    else:
        page.goto(f"{url}/?PROLIFIC_PID=pid-{page.viewport_size['width']}&STUDY_ID=s1&SESSION_ID=se1")
        wait_for_app_run(page)
        page.get_by_test_id("stCheckbox").click()
        page.get_by_role("button", name="Start the study").click()
        wait_for_app_run(page)
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        page.get_by_role("textbox", name="What is your native language?").fill("English")
        page.get_by_test_id("stRadio").get_by_text("Fluent", exact=True).click()
        page.get_by_role("button", name="Continue").click()
        wait_for_app_run(page)
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)


#: per example: the options to choose, one by one, and how many marks are left visible after each
ANSWERS = {
    "cera": [("Review B", 0)],
    "turing": [("Written by a person", 1), ("Sure", 0)],
    "best-of-3": [("Headline C", 0)],
    "crowd": [("Reply A", 0)],
}


@pytest.mark.parametrize("example", list(ANSWERS))
def test_a_missing_answer_is_no_longer_marked_once_it_is_given(start_app, browser, tmp_path: Path,
                                                                 example: str) -> None:
    from playwright.sync_api import expect

    config = EXAMPLES / example / "config.toml"
    if example == "crowd":  # a copy reading the project's datasets, like the crowd browser test
        dest = tmp_path / "crowd"
        shutil.copytree(EXAMPLES / "crowd", dest, ignore=shutil.ignore_patterns("data"))
        config = dest / "config.toml"
        config.write_text(config.read_text(encoding="utf-8").replace('datasets = "../../datasets"',
                                                                     f'datasets = "{ROOT / "datasets"}"'))
    title = load_study(config).title
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, f"evaluator-{example}")
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            to_first_question(page, url, example)
            assert page.title() == title  # the browser tab names the study
            with open_store(database) as store:
                before = len(store.answers())
            next_click(page)  # nothing given
            marks = visible_marks(page)
            expect(marks.first).to_be_visible()
            expect(marks.first.get_by_test_id("stAlertContentWarning")).to_be_visible()  # missing: yellow
            assert page.get_by_test_id("stAlertContentError").count() == 0
            marks.first.scroll_into_view_if_needed()
            shot(page, f"{example}-missing-{width}")
            for option, left in ANSWERS[example]:
                choose(page, option)
                expect(visible_marks(page)).to_have_count(left)  # gone at once, with no click on "Next"
            shot(page, f"{example}-answered-{width}")
            if (example, width) in DOCS_SHOTS:  # the screens the documentation shows
                docs_shot(page, DOCS_SHOTS[(example, width)])
            with open_store(database) as store:
                assert len(store.answers()) == before  # only the browser changed: nothing is stored yet
            next_click(page)
            with open_store(database) as store:
                assert len(store.answers()) + len(store.check_tries()) > before  # the answer (or practice try)
        finally:
            context.close()


def test_consent_without_a_consent_text_and_its_marks(start_app, browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    study = tmp_path / "study"
    shutil.copytree(EXAMPLES / "turing", study, ignore=shutil.ignore_patterns("data"))
    config = study / "config.toml"
    config.write_text("".join(line for line in config.read_text(encoding="utf-8").splitlines(keepends=True)
                              if not line.startswith("consent = ")), encoding="utf-8")
    url = start_app(config, tmp_path / "responses.sqlite", "evaluator-consent")
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            page.goto(url)
            wait_for_app_run(page)
            assert page.title() == "Person or machine?"
            box = page.get_by_test_id("stCheckbox")
            expect(box).to_have_text("I agree to take part in this study.")  # no "information above" to confirm
            assert "information above" not in page.inner_text("body")
            page.get_by_role("button", name="Start the study").click()
            wait_for_app_run(page)
            expect(visible_marks(page)).to_have_count(2)  # the box and the name
            shot(page, f"consent-marks-{width}")
            box.get_by_text("I agree to take part in this study.").click()
            expect(visible_marks(page)).to_have_count(1)  # ticked: its mark goes at once
            page.get_by_role("textbox", name="Your name").fill("Ada")
            expect(visible_marks(page)).to_have_count(0)  # typed: the name's mark goes too
            shot(page, f"consent-filled-{width}")
        finally:
            context.close()


@pytest.mark.parametrize("example", ["direct-assessment", "help"])
def test_a_hovered_slider_shows_one_row_of_ends(start_app, browser, tmp_path: Path, example: str) -> None:
    """Streamlit shows its own "min ... max" row under a slider the pointer is over; the page draws its own row of
    ends under it ("0 ... Not scored yet ... 100", "◀ Reply A is better ... Reply B is better ▶"): one row only."""
    from playwright.sync_api import expect

    url = start_app(EXAMPLES / example / "config.toml", tmp_path / "responses.sqlite", f"evaluator-{example}")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        to_first_question(page, url, example)
        thumb = page.get_by_role("slider").first.bounding_box()  # (the range input sits on the slider's thumb)
        page.mouse.move(thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2)
        page.wait_for_timeout(400)
        expect(page.get_by_test_id("stSliderTickBar")).to_be_hidden()  # Streamlit's own row, if any
        if example == "direct-assessment":  # its ends once each, on the page's own row
            expect(page.get_by_text("100", exact=True).filter(visible=True)).to_have_count(1)
            expect(page.get_by_text("0", exact=True).filter(visible=True)).to_have_count(1)
        else:
            for end in ("◀ Reply A is better", "Reply B is better ▶"):
                expect(page.get_by_text(end, exact=True)).to_be_visible()
            expect(page.get_by_text("100", exact=True).filter(visible=True)).to_have_count(0)
        page.screenshot(path=str(OUT / f"evaluator-{example}-slider-hover.png"),
                        clip={"x": 0, "y": max(0, thumb["y"] - 60), "width": 1280, "height": 180})
    finally:
        context.close()
