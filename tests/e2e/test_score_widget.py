"""The score widget (``components/scores/``, a Streamlit custom component v2) in Chromium against ``streamlit run``,
at 1280 and 390 px: sliders moved with the mouse and with the keyboard, Likert levels picked, "Next" with one slider
untouched (its mark shown under it, the line above "Next", nothing stored: the database is read), then complete
(exactly those scores stored, once), and moving a slider or picking a level reruns nothing on the server.
Screenshots in ``test-output/screens/score-widget-*.png``.
"""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.store import open_store
from tests.apptest.test_item_kinds import LIKERT, SLIDER, study, task_toml
from tests.e2e.steps import start_session, wait_for_app_run
from tests.helpers import ROOT

SCREENS = ROOT / "test-output" / "screens"
HEIGHTS = {1280: 900, 390: 844}


def _shot(page: Any, name: str, width: int, *, full: bool = True) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"score-widget-{name}-{width}.png"), full_page=full)


def _runs(page: Any) -> int:
    """How many script runs the browser has seen start (counted by a script on the page)."""
    return page.evaluate("window.__evalkitRuns || 0")


def _drag(page: Any, slider: Any, fraction: float) -> None:
    """Drag ``slider`` with the mouse to ``fraction`` of its width."""
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()


@pytest.mark.parametrize("width", [1280, 390])
def test_score_widget_in_the_browser(start_app, browser, tmp_path, width: int) -> None:
    from playwright.sync_api import expect

    config = study(tmp_path, task_toml("score", questions=2, outputs_per_question=2, textfield="comment",
                                       scales=[SLIDER, LIKERT]), after=False)
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, f"score-widget-{width}")
    context = browser.new_context(viewport={"width": width, "height": HEIGHTS[width]}, has_touch=width < 600)
    try:
        page = context.new_page()
        start_session(page, url, "Scorer")
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        widget = page.get_by_test_id("evalkit-scores")
        expect(widget).to_be_visible()
        sliders = widget.get_by_role("slider")
        expect(sliders).to_have_count(2)
        expect(widget.get_by_text("Not scored yet: move the slider")).to_have_count(2)
        # the cards stay evalkit's, escaped: the markup payload shows as text
        expect(page.get_by_test_id("evalkit-card").first).to_contain_text("<b>bold?</b>")
        inner = widget.get_by_test_id("evalkit-card-in")
        if width < 600:  # on a phone each output's text is right above its own scales, the cards side by side hidden
            expect(page.get_by_test_id("evalkit-card").first).to_be_hidden()
            expect(inner).to_have_count(2)
            for k in range(2):
                text_box, slider_box = inner.nth(k).bounding_box(), sliders.nth(k).bounding_box()
                assert 0 < slider_box["y"] - (text_box["y"] + text_box["height"]) < 200, (k, text_box, slider_box)
            expect(inner.first).to_contain_text("<b>bold?</b>")  # as text
        else:
            expect(inner.first).to_be_hidden()
        _shot(page, "start", width)

        # a script counts the runs the server starts from now on (a Streamlit status change per run)
        page.evaluate("""() => { window.__evalkitRuns = 0; const app = document.querySelector('[data-testid=stApp]');
            new MutationObserver(() => { if (app.dataset.testScriptState === 'running') window.__evalkitRuns++; })
            .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }""")
        _drag(page, sliders.nth(0), 0.8)  # A's slider with the mouse
        groups = widget.get_by_role("radiogroup")
        groups.nth(0).get_by_role("radio").nth(2).check()  # A: 3 · Fine
        groups.nth(1).get_by_role("radio").nth(3).check()  # B: 4 · Fluent
        widget.get_by_role("textbox").nth(1).fill("Too short.")
        page.wait_for_timeout(400)
        assert _runs(page) == 0  # moving, picking and typing rerun nothing on the server
        a_value = int(sliders.nth(0).input_value())
        assert 60 <= a_value <= 95, a_value
        expect(widget.get_by_text("Scored", exact=True)).to_have_count(1)

        widget.get_by_role("button", name="Next").click()  # B's slider untouched: marked, nothing sent
        mark = widget.get_by_test_id("evalkit-mark").filter(has_text="has not been moved yet")
        expect(mark).to_have_count(1)
        expect(mark).to_have_text("The slider 'Overall quality' for response B has not been moved yet: please drag it "
                                  "to your score (where it starts is not an answer).")
        expect(widget.get_by_test_id("evalkit-summary")).to_have_text(
            "1 score is still missing (Overall quality for response B): it is marked above. Nothing has been saved "
            "yet.")
        # the keyboard lands on the missing slider, which says it is invalid and is described by its mark
        expect(sliders.nth(1)).to_be_focused()
        expect(sliders.nth(1)).to_have_attribute("aria-invalid", "true")
        expect(sliders.nth(1)).to_have_accessible_description(mark.inner_text())
        s_box, m_box = sliders.nth(1).bounding_box(), mark.bounding_box()
        assert 0 < m_box["y"] - s_box["y"] < 120 and abs(m_box["x"] - s_box["x"]) < 40, (s_box, m_box)  # under B's
        _shot(page, "missing", width, full=False)
        page.wait_for_timeout(400)
        assert _runs(page) == 0
        with open_store(database) as store:
            assert store.answers() == []

        sliders.nth(1).focus()  # B's slider with the keyboard: 50 -> 45
        for _ in range(5):
            page.keyboard.press("ArrowLeft")
        expect(mark).to_have_count(0)  # the mark goes as soon as the score is given
        expect(widget.get_by_test_id("evalkit-summary")).to_be_hidden()
        _shot(page, "complete", width)
        widget.get_by_role("button", name="Next").click()
        wait_for_app_run(page)
        expect(page.get_by_text("Question 2 of 2")).to_be_visible()
        with open_store(database) as store:
            [answer] = store.answers()
        assert answer.detail == {"scores": {"overall": [a_value, 45], "fluency": [3, 4]},
                                 "texts": ["", "Too short."]}

        # the second question starts clean; the keyboard alone answers it (Tab, arrows, space)
        widget = page.get_by_test_id("evalkit-scores")
        expect(widget.get_by_text("Not scored yet: move the slider")).to_have_count(2)
        for k, steps in ((0, 3), (1, -2)):
            widget.get_by_role("slider").nth(k).focus()
            for _ in range(abs(steps)):
                page.keyboard.press("ArrowRight" if steps > 0 else "ArrowLeft")
        for k in range(2):
            widget.get_by_role("radiogroup").nth(k).get_by_role("radio").nth(0).focus()
            page.keyboard.press("Space")
        widget.get_by_role("button", name="Next").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible(timeout=15_000)
        with open_store(database) as store:
            answers = store.answers()
        assert [a.detail for a in answers if a.question_index == 1] == [
            {"scores": {"overall": [53, 48], "fluency": [1, 1]}, "texts": ["", ""]}]
        assert len(answers) == 2
    finally:
        context.close()
