"""What an evaluator does in the browser, step by step (Playwright's sync API), for the end-to-end tests.

:func:`wait_for_app_run` is the one synchronisation point after every click; :func:`complete_study` walks any
study from consent to the completion code with the first option everywhere.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.tasks.responses import SLIDER_LABELS
from tests.e2e.conftest import OUT
from tests.helpers import SOURCES

#: Error and warning messages (Streamlit's st.error / st.warning): an evaluator's "something is wrong".
PROBLEMS = "[data-testid='stAlertContentError'], [data-testid='stAlertContentWarning']"
TOKEN = re.compile(r"[?&]s=([0-9a-f]{32})")


def wait_for_app_run(page: Any, timeout: int = 25_000) -> None:
    """Wait until Streamlit is connected, idle and has no skeleton (its own browser suite's signals)."""
    from playwright.sync_api import expect

    page.wait_for_timeout(210)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


class Screens:
    """Screenshots and leak checks of every screen (of the token study: its source names are tokens)."""

    def __init__(self, page: Any) -> None:
        self.page, self.n, self.html = page, 0, []

    def capture(self, name: str) -> str:
        wait_for_app_run(self.page)
        self.n += 1
        self.page.screenshot(path=str(OUT / f"{self.n:02d}-{name}.png"))
        html = self.page.content()
        self.html.append((name, html, self.page.url))
        for token in SOURCES.values():
            assert token not in html, f"source label {token} reached the browser on screen {name}"
            assert token not in self.page.url
        return html


def choose(page: Any, label: str) -> None:
    """Pick the option ``label`` of the question's radio buttons ("Review A", ...)."""
    page.get_by_test_id("stRadio").get_by_text(label, exact=True).click()


def problems(page: Any) -> list[str]:
    """The texts of the error and warning messages on screen (none on a healthy screen)."""
    return page.locator(PROBLEMS).all_inner_texts()


def token_of(url: str) -> str:
    """The session token in a page's URL."""
    found = TOKEN.search(url)
    assert found, f"no session token in {url}"
    return found.group(1)


def start_session(page: Any, url: str, name: str) -> str:
    """Open the consent screen at ``url``, agree, give ``name`` and start; returns the session token."""
    page.goto(url)
    wait_for_app_run(page)
    page.get_by_text("I agree to take part").click()
    page.get_by_role("textbox", name="Your name").fill(name)
    page.get_by_role("button", name="Start the study").click()
    wait_for_app_run(page)
    return token_of(page.url)


def rate_item(page: Any, score: int = 4) -> None:
    """On a rating screen with a paper chosen: give every question ``score`` (1-5), then "Save and finish"."""
    groups = page.get_by_role("radiogroup")
    for k in range(groups.count()):
        groups.nth(k).get_by_role("radio").nth(score - 1).check(force=True)
        wait_for_app_run(page)  # each answer reruns the page
    page.get_by_role("button", name="Save and finish").click()


def complete_study(page: Any, url: str, name: str, *, max_screens: int = 80) -> tuple[str, str]:
    """Walk the whole study at ``url`` as a new evaluator: the first option of every question, "Accept" on
    a slider, the first paper of a rating block scored 4. Fails on any error or warning message.

    Returns (session token, completion code).
    """
    token = start_session(page, url, name)
    for _ in range(max_screens):
        assert problems(page) == [], f"{name}: a problem on screen {page.url}: {problems(page)}"
        if page.get_by_role("heading", name="Thank you!").count():
            assert token_of(page.url) == token
            return token, page.get_by_test_id("stCode").inner_text().strip()
        if page.get_by_role("button", name="Begin").count():
            page.get_by_role("button", name="Begin").click()
        elif page.get_by_role("button", name="Next", exact=True).count():
            choose(page, "Review A")
            page.get_by_role("button", name="Next", exact=True).click()
        elif page.get_by_role("button", name=SLIDER_LABELS["accept"]).count():
            page.get_by_role("button", name=SLIDER_LABELS["accept"]).click()
        elif page.get_by_role("button", name="Save and finish").count():
            rate_item(page)
        elif page.get_by_role("combobox").count():
            page.get_by_role("combobox").click()
            page.get_by_role("option").first.click()
        else:
            raise AssertionError(f"{name}: an unexpected screen at {page.url}: {page.inner_text('body')[:400]!r}")
        wait_for_app_run(page)
    raise AssertionError(f"{name}: not finished after {max_screens} screens")


def move_slider(page: Any, index: int, steps: int) -> None:
    """Move the ``index``-th slider of the page by ``steps`` with the arrow keys (negative: left), then wait until
    the slider shows the value: on a busy machine the rerun a first key press starts can redraw the slider
    while later presses are still coming, and those are lost; the missing ones are pressed again."""
    slider = page.get_by_role("slider").nth(index)  # an <input type="range"> with min, max and step

    def number(text: str | None) -> float:
        return float(text or 0)

    step = number(slider.get_attribute("step")) or 1.0
    low, high = number(slider.get_attribute("min")), number(slider.get_attribute("max"))
    target = min(max(number(slider.input_value()) + steps * step, low), high)
    for _ in range(5):
        missing = round((target - number(slider.input_value())) / step)
        if missing == 0:
            return
        slider.focus()
        for _ in range(abs(missing)):
            page.keyboard.press("ArrowRight" if missing > 0 else "ArrowLeft")
        wait_for_app_run(page)
    assert number(slider.input_value()) == target, (slider.input_value(), target)
