"""Real browser: items whose outputs are images and audio clips (:mod:`evalkit.media`).

* ``examples/image-quality`` completed at 1280 px and at 390 px (a 1-5 rating, a pairwise choice, real or
  generated): every image loads (from the study's media folder, under Streamlit's name for it), scales to the
  screen (side by side on a wide screen, one under the other on a phone), no system name or file name reaches the
  browser, and the database holds one answer per planned question. Screenshots go to test-output/e2e/ (and one to
  docs/screenshots/image-quality.png).
* An audio clip played, paused, sought and played to the end: the play log reaches the answer's
  ``detail["media"]``; with ``require_full_play`` an answer before that is refused (nothing stored), in a form
  (compare) and in the score widget (whose page reruns at each event of the player: the clip keeps playing).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.balance import arrival_of
from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from tests.e2e.conftest import OUT, docs_shot
from tests.e2e.steps import choose, problems, start_session, wait_for_app_run
from tests.helpers import ROOT
from tests.media_study import SYSTEMS, media_study

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "examples" / "image-quality" / "config.toml"
#: what no page may hold: the generators' names and the files' names (the real one, "photo", is a word of the question)
HIDDEN = ["model-a", "model-b", "dawn-", "dusk-", "noon-", "winter-", "desert-", "lake-", "media/dawn", "media/clip"]


def shot(page: Any, name: str) -> None:
    """The whole question at the page's width (the window as tall as the content), and the leak checks."""
    wait_for_app_run(page)
    html = page.content()
    for secret in HIDDEN:
        assert secret not in html, f"{secret!r} reached the browser on {name}"
    width = page.viewport_size["width"]
    height = page.get_by_test_id("stMainBlockContainer").evaluate("e => e.scrollHeight")
    page.set_viewport_size({"width": width, "height": max(600, height + 120)})
    wait_for_app_run(page)
    page.screenshot(path=str(OUT / f"media-{name}-{width}.png"))


def images_fit(page: Any, count: int) -> list[dict[str, float]]:
    """The question's images: ``count`` of them, each loaded (a PNG served by Streamlit) and within the screen."""
    from playwright.sync_api import expect

    images = page.get_by_test_id("evalkit-image")
    expect(images).to_have_count(count)
    boxes = []
    width = page.viewport_size["width"]
    for k in range(count):
        image = images.nth(k)
        image.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        assert re.search(r"/media/[0-9a-f]+\.png$", image.get_attribute("src") or ""), image.get_attribute("src")
        assert image.get_attribute("alt")
        box = image.bounding_box()
        assert box and box["width"] > 50 and box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)
        boxes.append(box)
    return boxes


def next_button(page: Any) -> None:
    page.get_by_role("button", name="Next", exact=True).click()
    wait_for_app_run(page)


def begin(page: Any) -> None:
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)


@pytest.mark.parametrize("width", [1280, 390])
def test_image_quality_example(start_app, browser, tmp_path: Path, width: int) -> None:
    from playwright.sync_api import expect

    database = tmp_path / "image-quality.sqlite"
    url = start_app(EXAMPLE, database, f"image-quality-{width}")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        start_session(page, url, f"Image rater {width}")
        begin(page)
        for number in range(1, 4):  # the 1-5 rating: one image, the Likert levels in the score widget
            expect(page.get_by_text(f"Question {number} of 3")).to_be_visible()
            images_fit(page, 1)
            if number == 1:
                shot(page, "rating")
            page.get_by_role("radiogroup").first.get_by_role("radio").nth(number).check(force=True)
            next_button(page)
        begin(page)
        for number, option in enumerate(["Image A", "Image B", "No preference"], start=1):  # pairwise
            expect(page.get_by_text(f"Question {number} of 3")).to_be_visible()
            first, second = images_fit(page, 2)
            if width >= 640:  # side by side
                assert abs(first["y"] - second["y"]) < 2 and first["x"] + first["width"] <= second["x"]
            else:  # one under the other
                assert second["y"] >= first["y"] + first["height"]
            if number == 1:
                shot(page, "pairwise")
                docs_shot(page, "image-quality", width=1280, height=900)
            choose(page, option)
            next_button(page)
        begin(page)
        for number in range(1, 5):  # real or generated, and how sure
            expect(page.get_by_text(f"Question {number} of 4")).to_be_visible()
            images_fit(page, 1)
            expect(page.get_by_text("Is this image real or generated?")).to_be_visible()
            if number == 1:
                next_button(page)  # nothing chosen: marked, nothing saved
                expect(page.get_by_text("Please say whether the image is real or generated")).to_be_visible()
                shot(page, "real-or-generated")
            choose(page, "Real" if number % 2 else "Generated by a system")
            choose(page, "Sure")
            next_button(page)
        expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
        assert problems(page) == []
    finally:
        context.close()
    loaded = open_study(EXAMPLE, database=database)
    with open_store(database) as store:
        [session] = store.sessions()
        answers = store.answers(session.session_id)
    questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))
    by_key = {(q.task, q.index): q for q in questions}
    assert sorted((a.task, a.question_index) for a in answers) == sorted(by_key)
    for a in answers:
        q = by_key[(a.task, a.question_index)]
        assert a.item_ids == (q.review_ids[0],) and a.sources == q.sources
    rating = sorted((a for a in answers if a.task == "rating"), key=lambda a: a.question_index)
    assert [a.detail for a in rating] == [{"scores": {"quality": [k]}} for k in (2, 3, 4)]
    pairwise = sorted((a for a in answers if a.task == "pairwise"), key=lambda a: a.question_index)
    assert [a.response for a in pairwise] == ["A", "B", "tie"]
    turing = sorted((a for a in answers if a.task == "real-or-generated"), key=lambda a: a.question_index)
    assert [(a.response, a.detail) for a in turing] == [("real", {"confidence": 3}),
                                                       ("generated", {"confidence": 3})] * 2


