"""Real browser: an evaluator completes each ready-made error-span study of examples/ against ``streamlit run``, one
way of marking each: ``esa`` at 1280 px with the mouse (drags and the toolbox), ``mqm`` at 1280 px with the keyboard
only (arrows, Shift+arrows, the severity keys; the category by its selects), ``esa-ai`` at 390 px by touch (taps).
The practice questions and the attention check are answered as their checks expect (the spans a check expects
marked, every suggestion of it deleted first, the score in range); every other question gets one error on its first
word. Then the database must hold one answer per planned question, every practice question passed at the first
try, and on every check question exactly the spans marked. Screenshots of every question in test-output/e2e/.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalkit.balance import arrival_of
from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.spans import to_utf16
from evalkit.store import open_store
from evalkit.tasks.spans import segments_of, suggestions
from tests.e2e.conftest import OUT
from tests.e2e.steps import start_session, token_of, wait_for_app_run
from tests.e2e.test_spans_widget import GRAPHEME_CENTRE
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

CASES = [("esa", 1280, "mouse"), ("mqm", 1280, "keyboard"), ("esa-ai", 390, "touch")]

#: the widget's character numbers (graphemes of the box's text, the [missing] token last, as GRAPHEME_CENTRE counts
#: them) of the first and the last character of a UTF-16 range
UNITS = """(box, [start, end]) => {
  const token = box.querySelector('[data-testid=evalkit-missing]');
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let text = '';
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!token || !token.contains(n)) text += n.data;
  const units = [...new Intl.Segmenter(undefined, {granularity: 'grapheme'}).segment(text)]
    .map((g) => [g.index, g.index + g.segment.length]);
  if (token) units.push([text.length, text.length + 1]);
  return [units.findIndex((u) => u[0] === start), units.findIndex((u) => u[1] === end)];
}"""


#: scroll the nearest scrolling ancestor of an element by ``dy`` pixels
SCROLL_BY = """(e, dy) => {
  const up = (n) => n.parentElement || n.getRootNode().host || null;  // (out of the widget's shadow root too)
  let p = up(e);
  while (p && !(p.scrollHeight > p.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(p).overflowY))) {
    p = up(p);
  }
  (p || document.scrollingElement).scrollBy(0, dy);
}"""


def _mark(page: Any, box: Any, start: int, end: int, severity: int, how: str, category: str | None) -> None:
    """Mark UTF-16 units ``start``..``end`` of the text ``box`` the way ``how`` says, with severity key
    ``severity`` (1, 2, 3) and, for MQM, ``category`` ("Top/Sub" or "Top")."""
    first, last = box.evaluate(UNITS, [start, end])
    assert first >= 0 and last >= first, (start, end, first, last)
    tools = page.get_by_test_id("evalkit-tools")
    if how == "keyboard":
        box.focus()
        page.keyboard.press("Home")
        for _ in range(first):
            page.keyboard.press("ArrowRight")
        for _ in range(last - first):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press(str(severity))
    else:
        box.scroll_into_view_if_needed()
        unit = lambda i: box.evaluate(GRAPHEME_CENTRE, i)  # noqa: E731  (its centre, {x, y})
        height = page.viewport_size["height"]
        y = unit(first)["y"]
        if not 80 < y < height - 80:  # a text taller than the screen: its character scrolled to the middle
            box.evaluate(SCROLL_BY, y - height / 2)
        if how == "touch":
            page.touchscreen.tap(**unit(first))
            page.touchscreen.tap(**unit(last))
        else:
            a, b = unit(first), unit(last)
            page.mouse.move(a["x"], a["y"])
            page.mouse.down()
            page.mouse.move(b["x"], b["y"], steps=5)
            page.mouse.up()
            if first == last:  # a drag over one character: a click on it, then the same again
                page.mouse.click(a["x"], a["y"])
        button = tools.get_by_role("button").filter(has_text=f"{severity} ")
        button.first.tap() if how == "touch" else button.first.click()
    if category is not None:
        top, _, sub = category.partition("/")
        tools.get_by_test_id("evalkit-cat").select_option(top)
        if sub:
            tools.get_by_test_id("evalkit-subcat").select_option(sub)
    page.keyboard.press("Escape") if how == "keyboard" else None


def _answer(page: Any, task: Any, q: Any, item: Any, how: str) -> set[tuple[str, int, int, str]]:
    """Answer the question on the page; returns the spans it marked as (system, start, end, severity) in code
    points."""
    segments = segments_of(item)
    boxes = page.get_by_test_id("evalkit-text")
    want = json.loads(q.check.want) if q.check is not None else None
    marked: set[tuple[str, int, int, str]] = set()
    if want is not None:  # a check: its suggestions go first (the spans it expects are marked below)
        for _ in range(20):
            suggested = page.get_by_test_id("evalkit-item").filter(has_text="suggested")
            if not suggested.count():
                break
            delete = suggested.first.get_by_test_id("evalkit-item-del")
            delete.tap() if how == "touch" else delete.click()
    for k, system in enumerate(q.sources):
        if q.media and q.media[k] is not None:  # a medium: its box says it cannot be marked (an item of one segment)
            continue
        for s, segment in enumerate(segments):
            text = segment.outputs[system]
            box = boxes.nth(k * len(segments) + s)
            if want is not None:
                chosen = [(e["start_i"][0], min(len(text) + 1, e["end_i"][1] + 1), e["severity"], e.get("category"))
                          for e in want.get(system, {}).get("error_spans", [])]
            elif s == 0:  # one error on the first word (not over a suggestion)
                word = text.split()[0]
                taken = {c for sug in suggestions(task, segment, system) for c in range(sug.start, sug.end)}
                start = next((i for i in range(len(text)) if not taken & set(range(i, i + len(word)))
                              and text[i:i + 1].strip()), 0)
                chosen = [(start, start + 1, task.severities[0], None)]
            else:
                chosen = []
            for start, end, severity, category in chosen:
                severity = severity or task.severities[0]  # (an expectation may leave the severity open)
                if task.categories is not None and category is None:
                    top = next(iter(task.categories))
                    category = f"{top}/{task.categories[top][0]}" if task.categories[top] else top
                _mark(page, box, to_utf16(text, start), to_utf16(text, end, missing_token=True),
                      task.severities.index(severity) + 1, how, category)
                marked.add((system, start, end, severity))
    for k, system in enumerate(q.sources):
        bounds = (want or {}).get(system, {}).get("score", {}).get(task.scales[0].id)
        value = round(sum(bounds) / 2) if bounds else 70
        slider = page.get_by_test_id("evalkit-slider").nth(k)
        slider.focus()
        page.keyboard.press("Home")
        for _ in range(value):
            page.keyboard.press("ArrowRight")
    return marked


@pytest.mark.parametrize(("name", "width", "how"), CASES, ids=[c[0] for c in CASES])
def test_a_span_example_study_in_the_browser(start_app, browser, tmp_path, name: str, width: int, how: str) -> None:
    from playwright.sync_api import expect

    config = ROOT / "examples" / name / "config.toml"
    database = tmp_path / "responses.sqlite"
    loaded = open_study(config, database=database)
    [task] = loaded.study.tasks
    url = start_app(config, database, f"span-example-{name}")
    context = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844},
                                  has_touch=how == "touch", is_mobile=how == "touch")
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        start_session(page, url, "Annotator")
        token = token_of(page.url)
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        with open_store(database) as store:
            session = store.get_session(token)
        questions = [q for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets,
                                     arrival_of(session.meta)) if q.task == task.id]
        marked = {}
        for n, q in enumerate(questions, start=1):
            expect(page.get_by_text(f"Question {n} of {len(questions)}")).to_be_visible(timeout=20_000)
            expect(page.get_by_test_id("evalkit-spans")).to_be_visible()
            item = loaded.item_sets[task.source.items].by_id(q.review_ids[0])
            marked[q.index] = _answer(page, task, q, item, how)
            OUT.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT / f"span-example-{name}-{n}-{width}.png"), full_page=True)
            page.get_by_test_id("evalkit-next").click()
            asked = page.get_by_test_id("evalkit-summary").filter(has_text="not reviewed yet")
            if asked.is_visible():  # suggestions left as suggested: asked once, sent on the second press
                page.get_by_test_id("evalkit-next").click()
            wait_for_app_run(page)
            assert not page.get_by_text("Not quite").count(), f"question {n}: a practice answer was refused"
        expect(page.get_by_text("Thank you")).to_be_visible(timeout=20_000)
        assert not errors, errors
        with open_store(database) as store:
            answers = {a.question_index: a for a in store.answers(task=task.id)}
            spans = store.spans(task=task.id)
        assert sorted(answers) == [q.index for q in questions]
        for q in questions:
            if q.check is not None:
                assert answers[q.index].check_passed, (name, q.check.id)
                stored = {(r["system"], r["start_char"], r["end_char"], r["severity"]) for r in spans
                          if r["question_index"] == q.index and r["origin"] != "suggested-deleted"}
                assert stored == marked[q.index], (name, q.check.id)
            else:
                assert marked[q.index] <= {(r["system"], r["start_char"], r["end_char"], r["severity"])
                                           for r in spans if r["question_index"] == q.index}
        if task.prefill:  # the suggestions of the other questions were left alone: stored as not reviewed
            assert any(r["origin"] == "suggested-unreviewed" for r in spans)
    finally:
        context.close()
