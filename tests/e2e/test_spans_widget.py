"""The error-span widget (``components/spans/``) in Chromium against ``streamlit run``, at 1280 px (mouse) and 390 px
(touch): a span made with the mouse (a drag) or by taps, one made with the keyboard only (Tab, arrows, Shift+arrows,
a severity key), a suggested span deleted at one width and kept at the other, the slider moved by keys, "Next";
then the database holds exactly those spans with their origins (offsets in code points: the output has an emoji
before the errors, so a UTF-16 offset taken as it is would be one off), and both exports carry them. Marking
reruns nothing on the server. Screenshots in ``test-output/screens/spans-*.png`` and the docs' ``spans*.png``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.span_export import pearmut_jsonl, spans_csv
from evalkit.spans import from_pearmut
from evalkit.store import open_store
from tests.e2e.conftest import docs_shot
from tests.e2e.steps import start_session, wait_for_app_run
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

SCREENS = ROOT / "test-output" / "screens"
HEIGHTS = {1280: 900, 390: 844}
#: the output every question shows (both systems have it, so the test knows it whatever the plan): an emoji first
TEXT = "Look 👀 the dog walked quickly outside today."
SUGGESTED = "walked"  # the suggestion (major), deleted at 1280 and kept at 390


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _study(tmp: Path) -> Path:
    data = tmp / "datasets"
    data.mkdir(parents=True)
    start = _utf16(TEXT, TEXT.index(SUGGESTED))
    spans = [{"start_i": start, "end_i": start + len(SUGGESTED) - 1, "severity": "major", "category": None}]
    items = [{"id": f"doc{k}", "src": f"Schau, der Hund ist heute schnell rausgelaufen ({k}).",
              "tgt": {"sysA": TEXT, "sysB": TEXT}, "error_spans": {"sysA": spans, "sysB": spans}} for k in range(3)]
    (data / "mt.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items), encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text("""
[study]
title = "Error spans"
database = "responses.sqlite"
seed = 5

[[tasks]]
kind = "spans"
id = "esa"
title = "Mark the errors"
instructions = "Mark every error of each translation, then score it."
items = "datasets/mt.jsonl"
systems = ["sysA", "sysB"]
questions = 1
prefill = true
missing_token = true
""", encoding="utf-8")
    return config


def _shot(page: Any, name: str, width: int) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"spans-{name}-{width}.png"), full_page=True)


#: the centre ({x, y}, in the page's client pixels) of character ``i`` of the widget's text box it is evaluated on:
#: a grapheme, counted as the widget counts them (Intl.Segmenter; the [missing] token after the last), found with a
#: Range over the box's text nodes (the widget draws text, not an element per character)
GRAPHEME_CENTRE = """(box, i) => {
  const token = box.querySelector('[data-testid=evalkit-missing]');
  const nodes = [];
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!token || !token.contains(n)) nodes.push(n);
  const text = nodes.map((n) => n.data).join('');
  const units = [...new Intl.Segmenter(undefined, {granularity: 'grapheme'}).segment(text)];
  let rect;
  if (i === units.length && token) rect = token.getBoundingClientRect();
  else {
    let at = units[i].index;
    const node = nodes.find((n) => at < n.data.length || ((at -= n.data.length), false));
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + units[i].segment.length);
    rect = range.getBoundingClientRect();
  }
  return {x: rect.left + rect.width / 2, y: rect.top + rect.height / 2};
}"""


def _char(page: Any, index: int) -> dict[str, float]:
    """The centre of the widget's character ``index`` (a grapheme: the emoji is one) of the first output segment,
    scrolled into view."""
    box = page.get_by_test_id("evalkit-text").first
    box.scroll_into_view_if_needed()
    return box.evaluate(GRAPHEME_CENTRE, index)


def _drag(page: Any, a: dict[str, float], b: dict[str, float]) -> None:
    page.mouse.move(a["x"], a["y"])
    page.mouse.down()
    page.mouse.move(b["x"], b["y"], steps=6)
    page.mouse.up()


def _grapheme(index: int) -> int:
    """The widget's character number of code point ``index`` of TEXT (the emoji is one code point here too)."""
    return index