def player(page: Any, k: int) -> Any:
    return page.get_by_test_id("evalkit-audio").nth(k)


def play_to_end(page: Any, k: int) -> None:
    """Play clip ``k`` from the start to its end, as pressing ▶ and listening does."""
    audio = player(page, k)
    audio.scroll_into_view_if_needed()
    audio.evaluate("a => { a.currentTime = 0; return a.play(); }")
    page.wait_for_function("a => a.ended", arg=audio.element_handle(), timeout=15_000)
    wait_for_app_run(page)


@pytest.mark.parametrize("task", ["compare", "score"])
def test_audio_plays_are_logged_and_required(start_app, browser, tmp_path: Path, task: str) -> None:
    from playwright.sync_api import expect

    config = media_study(tmp_path / "study", task, "audio", keys="require_full_play = true\n")
    database = tmp_path / "audio.sqlite"
    url = start_app(config, database, f"audio-{task}")
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    try:
        start_session(page, url, "Listener")
        begin(page)
        n = 2 if task == "compare" else 1
        expect(page.get_by_test_id("evalkit-audio")).to_have_count(n)
        for k in range(n):
            page.wait_for_function("a => a.readyState >= 1 && a.duration > 0.5", arg=player(page, k).element_handle())
        if task == "compare":
            choose(page, "Response A")
            next_button(page)
        else:
            page.get_by_role("radiogroup").first.get_by_role("radio").nth(3).check(force=True)
            page.get_by_test_id("evalkit-next").click()
            wait_for_app_run(page)
        expect(page.get_by_text(re.compile("to the end before answering"))).to_be_visible()
        with open_store(database) as store:
            assert store.answers() == []
        # the first clip: played, paused, sought back, played to the end
        first = player(page, 0)
        first.evaluate("a => a.play()")
        page.wait_for_function("a => a.currentTime > 0.15", arg=first.element_handle())
        first.evaluate("a => a.pause()")
        wait_for_app_run(page)
        first.evaluate("a => { a.currentTime = 0.05; }")
        page.wait_for_function("a => !a.seeking", arg=first.element_handle())
        wait_for_app_run(page)
        play_to_end(page, 0)
        expect(page.get_by_test_id("evalkit-media-note").first).to_be_visible()
        for k in range(1, n):
            play_to_end(page, k)
        shot(page, f"audio-{task}")
        if task == "compare":
            next_button(page)  # the choice is still made: the form sends it with the players' logs
        else:
            page.get_by_test_id("evalkit-next").click()
            wait_for_app_run(page)
        expect(page.get_by_text("Question 2 of 2")).to_be_visible()
        html = page.content()
        for secret in (*SYSTEMS, "media/clip", "clip0x"):
            assert secret not in html
    finally:
        context.close()
    with open_store(database) as store:
        [answer] = store.answers()
    log = answer.detail["media"]
    first_clip = [e for e in log if e["model"] == answer.sources[0]]
    actions = [e["action"] for e in first_clip]
    assert actions[:3] == ["media_play", "media_pause", "media_seek"], actions
    assert actions[-1] == "media_ended" and "media_play" in actions[3:]
    assert first_clip[1]["media_time"] > 0.1 and first_clip[2]["media_time"] == pytest.approx(0.05, abs=0.02)
    assert first_clip[-1]["media_time"] == pytest.approx(0.6, abs=0.05)
    assert all(e["src"].startswith("media/clip") for e in log)
    assert [e["time"] for e in first_clip] == sorted(e["time"] for e in first_clip)
    if task == "compare":
        assert {e["model"] for e in log} == set(answer.sources) and answer.response == "A"
    else:
        assert answer.detail["scores"] == {"quality": [4]}
