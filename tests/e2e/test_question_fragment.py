"""In a real browser: an answer inside a task's block reruns only the question's fragment (read from the
websocket: each run's ``new_session`` message names the fragments it reruns), the end of a block reruns the
page, and the next question is shown from its top: on a phone the view goes back up to it, on a wide screen
nothing moves. Screenshots in test-output/e2e/fragment-*.png."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import OUT
from tests.e2e.steps import choose, start_session, wait_for_app_run

pytestmark = pytest.mark.e2e


def record_runs(page: Any) -> list[str]:
    """The kind of every script run the server starts for ``page`` from now on: "page" or "fragment"."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    runs: list[str] = []

    def frame(payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "new_session":
                runs.append("fragment" if msg.metadata.run.fragment_ids else "page")

    page.on("websocket", lambda ws: ws.on("framereceived", frame))
    return runs


def main_scroll(page: Any) -> int:
    """How far the app's scrolling container is scrolled."""
    return page.get_by_test_id("stMain").evaluate("e => Math.round(e.scrollTop)")


def top_of(locator: Any) -> float:
    return locator.bounding_box()["y"]


def test_answers_rerun_the_question_and_show_the_next_one_from_its_top(server, browser) -> None:
    from playwright.sync_api import expect

    url, _, _ = server
    context = browser.new_context(viewport={"width": 390, "height": 844})  # a phone
    page = context.new_page()
    runs = record_runs(page)
    start_session(page, url, "Fragment Evaluator")
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    progress = page.get_by_test_id("stProgress")
    next_button = page.get_by_role("button", name="Next")
    header_bottom = page.get_by_test_id("stHeader").bounding_box()["height"]
    runs.clear()

    # "Next" without a choice, at the bottom of the question: the message shows above the button, which stays
    # in view (nothing scrolls)
    next_button.scroll_into_view_if_needed()
    scrolled = main_scroll(page)
    assert scrolled > 200 and top_of(progress) < 0  # the question's top is off screen
    next_button.click()
    wait_for_app_run(page)
    expect(page.get_by_text("choose one of the reviews")).to_be_visible()
    assert main_scroll(page) == scrolled and 0 < top_of(next_button) < 844
    assert runs == ["fragment"]

    # an answer: only the question reruns, and the next one is shown from its top, just under the header
    choose(page, "Review A")
    next_button.scroll_into_view_if_needed()
    next_button.click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 2 of 3")).to_be_visible()
    page.wait_for_timeout(300)
    caption = page.get_by_text("Task 1 of 3", exact=False)
    assert header_bottom - 1 <= top_of(caption) <= header_bottom + 60, (top_of(caption), header_bottom)
    assert runs == ["fragment", "fragment"]
    page.screenshot(path=str(OUT / "fragment-390-next-question.png"))

    # a wide screen: the question fits, nothing moves
    page.set_viewport_size({"width": 1280, "height": 900})
    wait_for_app_run(page)
    page.get_by_test_id("stMain").evaluate("e => e.scrollTo(0, 0)")
    bar = top_of(progress)
    choose(page, "Review B")
    next_button.click()
    wait_for_app_run(page)
    expect(page.get_by_text("Question 3 of 3")).to_be_visible()
    page.wait_for_timeout(300)
    assert main_scroll(page) == 0 and top_of(progress) == bar
    assert runs == ["fragment"] * 3
    page.screenshot(path=str(OUT / "fragment-1280-next-question.png"))

    # the block's last answer: the fragment asks for the whole page, which shows the next task's instructions
    choose(page, "Review C")
    next_button.click()
    wait_for_app_run(page)
    expect(page.get_by_role("button", name="Begin")).to_be_visible()
    assert runs == ["fragment"] * 4 + ["page"]
    context.close()