@pytest.mark.parametrize("width", [1280, 390])
def test_spans_widget_mouse_keyboard_touch(start_app, browser, tmp_path, width: int) -> None:
    from playwright.sync_api import expect

    database = tmp_path / "responses.sqlite"
    url = start_app(_study(tmp_path), database, f"spans-{width}")
    phone = width < 600
    context = browser.new_context(viewport={"width": width, "height": HEIGHTS[width]}, has_touch=phone)
    try:
        page = context.new_page()
        start_session(page, url, "Annotator")
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        widget = page.get_by_test_id("evalkit-spans")
        expect(widget).to_be_visible()
        text = page.get_by_test_id("evalkit-text").first
        expect(text).to_contain_text(TEXT)  # real text in the page
        expect(page.get_by_test_id("evalkit-item")).to_have_count(1)  # the suggestion, listed
        expect(page.get_by_test_id("evalkit-item").first).to_contain_text(SUGGESTED)
        if not phone:  # the keys are written under the text (on a phone, which has no keys, the line is hidden)
            expect(page.get_by_test_id("evalkit-keys")).to_be_visible()
        _shot(page, "start", width)
        docs_shot(page, "spans", width=1280)
        page.evaluate("""() => { window.__evalkitRuns = 0; const app = document.querySelector('[data-testid=stApp]');
            new MutationObserver(() => { if (app.dataset.testScriptState === 'running') window.__evalkitRuns++; })
            .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']}); }""")

        dog = TEXT.index("dog")
        if phone:  # a tap on the first character, a tap on the last
            page.touchscreen.tap(**_char(page, _grapheme(dog)))
            page.touchscreen.tap(**_char(page, _grapheme(dog + 2)))
        else:
            _drag(page, _char(page, _grapheme(dog)), _char(page, _grapheme(dog + 2)))
        expect(page.get_by_test_id("evalkit-item")).to_have_count(2)
        expect(widget).to_contain_text("“dog”")

        # the keyboard only: Tab into the text, the caret (on a character) to the "q" of "quickly", Shift+arrows
        # to its "y", "2" (major)
        page.get_by_test_id("evalkit-next").focus()  # (from after the text: Shift+Tab back into it, keys only)
        for _ in range(40):
            page.keyboard.press("Shift+Tab")
            if text.evaluate("e => e.getRootNode().activeElement === e"):
                break
        assert text.evaluate("e => e.getRootNode().activeElement === e"), "Tab never reached the text"
        page.keyboard.press("Home")
        quickly = TEXT.index("quickly")
        for _ in range(_grapheme(quickly)):
            page.keyboard.press("ArrowRight")
        for _ in range(len("quickly") - 1):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("2")
        expect(page.get_by_test_id("evalkit-item")).to_have_count(3)
        expect(widget).to_contain_text("“quickly”")
        # an omission on the [missing] token: End, then "1"
        page.keyboard.press("End")
        page.keyboard.press("1")
        expect(page.get_by_test_id("evalkit-item")).to_have_count(4)
        expect(widget).to_contain_text("[missing]")

        suggestion = page.get_by_test_id("evalkit-item").filter(has_text=SUGGESTED)
        if phone:
            suggestion.get_by_test_id("evalkit-item-keep").tap()
        else:
            suggestion.get_by_test_id("evalkit-item-del").click()
            expect(page.get_by_test_id("evalkit-item").filter(has_text=SUGGESTED)).to_have_count(0)
        slider = page.get_by_test_id("evalkit-slider").first
        slider.focus()
        page.keyboard.press("Home")
        for _ in range(35):
            page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__evalkitRuns") == 0  # marking and scoring reran nothing on the server
        _shot(page, "marked", width)
        docs_shot(page, "spans-marked", width=1280)
        with open_store(database) as store:
            assert store.answers() == []
        page.get_by_test_id("evalkit-next").click()
        wait_for_app_run(page)
        expect(page.get_by_text("Thank you")).to_be_visible(timeout=20_000)

        with open_store(database) as store:
            [answer] = store.answers()
            rows = store.spans()
            csv_rows = list(csv.DictReader(io.StringIO(spans_csv(store))))
            [line] = [json.loads(x) for x in pearmut_jsonl(store).splitlines()]
        assert answer.detail["scores"] == {"quality": [35]} and answer.response == "annotated"
        walked = TEXT.index(SUGGESTED)
        want = {("dog", dog, dog + 3, "minor", "added"),
                ("quickly", quickly, quickly + 7, "major", "added"),
                ("[missing]", len(TEXT), len(TEXT) + 1, "minor", "added"),
                (SUGGESTED, walked, walked + len(SUGGESTED), "major",
                 "suggested-kept" if phone else "suggested-deleted")}
        assert {(r["text"], r["start_char"], r["end_char"], r["severity"], r["origin"]) for r in rows} == want
        assert {(r["text"], int(r["start"]), int(r["end"]), r["origin"]) for r in csv_rows} == {
            (w[0], w[1], w[2], w[4]) for w in want}
        [(system, annotation)] = line["annotation"][0].items()
        assert system == answer.sources[0] and annotation["score"] == 35
        kept = {(s.start, s.end) for s in (from_pearmut(x) for x in annotation["error_spans"])}
        assert kept == {(w[1], w[2]) for w in want if w[4] != "suggested-deleted"}  # (code points: no --config)
    finally:
        context.close()


DOC = ["The museum opens at nine.", "Opening hours change on Sunday.", "Entry is free for children."]


def test_a_document_mouse_work_across_segments_marks_what_was_meant(start_app, browser, tmp_path) -> None:
    """A three-segment document at 1280 px: a word dragged in segment 1 (its toolbox open under it), then a word
    double-clicked in segment 2 and one marked by two clicks in segment 3 (the text below must not move between
    the two clicks when the first closes the toolbox), and a drag in segment 1 that overshoots past the text's end
    (it ends at the last character, not on the [missing] token): exactly those spans are stored."""
    from playwright.sync_api import expect

    data = tmp_path / "datasets"
    data.mkdir(parents=True)
    item = {"id": "d1", "segments": [{"input": f"Quelle {k}.", "outputs": {"sysA": text, "sysB": text}}
                                     for k, text in enumerate(DOC)]}
    (data / "mt.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(_study(tmp_path / "unused").read_text().replace("prefill = true\n", ""), encoding="utf-8")
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, "spans-document")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        start_session(page, url, "Annotator")
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        boxes = page.get_by_test_id("evalkit-text")
        expect(boxes).to_have_count(3)

        def centre(s: int, i: int) -> dict[str, float]:
            boxes.nth(s).scroll_into_view_if_needed()
            return boxes.nth(s).evaluate(GRAPHEME_CENTRE, i)

        museum = DOC[0].index("museum")
        _drag(page, centre(0, museum), centre(0, museum + 5))
        expect(page.get_by_test_id("evalkit-tools")).to_be_visible()
        hours = centre(1, DOC[1].index("hours") + 2)
        page.mouse.dblclick(hours["x"], hours["y"])
        entry = DOC[2].index("free")
        first = centre(2, entry)
        page.mouse.click(first["x"], first["y"])
        last = centre(2, entry + 3)
        page.mouse.click(last["x"], last["y"])
        nine = DOC[0].index("nine")
        start = centre(0, nine)
        end = boxes.nth(0).bounding_box()
        _drag(page, start, {"x": end["x"] + end["width"] - 5, "y": end["y"] + end["height"] + 60})
        expect(page.get_by_test_id("evalkit-item")).to_have_count(4)
        _shot(page, "document", 1280)
        slider = page.get_by_test_id("evalkit-slider").first
        slider.focus()
        page.keyboard.press("End")
        page.get_by_test_id("evalkit-next").click()
        wait_for_app_run(page)
        expect(page.get_by_text("Thank you")).to_be_visible(timeout=20_000)
        with open_store(database) as store:
            rows = store.spans()
        assert sorted((r["segment"], r["text"]) for r in rows) == [
            (0, "museum"), (0, "nine."), (1, "hours"), (2, "free")]
    finally:
        context.close()
